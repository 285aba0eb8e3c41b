import { productMetrics } from '@osc/telemetry';
import type { HistoryEvent, WorkflowExecution } from '@osc/workflow-domain';
import { localExecutionEvents } from '@osc/workflow-persistence';

/** Where the story of executions is told: one info line per execution and task state change. */
export type EngineLog = (fields: Record<string, unknown>, message: string) => void;

/** Executions that got history entries in a transaction, and those entries. */
export type TouchedExecutions = Map<WorkflowExecution, HistoryEvent[]>;

/** Tells this process's event streams (embedded mode, or an API beside the engine) that history grew. */
export function announceHistory(
  touched: ReadonlyMap<WorkflowExecution, HistoryEvent[]>,
  log: EngineLog | undefined,
): void {
  for (const [ex, history] of touched) {
    localExecutionEvents.emit('events', {
      projectId: ex.projectId,
      rootExecutionId: ex.rootExecutionId ?? ex.id,
    });
    for (const e of history) {
      if (e.state !== e.previousState)
        productMetrics.transitions.labels(e.subject, e.previousState ?? 'NONE', e.state).inc();
    }
    if (!log) continue;
    for (const e of history) {
      if (e.subject === 'action' || e.state === e.previousState) continue;
      const ids = {
        executionId: e.executionId,
        rootExecutionId: ex.rootExecutionId ?? ex.id,
        projectId: ex.projectId,
      };
      if (e.subject === 'execution') {
        log(
          {
            ...ids,
            workflow: e.name,
            state: e.state,
            previousState: e.previousState,
            stateInfo: e.stateInfo ?? undefined,
          },
          `execution ${e.state}`,
        );
      } else {
        log(
          {
            ...ids,
            taskExecutionId: e.taskExecutionId,
            task: e.name,
            state: e.state,
            previousState: e.previousState,
            ...(e.details.retryNo ? { retryNo: e.details.retryNo } : {}),
            stateInfo: e.stateInfo ?? undefined,
          },
          `task ${e.state}`,
        );
      }
    }
  }
}
