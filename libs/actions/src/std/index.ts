import { type ActionImplementation } from '../action';
import { asyncNoopAction, echoAction, failAction, noopAction, sleepAction, testDictAction } from './basic';
import { emailAction } from './email';
import { httpAction, mistralHttpAction } from './http';
import { javascriptAction, jsAction } from './javascript';
import { sshActions } from './ssh';

/** Every standard action of DSL-17, one implementation per name of @osc/workflow-domain's STANDARD_ACTIONS. */
export const STANDARD_ACTION_IMPLEMENTATIONS: readonly ActionImplementation[] = [
  noopAction,
  asyncNoopAction,
  echoAction,
  failAction,
  sleepAction,
  testDictAction,
  httpAction,
  mistralHttpAction,
  emailAction,
  javascriptAction,
  jsAction,
  ...sshActions,
];

export {
  evaluateJavaScript,
  JavaScriptError,
  JavaScriptSandbox,
  sharedJavaScriptSandbox,
  type JavaScriptLimits,
} from './javascript-sandbox';
export { type HttpActionResult } from './http';
export { parseSmtpServer } from './email';
