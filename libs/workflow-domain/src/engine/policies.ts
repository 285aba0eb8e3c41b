import { pyRepr } from '../dsl/python-text';
import { isTruthy } from './expression-context';
import type { JsonMap, TaskExecution, TaskTimer } from './model';
import { notify, setTaskState, taskStartEvent } from './notify-events';
import type { TaskState } from './states';
import { startUnit, unacceptUnits } from './units';
import { requeueItems, startWithItems } from './with-items';
import { completeTask } from './completion';
import { FatalTaskError, type WorkingState, errorMessage } from './working-state';

/**
 * Task policies (DSL-6) around a task's run: before it starts (pause-before, wait-before), while it
 * runs (timeout, with-items concurrency), after it completes (wait-after, fail-on, retry), and the
 * timers they arm.
 */

/** When a policy is evaluated: its failure is a failure to run the task, or to handle its completion. */
type PolicyPhase = 'start' | 'completion';

/**
 * A policy's value for the task (DSL-6.1: an expression over the task's data). A failed evaluation,
 * or a number policy that is not a finite number ≥ 0, fails the task fatally (DSL-13.6), with the
 * text of the phase it was evaluated in.
 */
function evaluatePolicy(
  ws: WorkingState,
  task: TaskExecution,
  phase: PolicyPhase,
  policy: string,
  value: unknown,
  data: JsonMap,
  type: 'number' | 'boolean',
): unknown {
  let v: unknown;
  try {
    v = ws.eval(value, data, task);
  } catch (e) {
    throw policyFailure(ws, task, phase, errorMessage(e));
  }
  if (type === 'number' && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
    throw policyFailure(ws, task, phase, `Invalid data type in ${policy}: ${pyRepr(v)}`);
  }
  return v;
}

const policyFailure = (ws: WorkingState, task: TaskExecution, phase: PolicyPhase, message: string) =>
  new FatalTaskError(
    task,
    phase === 'start' ? ws.runFailure(task, message) : ws.completionFailure(task, message),
  );

function armTimer(
  ws: WorkingState,
  task: TaskExecution,
  kind: TaskTimer['kind'],
  delaySeconds: number,
  thenState?: TaskState,
): void {
  const timer: TaskTimer = {
    id: ws.newId(),
    kind,
    dueAt: new Date(ws.now.getTime() + delaySeconds * 1000).toISOString(),
    ...(thenState ? { thenState } : {}),
  };
  task.runtimeContext.timer = timer;
  ws.touch(task);
  ws.effects.push({
    type: 'arm-timer',
    taskExecutionId: task.id,
    timerId: timer.id,
    kind,
    delayMs: Math.round(delaySeconds * 1000),
  });
}

/** Before-start policies (DSL-6.2), then start. Tasks created while paused wait IDLE for resume. */
export function runTask(ws: WorkingState, task: TaskExecution): void {
  if (ws.ex.state !== 'RUNNING') return;
  const spec = ws.spec(task);
  const rt = task.runtimeContext;
  const data = ws.taskData(task);
  if (spec.policies.pauseBefore !== undefined && !rt.pause_before_done) {
    const pause = evaluatePolicy(
      ws,
      task,
      'start',
      'PauseBeforePolicy',
      spec.policies.pauseBefore,
      data,
      'boolean',
    );
    rt.pause_before_done = true;
    ws.touch(task);
    if (isTruthy(pause)) {
      task.stateInfo = "Set by 'pause-before' policy";
      ws.flow.enterPause(null);
      return;
    }
  }
  if (spec.policies.waitBefore !== undefined && !rt.wait_before_done) {
    const delay = Number(
      evaluatePolicy(ws, task, 'start', 'WaitBeforePolicy', spec.policies.waitBefore, data, 'number'),
    );
    rt.wait_before_done = true;
    if (delay > 0) {
      setTaskState(ws, task, 'DELAYED', `Delayed by 'wait-before' policy [delay=${delay}]`);
      armTimer(ws, task, 'wait-before', delay);
      return;
    }
  }
  startTask(ws, task);
}

/** RUNNING, timeout armed, input evaluated, the action(s) or sub-workflow(s) started (DSL-14.1). */
export function startTask(ws: WorkingState, task: TaskExecution): void {
  const spec = ws.spec(task);
  const rerun = task.state === 'ERROR';
  const firstStart = task.startedAt === null;
  if (firstStart) task.startedAt = ws.now;
  const before = task.state;
  task.state = 'RUNNING';
  task.stateInfo = null;
  task.finishedAt = null;
  task.processed = false;
  ws.touch(task);
  const ev = taskStartEvent(rerun, firstStart, before);
  if (ev) notify(ws, ev, task.id);
  const data = ws.taskData(task);
  delete task.runtimeContext.timer;
  let timeoutSeconds: number | undefined;
  if (spec.policies.timeout !== undefined) {
    const t = Number(
      evaluatePolicy(ws, task, 'start', 'TimeoutPolicy', spec.policies.timeout, data, 'number'),
    );
    if (t > 0) {
      timeoutSeconds = t;
      armTimer(ws, task, 'timeout', t);
    }
  }

  if (spec.withItems.length > 0) {
    const concurrency = spec.policies.concurrency;
    return startWithItems(ws, task, spec, data, timeoutSeconds, () =>
      concurrency === undefined
        ? 0
        : Number(evaluatePolicy(ws, task, 'start', 'ConcurrencyPolicy', concurrency, data, 'number')),
    );
  }
  delete task.runtimeContext.with_items;
  startUnit(ws, task, spec, {}, null, timeoutSeconds);
}

/** After-completion policies in order wait-after, fail-on, retry (DSL-6.2), then routing. */
export function afterPolicies(ws: WorkingState, task: TaskExecution, from: 'wait-after' | 'fail-on'): void {
  const spec = ws.spec(task);
  const state = task.state as 'SUCCESS' | 'ERROR' | 'CANCELLED' | 'SKIPPED';
  if (state !== 'CANCELLED' && state !== 'SKIPPED') {
    const data = ws.outboundData(task);
    if (from === 'wait-after' && spec.policies.waitAfter !== undefined) {
      const delay = Number(
        evaluatePolicy(ws, task, 'completion', 'WaitAfterPolicy', spec.policies.waitAfter, data, 'number'),
      );
      if (delay > 0) {
        task.runtimeContext.wait_after_info = task.stateInfo;
        setTaskState(ws, task, 'DELAYED', `Delayed by 'wait-after' policy [delay=${delay}]`);
        task.finishedAt = null;
        armTimer(ws, task, 'wait-after', delay, state);
        return;
      }
    }
    if (state === 'SUCCESS' && spec.policies.failOn !== undefined) {
      const fail = evaluatePolicy(
        ws,
        task,
        'completion',
        'FailOnPolicy',
        spec.policies.failOn,
        data,
        'boolean',
      );
      if (isTruthy(fail)) setTaskState(ws, task, 'ERROR', "Failed by 'fail-on' policy");
    }
    if (spec.policies.retry && shouldRetry(ws, task, data)) return;
  }
  ws.flow.afterComplete(task);
}

/** DSL-6.8: when the retry policy asks for another attempt, arm it and return true. */
function shouldRetry(ws: WorkingState, task: TaskExecution, data: JsonMap): boolean {
  const spec = ws.spec(task);
  const retry = spec.policies.retry!;
  const evaluate = (value: unknown, type: 'number' | 'boolean') =>
    evaluatePolicy(ws, task, 'completion', 'RetryPolicy', value, data, type);
  const count = Number(evaluate(retry.count, 'number'));
  const delay = Number(evaluate(retry.delay, 'number'));
  const policy = task.runtimeContext.retry_task_policy ?? { retry_no: 0 };
  if (policy.retry_no >= count) return false;
  if (task.state === 'ERROR' && retry.breakOn !== undefined && isTruthy(evaluate(retry.breakOn, 'boolean'))) {
    return false;
  }
  if (task.state === 'SUCCESS' && retry.continueOn === undefined) return false;
  if (retry.continueOn !== undefined && !isTruthy(evaluate(retry.continueOn, 'boolean'))) {
    return false;
  }
  // with-items: only the items without a SUCCESS run again (all of them when none failed)
  if (spec.withItems.length > 0) requeueItems(ws, task, task.state === 'SUCCESS');
  else unacceptUnits(ws, task, false);
  task.runtimeContext.retry_task_policy = { retry_no: policy.retry_no + 1 };
  const join = spec.join !== undefined;
  setTaskState(ws, task, join ? 'WAITING' : 'DELAYED', `Delayed by 'retry' policy [delay=${delay}]`);
  task.finishedAt = null;
  armTimer(ws, task, 'retry', delay);
  return true;
}

/** A policy timer fired: the delayed start, retry or completion goes on, or the task times out. */
export function onTimer(ws: WorkingState, taskId: string, timerId: string): void {
  const task = ws.task(taskId);
  const timer = task?.runtimeContext.timer;
  if (!task || !timer || timer.id !== timerId) return;
  delete task.runtimeContext.timer;
  ws.touch(task);
  switch (timer.kind) {
    case 'wait-before':
      if (task.state === 'DELAYED') startTask(ws, task);
      return;
    case 'retry':
      if (task.state === 'DELAYED' || task.state === 'WAITING') {
        if (ws.ex.state !== 'RUNNING') {
          setTaskState(ws, task, 'IDLE', null);
          return;
        }
        startTask(ws, task);
      }
      return;
    case 'wait-after': {
      if (task.state !== 'DELAYED') return;
      const then = timer.thenState ?? 'SUCCESS';
      setTaskState(ws, task, then, task.runtimeContext.wait_after_info ?? null);
      delete task.runtimeContext.wait_after_info;
      afterPolicies(ws, task, 'fail-on');
      return;
    }
    case 'timeout': {
      if (task.state !== 'RUNNING') return;
      const seconds = task.runtimeContext.with_items_timeout ?? timeoutSeconds(ws, task);
      if (task.type === 'ACTION') unacceptUnits(ws, task, false, true);
      completeTask(ws, task, 'ERROR', `Task timed out [timeout(s)=${String(seconds)}].`);
      return;
    }
  }
}

/** The task's timeout as shown when it fires: evaluated again, or as written when that fails. */
function timeoutSeconds(ws: WorkingState, task: TaskExecution): unknown {
  try {
    return ws.eval(ws.spec(task).policies.timeout, ws.taskData(task), task);
  } catch {
    return ws.spec(task).policies.timeout;
  }
}
