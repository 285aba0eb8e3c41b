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
} from './execution-rows';
export {
  lockSnapshot,
  readSnapshot,
  lockSnapshots,
  lockSnapshotsAtOnce,
  type NamedActions,
  SpecCache,
} from './execution-snapshots';
export {
  BUILT_PLANS,
  GENERIC_PLANS,
  type PreparedStatement,
  type StatementBatchRunner,
  executeStatement,
  prepareStatements,
} from './prepared-statements';
export {
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
  type ExecutionEventsAppend,
  appendExecutionEvents,
  appendExecutionEventsOfMany,
  executionEventsAppendCall,
  deleteExecutionHistory,
  listExecutionEvents,
  listExecutionEventsOfTrees,
  listExecutionStateChanges,
  listExecutionStateChangesOfProjects,
  settledStreamPosition,
  setExecutionHistoryWrites,
  localExecutionEvents,
} from './execution-events';
export {
  type RunRow,
  type RunOwner,
  findWorkflowExecutionRow,
  findTaskExecutionRow,
  findActionExecutionRow,
  readActionExecutionRow,
  readWorkflowExecutionState,
  lockWorkflowExecutionState,
  readTaskExecutionProgress,
  readActionExecutionState,
  claimTaskForControl,
  deleteActionExecution,
  setWorkflowExecutionDescription,
  setWorkflowExecutionParams,
  deleteWorkflowExecutionTree,
  listSubExecutionsOfTask,
  listWorkflowTasksOfExecution,
  listTasksOfExecution,
  listActionsOfTask,
  listSuccessfulRunTimes,
  listenForExecutionEvents,
  registerStreamListener,
  stillRunning,
  unregisterStreamListener,
  stopListening,
} from './run-reads';
