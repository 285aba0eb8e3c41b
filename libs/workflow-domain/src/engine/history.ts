import { isCompleted } from './states';
import type {
  ActionExecution,
  EngineChanges,
  ExecutionSnapshot,
  TaskExecution,
  WorkflowExecution,
} from './model';

/** What an event of an execution's history is about. */
export type HistorySubject = 'execution' | 'task' | 'action';

/**
 * One entry of an execution's event history (our extension, `GET /v2/executions/{id}/events`): a
 * change of the execution, one of its task executions or one of their action executions, as one
 * engine transaction left it. Several changes of one subject inside a transaction (an inline action
 * created and completed at once) are one entry with the final state.
 */
export interface HistoryEvent {
  readonly subject: HistorySubject;
  /** The workflow execution the subject belongs to (a sub-workflow's own id for its tasks). */
  readonly executionId: string;
  readonly taskExecutionId: string | null;
  readonly actionExecutionId: string | null;
  /** Task name (task events), action name (action events), workflow name (execution events). */
  readonly name: string;
  readonly state: string;
  /** The state before this change; null when the subject was created by it. */
  readonly previousState: string | null;
  readonly stateInfo: string | null;
  /** with-items progress, retry attempt, published variable names, item index, when they apply. */
  readonly details: HistoryDetails;
}

export interface HistoryDetails {
  withItems?: { done: number; total: number };
  retryNo?: number;
  published?: string[];
  itemIndex?: number;
  /** For action events: the task's name. */
  taskName?: string;
}

/**
 * The history entries of one decision (pure): every created subject, and every updated one whose
 * state, state_info, with-items progress, retry attempt or published variables changed, in the order
 * execution, tasks, actions — except that an execution finishing comes last.
 */
export function historyEvents(snapshot: ExecutionSnapshot, changes: EngineChanges): HistoryEvent[] {
  const out: HistoryEvent[] = [];
  const before = snapshot.execution;
  const ex = changes.execution;
  let executionEvent: HistoryEvent | undefined;
  if (ex && (ex.state !== before.state || ex.stateInfo !== before.stateInfo)) {
    executionEvent = executionHistoryEvent(ex, before.state);
    // an execution that finishes does so after what its tasks did in the same decision
    if (!isCompleted(ex.state)) out.push(executionEvent);
  }
  const oldTasks = new Map(snapshot.tasks.map((t) => [t.id, t]));
  for (const t of changes.tasksCreated) out.push(taskEvent(t, undefined));
  for (const t of changes.tasksUpdated) {
    const prev = oldTasks.get(t.id);
    if (prev && !taskChanged(prev, t)) continue;
    out.push(taskEvent(t, prev));
  }
  const oldActions = new Map(snapshot.actions.map((a) => [a.id, a]));
  const taskNames = new Map(
    [...snapshot.tasks, ...changes.tasksCreated, ...changes.tasksUpdated].map((t) => [t.id, t.name]),
  );
  for (const a of changes.actionsCreated) out.push(actionEvent(a, undefined, taskNames));
  for (const a of changes.actionsUpdated) {
    const prev = oldActions.get(a.id);
    if (prev && prev.state === a.state && prev.stateInfo === a.stateInfo) continue;
    out.push(actionEvent(a, prev, taskNames));
  }
  if (executionEvent && isCompleted(executionEvent.state)) out.push(executionEvent);
  return out;
}

function taskChanged(prev: TaskExecution, t: TaskExecution): boolean {
  if (prev.state !== t.state || prev.stateInfo !== t.stateInfo) return true;
  const [p, n] = [taskDetails(prev), taskDetails(t)];
  return (
    p.withItems?.done !== n.withItems?.done ||
    p.retryNo !== n.retryNo ||
    (p.published ?? []).join('\u0000') !== (n.published ?? []).join('\u0000')
  );
}

function taskDetails(t: TaskExecution): HistoryDetails {
  const details: HistoryDetails = {};
  const items = t.runtimeContext.with_items;
  const progress = t.runtimeContext.with_items_progress;
  if (items && typeof items.count === 'number')
    details.withItems = { done: progress?.done ?? 0, total: items.count };
  const retry = t.runtimeContext.retry_task_policy;
  if (retry && typeof retry.retry_no === 'number' && retry.retry_no > 0) details.retryNo = retry.retry_no;
  const published = Object.keys(t.published ?? {});
  if (published.length > 0) details.published = published;
  return details;
}

/** The entry of execution `ex` entering its current state from `previousState` (null: just created). */
export function executionHistoryEvent(ex: WorkflowExecution, previousState: string | null): HistoryEvent {
  return {
    subject: 'execution',
    executionId: ex.id,
    taskExecutionId: null,
    actionExecutionId: null,
    name: ex.workflowName,
    state: ex.state,
    previousState,
    stateInfo: ex.stateInfo,
    details: {},
  };
}

function taskEvent(t: TaskExecution, prev: TaskExecution | undefined): HistoryEvent {
  return {
    subject: 'task',
    executionId: t.executionId,
    taskExecutionId: t.id,
    actionExecutionId: null,
    name: t.name,
    state: t.state,
    previousState: prev?.state ?? null,
    stateInfo: t.stateInfo,
    details: taskDetails(t),
  };
}

function actionEvent(
  a: ActionExecution,
  prev: ActionExecution | undefined,
  taskNames: ReadonlyMap<string, string>,
): HistoryEvent {
  return {
    subject: 'action',
    executionId: a.executionId,
    taskExecutionId: a.taskExecutionId,
    actionExecutionId: a.id,
    name: a.name,
    state: a.state,
    previousState: prev?.state ?? null,
    stateInfo: a.stateInfo,
    details: {
      ...(a.itemIndex !== null ? { itemIndex: a.itemIndex } : {}),
      ...(taskNames.has(a.taskExecutionId) ? { taskName: taskNames.get(a.taskExecutionId) } : {}),
    },
  };
}
