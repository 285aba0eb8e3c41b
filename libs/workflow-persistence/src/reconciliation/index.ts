export {
  AddExecutorHeartbeats1764900000000,
  AllowApiServiceInstances1765100000000,
  IndexUnfinishedTasksByLastChange1766200000000,
  IndexRunningExecutionsByLastChange1766200000001,
} from './reconciliation.migration';
export {
  SERVICE_KINDS,
  type ServiceKind,
  type ServiceInstance,
  heartbeatServiceInstance,
  removeServiceInstance,
  listServiceInstances,
  deleteDeadServiceInstances,
} from './service-instances';
export {
  type LostExecutorAction,
  type ActionGroup,
  type SubExecutionFacts,
  type TaskFactsRow,
  type ExecutionFactsRow,
  tryLockReconciler,
  databaseNow,
  executionsWithPendingOutbox,
  findLostExecutorActions,
  claimUnpickedAction,
  releaseLostClaim,
  lockRunningExecution,
  findStuckTaskCandidates,
  loadTaskFacts,
  findIdleRunningExecutions,
  loadIdleExecutionFacts,
} from './reconciler-scans';
export { ServiceHeartbeat, type HeartbeatLog } from './service-heartbeat';
