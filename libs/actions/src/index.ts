export {
  type ActionsConfig,
  type ResolvedActionsConfig,
  type ActionClock,
  type ActionScope,
  type ActionImplementation,
  ActionException,
  ActionAbortedError,
  resolveActionsConfig,
  systemClock,
} from './action';
export { invalidInputMessage, validateActionInput } from './action-input';
export {
  StandardActionRunner,
  runAction,
  actionExceptionText,
  actionNotFoundMessage,
  type ActionRunnerOptions,
} from './action-runner';
export {
  STANDARD_ACTION_IMPLEMENTATIONS,
  evaluateJavaScript,
  JavaScriptError,
  JavaScriptSandbox,
  sharedJavaScriptSandbox,
  type JavaScriptLimits,
  type HttpActionResult,
} from './std';
export {
  AD_HOC_ACTION_CLASS,
  planAdHocCall,
  transformAdHocOutcome,
  runAdHocAction,
  type AdHocActionDefinition,
  type AdHocActionResolver,
  type AdHocDependencies,
  type AdHocCall,
} from './ad-hoc';
export { EgressPolicy } from './std/egress';
export {
  DYNAMIC_ACTION_CLASS,
  type DynamicActionDefinition,
  checkCodeSource,
  codeSourceFileName,
  dynamicActionImplementation,
} from './dynamic-action';
