export * from './states';
export * from './model';
export { decide, decideBatch, STATE_INFO_LIMIT, CONTROL_REQUEST } from './decide';
export { formatTimestamp, isTruthy, buildHost, taskView, usesQueryFunctions } from './expression-context';
export { EngineSimulator, defaultActionScript, type ActionScript } from './simulator';
export {
  newExecution,
  checkWorkflowInput,
  splitSubWorkflowInput,
  executionPublishedGlobal,
  type NewExecutionArgs,
} from './new-execution';
export * from './history';
