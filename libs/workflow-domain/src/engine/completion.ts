import { pyStr } from '../dsl/python-text';
import { resolvePublish, type CompletedTaskState } from '../dsl/spec-queries';
import type { JsonMap, TaskExecution } from './model';
import { setExecutionState, setTaskState } from './notify-events';
import { isCompleted } from './states';
import { subUnits } from './units';
import {
  FatalTaskError,
  INCOMPLETE_TASK_STATES,
  type WorkingState,
  errorMessage,
  outbound,
  truncate,
} from './working-state';

/**
 * Completion: of a task (its result published, then its after-completion policies) and of the
 * execution (DSL-13: when every task is done, with which state, output and failure summary).
 */

/** A task reached a completed state: publish, after-policies, then route (DSL-14.2). */
export function completeTask(
  ws: WorkingState,
  task: TaskExecution,
  state: 'SUCCESS' | 'ERROR' | 'CANCELLED',
  stateInfo: string | null,
): void {
  if (task.runtimeContext.timer?.kind === 'timeout') delete task.runtimeContext.timer;
  setTaskState(ws, task, state, stateInfo);
  if (state !== 'CANCELLED') publish(ws, task, state);
  ws.flow.afterPolicies(task, 'wait-after');
}

export function publish(ws: WorkingState, task: TaskExecution, state: CompletedTaskState): void {
  const spec = ws.spec(task);
  const scopes = resolvePublish(spec, state);
  task.published = {};
  task.publishedGlobal = {};
  if (scopes) {
    const data = ws.taskData(task);
    try {
      if (scopes.branch) task.published = ws.eval(scopes.branch, data, task) as JsonMap;
      if (scopes.global) {
        task.publishedGlobal = ws.eval(scopes.global, data, task) as JsonMap;
        Object.assign(ws.ex.context, task.publishedGlobal);
        ws.dataVersion++;
      }
    } catch (e) {
      throw new FatalTaskError(task, ws.completionFailure(task, errorMessage(e)));
    }
  }
  if (spec.keepResult === false) {
    task.runtimeContext.result_cleared = true;
    task.result = null;
  }
  ws.touch(task);
}

/** DSL-13.2. */
export function checkCompletion(ws: WorkingState): void {
  if (ws.ex.state !== 'RUNNING') return;
  if (ws.ex.deferred.length > 0) return;
  if (ws.tasks.some((t) => INCOMPLETE_TASK_STATES.has(t.state) || !t.processed)) return;
  const cancelled = ws.tasks.filter((t) => t.state === 'CANCELLED');
  if (cancelled.length) {
    finish(ws, 'CANCELLED', `Cancelled tasks: ${cancelled.map((t) => t.name).join(', ')}`);
    return;
  }
  const failed = unhandledErrors(ws);
  if (failed.length === 0) finish(ws, 'SUCCESS', null);
  else finish(ws, 'ERROR', failureSummary(ws, failed));
}

function unhandledErrors(ws: WorkingState): TaskExecution[] {
  const reverse = ws.ex.spec.type === 'reverse';
  const latest = new Map<string, TaskExecution>();
  for (const t of ws.tasks) if (t.state === 'ERROR' && (reverse || !t.errorHandled)) latest.set(t.id, t);
  return [...latest.values()];
}

/** DSL-13.3 (with DSL-18.5). */
function failureSummary(ws: WorkingState, failed: TaskExecution[]): string {
  const sorted = [...failed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let s = `Failure caused by error in tasks: ${sorted.map((t) => t.name).join(', ')}\n`;
  for (const t of sorted) {
    s += `\n  ${t.name} [task_ex_id=${t.id}] -> ${t.stateInfo ?? 'None'}\n`;
    if (t.type === 'ACTION') {
      ws.actions
        .filter((a) => a.taskExecutionId === t.id)
        .forEach((a, i) => {
          if (a.state === 'ERROR')
            s += `    [action_ex_id=${a.id}, idx=${a.ordinal ?? i}]: ${a.stateInfo ?? pyStr(a.output?.['result'] ?? null)}\n`;
        });
    } else {
      subUnits(t).forEach((u, i) => {
        if (u.state === 'ERROR') s += `    [wf_ex_id=${u.id}, idx=${i}]: ${u.stateInfo ?? 'None'}\n`;
      });
    }
  }
  return s;
}

/** Final context (DSL-13.4): published branch data of tasks that ended a branch. */
function finalContext(ws: WorkingState): JsonMap {
  if (ws.ex.spec.type === 'reverse') {
    const target = String(ws.ex.params['task_name'] ?? '');
    const t = [...ws.tasks].reverse().find((x) => x.name === target);
    return t ? outbound(t) : {};
  }
  const out: JsonMap = {};
  const ends = ws.tasks
    .filter((t) => isCompleted(t.state) && t.nextTasks.length === 0)
    .sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0));
  for (const t of ends) Object.assign(out, outbound(t));
  return out;
}

/** Ends the execution (DSL-13.4, 15.4, 15.5): output, event, parent notification. */
export function finish(
  ws: WorkingState,
  state: 'SUCCESS' | 'ERROR' | 'CANCELLED',
  stateInfo: string | null,
): void {
  const ex = ws.ex;
  const spec = ex.spec;
  const fc = finalContext(ws);
  const data = { ...ex.input, ...ex.context, ...fc, __env: ws.env };
  if (state === 'SUCCESS') {
    if (spec.output) {
      try {
        ex.output = ws.eval(spec.output, data) as JsonMap;
      } catch (e) {
        state = 'ERROR';
        stateInfo = `Failed to evaluate expression in output [error=${errorMessage(e)}, wf=${ex.workflowName}]`;
      }
    } else {
      ex.output = fc;
    }
  }
  if (state === 'ERROR') {
    let extra: JsonMap = {};
    if (spec.outputOnError) {
      try {
        extra = ws.eval(spec.outputOnError, data) as JsonMap;
      } catch {
        extra = {};
      }
    }
    ex.output = { result: truncate(stateInfo), ...extra };
  }
  if (state === 'CANCELLED') ex.output = { result: stateInfo };
  ex.deferred = [];
  setExecutionState(ws, state, stateInfo);
  if (ex.taskExecutionId) {
    ws.effects.push({
      type: 'notify-parent',
      taskExecutionId: ex.taskExecutionId,
      subExecutionId: ex.id,
      state,
      output: ex.output,
      stateInfo: ex.stateInfo,
    });
  }
}

/**
 * The reconciler found the task stuck (issue #15): it fails as a fatal task error (DSL-13.6), unless
 * it finished or changed since the reconciler looked.
 */
export function failStuckTask(
  ws: WorkingState,
  taskId: string,
  updatedAt: string | undefined,
  message: string | null,
): void {
  const task = ws.task(taskId);
  if (!task || isCompleted(task.state) || isCompleted(ws.ex.state)) return;
  if (updatedAt !== undefined && (task.updatedAt ?? task.createdAt).getTime() !== Date.parse(updatedAt))
    return;
  failFatally(ws, task, message ?? 'reconciler: the task was stuck');
}

/** DSL-13.6: the task fails and the execution is forced to ERROR with the same text. */
export function failFatally(ws: WorkingState, task: TaskExecution, stateInfo: string): void {
  if (!isCompleted(task.state) || task.state !== 'ERROR') setTaskState(ws, task, 'ERROR', stateInfo);
  task.stateInfo = truncate(stateInfo);
  task.processed = true;
  delete task.runtimeContext.timer;
  ws.touch(task);
  if (!isCompleted(ws.ex.state)) finish(ws, 'ERROR', stateInfo);
}
