export * from './states';
export * from './model';
export { decide, decideBatch, type DecideOptions, STATE_INFO_LIMIT, CONTROL_REQUEST } from './decide';
export { mergeChanges, advanceSnapshot } from './merged-changes';
export {
  decideInline,
  isInlineAction,
  SIDE_EFFECT_FREE_ACTIONS,
  MAX_INLINE_ROUNDS,
  type RunAction,
} from './inline-decision';
export { formatTimestamp, isTruthy, buildHost, taskView, usesQueryFunctions } from './expression-context';
export { applyItemChanges, mergeItemChanges } from './items';
export { taskNotifyEvent, taskStartEvent, workflowNotifyEvent } from './notify-events';
export {
  expressionScope,
  evaluatePlayground,
  type ExpressionScope,
  type PlaygroundOutcome,
} from './playground';
export { publicRuntimeContext } from './runtime-view';
export { EngineSimulator, defaultActionScript, type ActionScript } from './simulator';
export {
  newExecution,
  checkWorkflowInput,
  splitSubWorkflowInput,
  executionPublishedGlobal,
  type NewExecutionArgs,
} from './new-execution';
export {
  EXECUTOR_LOST,
  executorLostMessage,
  judgeClaimedAction,
  judgeStuckTask,
  judgeIdleExecution,
  type ReconcileBounds,
  type ClaimedAction,
  type LostActionDecision,
  type TaskActionGroup,
  type TaskSubExecution,
  type TaskFacts,
  type StuckTaskDecision,
  type IdleExecutionFacts,
  type IdleExecutionDecision,
} from './reconciliation';
export * from './history';
export { ITEMS_STARTED_PER_DECISION } from './with-items';
