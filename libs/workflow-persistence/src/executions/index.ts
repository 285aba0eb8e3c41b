export {
  CreateExecutions1763950000000,
  CreateTaskExecutionItems1765200000000,
  executionMigrations,
} from './executions.migration';
export {
  type NewStandaloneAction,
  type StandaloneOutcome,
  insertStandaloneAction,
  completeStandaloneAction,
  setStandaloneActionState,
  sweepTransientActions,
} from './standalone-actions';
export { workflowExecutionsSchema } from './executions.schema';
export { failExecutionRow } from './execution-failure';
export {
  type SqlRunner as ExecutionSqlRunner,
  type ExecutionExtras,
  toWorkflowExecution,
  toTaskExecution,
  toActionExecution,
  insertExecution,
  insertExecutionReturning,
  type AlongsideInsert,
  lockSnapshot,
  readSnapshot,
  lockSnapshots,
  SpecCache,
  applyChanges,
  applyChangesOfMany,
  type DecisionRows,
  loadTaskItems,
  findExecutionIdOfTask,
} from './execution-store';
export {
  type ExpirationBatch,
  type ExpirationCutoff,
  type ExpirationSettings,
  EXPIRABLE_STATES,
  expireExecutionsBatch,
} from './expiration';
export {
  EXECUTION_EVENTS_CHANNEL,
  type ExecutionEventSignal,
  type StoredExecutionEvent,
  type StoredExecutionStateChange,
  appendExecutionEvents,
  appendExecutionEventsOfMany,
  deleteExecutionHistory,
  listExecutionEvents,
  listExecutionEventsOfTrees,
  listExecutionStateChanges,
  listExecutionStateChangesOfProjects,
  settledStreamPosition,
  setExecutionHistoryWrites,
  localExecutionEvents,
} from './execution-events';
