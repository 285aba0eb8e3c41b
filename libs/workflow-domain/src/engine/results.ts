import { pyStr } from '../dsl/python-text';
import { completeTask } from './completion';
import { pause, resume } from './control';
import type { EngineEvent, TaskExecution } from './model';
import { setTaskState } from './notify-events';
import { isCompleted } from './states';
import { subUnits } from './units';
import { onItemCompleted } from './with-items';
import { FatalTaskError, type WorkingState, truncate } from './working-state';

/**
 * Results of a task's units: an action execution or a sub-workflow completed, failed to start, or
 * was paused or resumed. Only the accepted unit of a running task moves the task on.
 */

type EventOf<T extends EngineEvent['type']> = Extract<EngineEvent, { type: T }>;

export function onActionCompleted(ws: WorkingState, ev: EventOf<'action-completed'>): void {
  const action = ws.actionsById.get(ev.actionExecutionId);
  if (!action || isCompleted(action.state)) return;
  action.state = ev.state;
  action.output = {
    result: ev.state === 'SUCCESS' ? (ev.result ?? null) : ev.state === 'ERROR' ? (ev.error ?? null) : null,
  };
  action.stateInfo = ev.state === 'ERROR' ? truncate(ev.fatal?.message ?? pyStr(ev.error ?? null)) : null;
  ws.touchAction(action);
  const task = ws.task(action.taskExecutionId);
  if (!task || !action.accepted || task.state !== 'RUNNING') return;
  if (ev.fatal) throw new FatalTaskError(task, ws.runFailure(task, ev.fatal.message));
  if (action.itemIndex !== null)
    return onItemCompleted(ws, task, action.itemIndex, ev.state, action.output['result']);
  task.result = action.output['result'];
  completeTask(ws, task, ev.state, ev.state === 'ERROR' ? pyStr(ev.error ?? null) : null);
}

/**
 * An async action, or a sub-execution of a WORKFLOW task (`actionExecutionId` is then the
 * sub-execution's id), was paused or resumed. Mistral: the task takes that state; a pause pauses
 * this execution (and so its other sub-executions); a resume resumes it once no task is PAUSED.
 */
export function onActionStateChanged(ws: WorkingState, ev: EventOf<'action-state-changed'>): void {
  const action = ws.actionsById.get(ev.actionExecutionId);
  let task: TaskExecution | undefined;
  if (action) {
    if (isCompleted(action.state) || action.state === ev.state) return;
    action.state = ev.state;
    ws.touchAction(action);
    task = ws.task(action.taskExecutionId);
  } else {
    task = ws.task(ev.taskExecutionId);
    const unit = task ? subUnits(task).find((u) => u.id === ev.actionExecutionId) : undefined;
    if (!task || !unit || isCompleted(unit.state) || isCompleted(ws.subStates.get(unit.id) ?? unit.state))
      return;
  }
  if (ev.state === 'PAUSED') {
    if (task && task.state === 'RUNNING') setTaskState(ws, task, 'PAUSED', null);
    if (ws.ex.state === 'RUNNING') pause(ws, null);
  } else {
    if (task && task.state === 'PAUSED') setTaskState(ws, task, 'RUNNING', null);
    if (ws.ex.state === 'PAUSED' && !ws.tasks.some((t) => t.state === 'PAUSED')) resume(ws, undefined);
  }
}

export function onSubWorkflowCompleted(ws: WorkingState, ev: EventOf<'sub-workflow-completed'>): void {
  ws.subStates.set(ev.subExecutionId, ev.state);
  const task = ws.task(ev.taskExecutionId);
  if (!task) return;
  const units = subUnits(task);
  const unit = units.find((u) => u.id === ev.subExecutionId);
  if (!unit || isCompleted(unit.state)) return;
  unit.state = ev.state;
  unit.result = ev.state === 'SUCCESS' ? (ev.output ?? {}) : null;
  unit.stateInfo = ev.stateInfo ?? null;
  task.runtimeContext.sub_executions = units;
  ws.touch(task);
  // a task PAUSED with its paused sub-execution takes the result too (a paused child may be cancelled or failed)
  if (!unit.accepted || (task.state !== 'RUNNING' && task.state !== 'PAUSED')) return;
  if (unit.index !== null) return onItemCompleted(ws, task, unit.index, ev.state, unit.result);
  task.result = unit.result;
  completeTask(ws, task, ev.state, ev.state === 'SUCCESS' ? null : (ev.stateInfo ?? null));
}

/** The sub-workflow of a running task could not start: the task fails fatally (DSL-13.6). */
export function onSubWorkflowStartFailed(ws: WorkingState, ev: EventOf<'sub-workflow-start-failed'>): void {
  const task = ws.task(ev.taskExecutionId);
  if (!task || task.state !== 'RUNNING') return;
  throw new FatalTaskError(task, ws.runFailure(task, ev.message));
}
