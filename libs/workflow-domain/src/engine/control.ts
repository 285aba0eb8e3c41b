import { checkCompletion, finish, publish } from './completion';
import type { JsonMap, TaskExecution, TaskRuntime } from './model';
import { notify, setExecutionState, setTaskState } from './notify-events';
import { runTask, startTask } from './policies';
import { afterComplete, recheckJoins, startTarget } from './routing';
import { isCompleted } from './states';
import { subUnits, unacceptUnits } from './units';
import { hasItemProgress, requeueItems, resetItems, scheduleItems } from './with-items';
import type { WorkingState } from './working-state';

/**
 * Control of an execution from outside its own flow (DSL-15): pause, resume and cancel (cascading
 * to sub-executions and the parent), rerun and skip of a failed task, a sub-execution rerun.
 */

/**
 * Key of a task's runtime record that marks a rerun or skip accepted by the API and not yet applied:
 * a second request finding it is refused, so two concurrent reruns are never both accepted.
 */
export const CONTROL_REQUEST = 'control_request' satisfies keyof TaskRuntime;

function runningSubExecutions(ws: WorkingState): string[] {
  const out: string[] = [];
  for (const t of ws.tasks) {
    if (t.type !== 'WORKFLOW') continue;
    for (const u of subUnits(t)) {
      const st = ws.subStates.get(u.id) ?? u.state;
      if (!isCompleted(st)) out.push(u.id);
    }
  }
  return out;
}

/**
 * Pauses the running sub-executions and marks their WORKFLOW tasks PAUSED (Mistral: a task whose
 * sub-workflow is paused is PAUSED; resume sets it RUNNING again).
 */
function pauseSubExecutions(ws: WorkingState): void {
  for (const t of ws.tasks) {
    if (
      t.type === 'WORKFLOW' &&
      t.state === 'RUNNING' &&
      subUnits(t).some((u) => !isCompleted(ws.subStates.get(u.id) ?? u.state))
    ) {
      setTaskState(ws, t, 'PAUSED', null);
    }
  }
  for (const id of runningSubExecutions(ws))
    ws.effects.push({ type: 'control-sub-execution', subExecutionId: id, command: 'pause' });
}

/**
 * The execution becomes PAUSED with `message`, its sub-executions and its parent are paused (a
 * pause request, a pause-before policy, a `pause` command).
 */
export function enterPause(ws: WorkingState, message: string | null): void {
  setExecutionState(ws, 'PAUSED', message);
  pauseSubExecutions(ws);
  controlParent(ws, 'pause');
}

export function pause(ws: WorkingState, message: string | null): void {
  if (ws.ex.state !== 'RUNNING') return;
  enterPause(ws, message);
}

/**
 * Pause and resume of a sub-execution cascade up to its parent task (and from there to the root),
 * delivered to the parent as a state change of the task's "action" (the sub-execution): a parent
 * already in that state ignores it, so a cascade down does not bounce back.
 */
function controlParent(ws: WorkingState, command: 'pause' | 'resume'): void {
  if (ws.ex.taskExecutionId) {
    ws.effects.push({
      type: 'control-parent-execution',
      taskExecutionId: ws.ex.taskExecutionId,
      subExecutionId: ws.ex.id,
      command,
    });
  }
}

const isRunning = (ws: WorkingState): boolean => ws.ex.state === 'RUNNING';

export function resume(ws: WorkingState, env: JsonMap | undefined): void {
  const ex = ws.ex;
  if (ex.state !== 'PAUSED' && ex.state !== 'IDLE') return;
  if (env) ex.params = { ...ex.params, env: { ...ws.env, ...env } };
  setExecutionState(ws, 'RUNNING', null);
  controlParent(ws, 'resume');
  for (const id of runningSubExecutions(ws))
    ws.effects.push({ type: 'control-sub-execution', subExecutionId: id, command: 'resume' });
  const deferred = ex.deferred;
  ex.deferred = [];
  // completed tasks whose routing waited for resume
  const unprocessed = ws.tasks
    .filter((t) => isCompleted(t.state) && !t.processed)
    .sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0));
  for (const t of unprocessed) {
    if (!isRunning(ws)) return;
    afterComplete(ws, t);
  }
  for (const d of deferred) {
    if (!isRunning(ws)) return;
    const from = ws.task(d.fromTaskExecutionId);
    if (from) startTarget(ws, d.target, d.event, from);
  }
  for (const t of ws.tasks.filter((x) => x.state === 'IDLE')) {
    if (!isRunning(ws)) return;
    runTask(ws, t);
  }
  for (const t of ws.tasks.filter((x) => x.state === 'PAUSED')) setTaskState(ws, t, 'RUNNING', null);
  // with-items tasks whose waiting items were held back by the pause
  for (const t of ws.tasks.filter((x) => x.state === 'RUNNING' && hasItemProgress(x))) {
    if (!isRunning(ws)) return;
    scheduleItems(ws, t);
  }
  recheckJoins(ws);
  checkCompletion(ws);
}

export function cancel(ws: WorkingState, message: string | null): void {
  if (isCompleted(ws.ex.state)) return;
  for (const id of runningSubExecutions(ws)) {
    ws.effects.push({ type: 'control-sub-execution', subExecutionId: id, command: 'cancel', message });
  }
  finish(ws, 'CANCELLED', message);
}

/** Sets a completed execution RUNNING again and tells its parent, up to the root (DSL-15.6). */
function reopenExecution(ws: WorkingState): void {
  const ex = ws.ex;
  if (ex.state === 'RUNNING') return;
  ex.output = {};
  setExecutionState(ws, 'RUNNING', null);
  if (ex.taskExecutionId) {
    ws.effects.push({
      type: 'notify-parent-rerun',
      taskExecutionId: ex.taskExecutionId,
      subExecutionId: ex.id,
    });
  }
}

/** A sub-execution of one of our tasks was rerun: the task waits for it again. */
export function onSubWorkflowRerun(ws: WorkingState, taskId: string, subId: string): void {
  const task = ws.task(taskId);
  if (!task) return;
  const units = subUnits(task);
  const unit = units.find((u) => u.id === subId);
  if (!unit || !isCompleted(unit.state)) return;
  unit.state = 'RUNNING';
  unit.result = null;
  unit.stateInfo = null;
  unit.accepted = true;
  task.runtimeContext.sub_executions = units;
  ws.subStates.set(subId, 'RUNNING');
  if (isCompleted(task.state)) {
    task.state = 'RUNNING';
    task.stateInfo = null;
    task.finishedAt = null;
    task.processed = false;
    task.errorHandled = false;
    task.nextTasks = [];
    task.result = null;
    notify(ws, 'TASK_RERUN', task.id);
  }
  ws.touch(task);
  reopenExecution(ws);
}

/**
 * The API claims a task for one rerun or skip at a time (`runtime_context.control_request`, set
 * under the execution's row lock); the command that carries the claim releases it, applied or not.
 */
function releaseControlRequest(ws: WorkingState, task: TaskExecution | undefined): void {
  if (!task || !(CONTROL_REQUEST in task.runtimeContext)) return;
  delete task.runtimeContext.control_request;
  ws.touch(task);
}

/**
 * Whether a rerun or skip request still holds the task's claim. Commands arrive at least once: a
 * request delivered again after the first delivery applied it (and released the claim) must not
 * rerun the task a second time when it has failed again meanwhile. Requests without an id (none
 * come from the API) are applied as they come.
 */
export function claimedBy(ws: WorkingState, taskId: string, requestId: string | undefined): boolean {
  if (requestId === undefined) return true;
  return ws.task(taskId)?.runtimeContext.control_request === requestId;
}

export function rerunTask(ws: WorkingState, taskId: string, reset: boolean, env: JsonMap | undefined): void {
  const task = ws.task(taskId);
  releaseControlRequest(ws, task);
  if (!task || task.state !== 'ERROR' || ws.ex.state === 'PAUSED') return;
  if (env) ws.ex.params = { ...ws.ex.params, env: { ...ws.env, ...env } };
  reopenExecution(ws);
  if (task.runtimeContext.with_items === undefined) unacceptUnits(ws, task, false);
  else if (reset) {
    unacceptUnits(ws, task, false);
    resetItems(task);
  } else requeueItems(ws, task, false);
  delete task.runtimeContext.retry_task_policy;
  task.errorHandled = false;
  task.nextTasks = [];
  task.processed = false;
  task.published = {};
  task.result = null;
  ws.touch(task);
  startTask(ws, task);
}

export function skipTask(ws: WorkingState, taskId: string): void {
  const task = ws.task(taskId);
  releaseControlRequest(ws, task);
  if (!task || task.state !== 'ERROR') return;
  if (ws.ex.state === 'ERROR') reopenExecution(ws);
  setTaskState(ws, task, 'SKIPPED', 'Task was skipped.');
  task.errorHandled = false;
  publish(ws, task, 'SKIPPED');
  task.processed = false;
  afterComplete(ws, task);
}
