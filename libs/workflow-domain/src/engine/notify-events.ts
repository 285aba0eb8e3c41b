import type { NotifyEventName, TaskEventName, WorkflowEventName } from '@osc/contracts';
import type { TaskExecution } from './model';
import { type ExecutionState, type TaskState, isCompleted } from './states';
import { type WorkingState, truncate } from './working-state';

/**
 * Notify events (DSL-16.3): every task and execution state change goes through
 * {@link setTaskState} or {@link setExecutionState}, which emit the event the change stands for when
 * the execution has notify publishers (`params.notify`).
 */
export function notify(ws: WorkingState, event: NotifyEventName, taskExecutionId?: string): void {
  const publishers = ws.ex.params['notify'];
  if (!Array.isArray(publishers) || publishers.length === 0) return;
  const subject = taskExecutionId ? ws.task(taskExecutionId) : undefined;
  ws.effects.push({
    type: 'notify',
    event,
    ...(taskExecutionId ? { taskExecutionId } : {}),
    state: subject ? subject.state : ws.ex.state,
    stateInfo: subject ? subject.stateInfo : ws.ex.stateInfo,
    ...(subject ? { startedAt: subject.startedAt, finishedAt: subject.finishedAt } : {}),
  });
}

export function setTaskState(
  ws: WorkingState,
  task: TaskExecution,
  state: TaskState,
  stateInfo: string | null,
): void {
  const before = task.state;
  task.state = state;
  task.stateInfo = truncate(stateInfo);
  if (isCompleted(state) && !isCompleted(before)) task.finishedAt = ws.now;
  ws.touch(task);
  const event = taskNotifyEvent(before, state, task.startedAt !== null);
  if (event) notify(ws, event, task.id);
}

export function setExecutionState(ws: WorkingState, state: ExecutionState, stateInfo: string | null): void {
  const before = ws.ex.state;
  ws.ex.state = state;
  ws.ex.stateInfo = truncate(stateInfo);
  const event = workflowNotifyEvent(before, state);
  if (event) notify(ws, event);
}

/**
 * DSL-16.3: the event of a task set RUNNING by a start — a rerun, a first launch (or after a delay),
 * a resume. The single source of the task event mapping, with {@link taskNotifyEvent}.
 */
export const taskStartEvent = (
  rerun: boolean,
  firstStart: boolean,
  before: TaskState,
): TaskEventName | null =>
  rerun
    ? 'TASK_RERUN'
    : firstStart || before === 'DELAYED'
      ? 'TASK_LAUNCHED'
      : before === 'IDLE' || before === 'WAITING' || before === 'PAUSED'
        ? 'TASK_RESUMED'
        : null;

/**
 * DSL-16.3: the event of any other task state change (starts: {@link taskStartEvent}); entering
 * RUNNING again after a start is a resume, entering IDLE, WAITING or DELAYED has no event.
 */
export const taskNotifyEvent = (from: TaskState, to: TaskState, started: boolean): TaskEventName | null => {
  if (from === to) return null;
  switch (to) {
    case 'SUCCESS':
      return 'TASK_SUCCEEDED';
    case 'ERROR':
      return 'TASK_FAILED';
    case 'CANCELLED':
      return 'TASK_CANCELLED';
    case 'SKIPPED':
      return 'TASK_SKIPPED';
    case 'PAUSED':
      return 'TASK_PAUSED';
    case 'RUNNING':
      return started ? 'TASK_RESUMED' : null;
    case 'IDLE':
    case 'WAITING':
    case 'DELAYED':
      return null;
  }
};

/**
 * DSL-16.3: the event of an execution state change (`from` null: a new execution). Entering RUNNING
 * is a launch, except from PAUSED (resume) and ERROR (rerun); entering IDLE has no event.
 */
export const workflowNotifyEvent = (
  from: ExecutionState | null,
  to: ExecutionState,
): WorkflowEventName | null => {
  if (from === to) return null;
  switch (to) {
    case 'RUNNING':
      return from === 'PAUSED'
        ? 'WORKFLOW_RESUMED'
        : from === 'ERROR'
          ? 'WORKFLOW_RERUN'
          : 'WORKFLOW_LAUNCHED';
    case 'PAUSED':
      return 'WORKFLOW_PAUSED';
    case 'SUCCESS':
      return 'WORKFLOW_SUCCEEDED';
    case 'ERROR':
      return 'WORKFLOW_FAILED';
    case 'CANCELLED':
      return 'WORKFLOW_CANCELLED';
    case 'IDLE':
      return null;
  }
};
