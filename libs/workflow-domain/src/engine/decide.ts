import { failFatally, failStuckTask, finish } from './completion';
import {
  cancel,
  claimedBy,
  enterPause,
  onSubWorkflowRerun,
  pause,
  rerunTask,
  resume,
  skipTask,
} from './control';
import type { Decision, EngineEvent, ExecutionSnapshot } from './model';
import { afterPolicies, onTimer } from './policies';
import {
  onActionCompleted,
  onActionStateChanged,
  onSubWorkflowCompleted,
  onSubWorkflowStartFailed,
} from './results';
import { afterComplete, startExecution } from './routing';
import { isCompleted, isValidExecutionTransition } from './states';
import { addLoad, itemChanges, onStartItems } from './with-items';
import { FatalTaskError, WorkingState, sameJson } from './working-state';

export { CONTROL_REQUEST } from './control';
export { STATE_INFO_LIMIT } from './working-state';

/**
 * The engine's pure core: given the state of one execution and one event, returns the rows to write
 * and the effects to send. It never performs I/O; `now` and `newId` are its only sources of time and
 * identity, so a test feeding the same events gets the same decisions.
 *
 * Idempotency: an event whose effect is already visible in the snapshot (an action that is no longer
 * RUNNING, a timer that is no longer armed, a start of a started execution) yields no changes.
 */
export function decide(
  snapshot: ExecutionSnapshot,
  event: EngineEvent,
  now: Date,
  newId: () => string,
  options: DecideOptions = {},
): Decision {
  return decideBatch(snapshot, [event], now, newId, options);
}

/** How a decision goes about its work (the same outcome either way). */
export interface DecideOptions {
  /**
   * Items a decision starts per with-items task: the first decision this many, a later one at
   * most as many as the attempt started before it; for the rest the decision sends a
   * `start-items` effect, whose event starts the next ones. 0 or absent: every item the
   * concurrency lets start, at once (Mistral). The engine uses `ITEMS_STARTED_PER_DECISION`.
   */
  itemsPerDecision?: number;
}

/**
 * Several events of one execution in order, as one decision: the same result as feeding them one by
 * one to {@link decide} and merging the changes, without copying the snapshot per event (a with-items
 * task of 10,000 items would otherwise cost 10,000 × 10,000 row copies).
 */
export function decideBatch(
  snapshot: ExecutionSnapshot,
  events: readonly EngineEvent[],
  now: Date,
  newId: () => string,
  options: DecideOptions = {},
): Decision {
  const ws: WorkingState = new WorkingState(
    snapshot,
    now,
    newId,
    {
      afterPolicies: (task, from) => afterPolicies(ws, task, from),
      afterComplete: (task) => afterComplete(ws, task),
      enterPause: (message) => enterPause(ws, message),
    },
    options.itemsPerDecision ?? 0,
  );
  for (const load of snapshot.items ?? []) addLoad(ws, load);
  for (const e of events) {
    if ('taskExecutionId' in e && e.taskExecutionId)
      ws.eventsPerTask.set(e.taskExecutionId, (ws.eventsPerTask.get(e.taskExecutionId) ?? 0) + 1);
  }
  for (const event of events) handle(ws, event);
  return decision(ws);
}

/** One event; a fatal task error (DSL-13.6) fails the task and the execution and ends the event. */
function handle(ws: WorkingState, event: EngineEvent): void {
  try {
    dispatch(ws, event);
  } catch (e) {
    if (!(e instanceof FatalTaskError)) throw e;
    failFatally(ws, e.task, e.stateInfo);
  }
}

function dispatch(ws: WorkingState, event: EngineEvent): void {
  switch (event.type) {
    case 'start':
      return startExecution(ws);
    case 'action-completed':
      return onActionCompleted(ws, event);
    case 'action-state-changed':
      return onActionStateChanged(ws, event);
    case 'sub-workflow-completed':
      return onSubWorkflowCompleted(ws, event);
    case 'sub-workflow-start-failed':
      return onSubWorkflowStartFailed(ws, event);
    case 'sub-workflow-rerun':
      return onSubWorkflowRerun(ws, event.taskExecutionId, event.subExecutionId);
    case 'pause':
      return pause(ws, event.message ?? null);
    case 'resume':
      return resume(ws, event.env);
    case 'cancel':
      return cancel(ws, event.message ?? null);
    case 'force-state':
      if (event.taskExecutionId !== undefined)
        return failStuckTask(ws, event.taskExecutionId, event.taskUpdatedAt, event.message ?? null);
      if (isCompleted(ws.ex.state) || !isValidExecutionTransition(ws.ex.state, event.state)) return;
      return finish(ws, event.state, event.message ?? null);
    case 'rerun-task':
      if (!claimedBy(ws, event.taskExecutionId, event.requestId)) return;
      return rerunTask(ws, event.taskExecutionId, event.reset, event.env);
    case 'skip-task':
      if (!claimedBy(ws, event.taskExecutionId, event.requestId)) return;
      return skipTask(ws, event.taskExecutionId);
    case 'timer-fired':
      return onTimer(ws, event.taskExecutionId, event.timerId);
    case 'start-items':
      return onStartItems(ws, event.taskExecutionId);
  }
}

/** The rows the decision changed and the effects it emitted. */
function decision(ws: WorkingState): Decision {
  // the spec and the input never change (shared, see WorkingState)
  const exChanged = !sameJson(
    { ...ws.ex, spec: null, input: null },
    { ...ws.initialEx, spec: null, input: null },
  );
  if (exChanged) ws.ex.updatedAt = ws.now;
  return {
    changes: {
      ...(exChanged ? { execution: ws.ex } : {}),
      tasksCreated: ws.tasks.filter((t) => ws.createdTasks.has(t.id)),
      tasksUpdated: ws.tasks.filter((t) => ws.touchedTasks.has(t.id) && !ws.createdTasks.has(t.id)),
      actionsCreated: ws.actions.filter((a) => ws.createdActions.has(a.id)),
      actionsUpdated: ws.actions.filter((a) => ws.touchedActions.has(a.id) && !ws.createdActions.has(a.id)),
      ...(ws.unaccepted.length ? { actionsUnaccepted: ws.unaccepted } : {}),
      ...itemChanges(ws),
    },
    commands: ws.effects,
  };
}
