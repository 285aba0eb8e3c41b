import { pyRepr, pyStr } from '../dsl/python-text';
import type { Transition, TransitionEvent } from '../dsl/model';
import { checkCompletion, finish, publish } from './completion';
import { isTruthy } from './expression-context';
import type { JsonMap, TaskExecution, TransitionEventName, WorkflowExecution } from './model';
import { notify, setTaskState } from './notify-events';
import { afterPolicies, runTask } from './policies';
import {
  FatalTaskError,
  INCOMPLETE_TASK_STATES,
  type WorkingState,
  errorMessage,
  outbound,
} from './working-state';

/**
 * Routing: the start tasks of an execution, and where a completed task leads — its transitions
 * (on-success, on-error, on-complete, on-skip, DSL-4.6) and their engine commands, joins (DSL-4.8,
 * DSL-4.9), and the prerequisites of a reverse workflow (DSL-5).
 */

/** Starts the execution: its variables, then its start tasks (DSL-4.5, DSL-5.2). */
export function startExecution(ws: WorkingState): void {
  const ex = ws.ex;
  if (ex.state !== 'RUNNING' || '__execution' in ex.context || ws.tasks.length > 0) return;
  ex.context = { __execution: { id: ex.id }, ...ex.context };
  const spec = ex.spec;
  if (Object.keys(spec.vars).length > 0) {
    try {
      const vars = ws.eval(spec.vars, { ...ex.input, ...ex.context, __env: ws.env }) as JsonMap;
      Object.assign(ex.context, vars);
      ws.dataVersion++;
      ex.varNames = Object.keys(spec.vars);
    } catch (e) {
      finish(
        ws,
        'ERROR',
        `Failed to evaluate workflow vars [error=${errorMessage(e)}, wf=${ex.workflowName}]`,
      );
      return;
    }
  }
  notify(ws, 'WORKFLOW_LAUNCHED');
  if (spec.type === 'direct') {
    for (const name of spec.startTasks) runTask(ws, ws.createTask(name, {}, []));
  } else {
    for (const name of reverseReady(ws)) runTask(ws, ws.createTask(name, reverseInContext(ws, name), []));
  }
  checkCompletion(ws);
}

/** Routes a completed task unless the execution is paused (then on resume, DSL-14.2). */
export function afterComplete(ws: WorkingState, task: TaskExecution): void {
  if (ws.ex.state !== 'RUNNING') return;
  if (ws.ex.spec.type === 'direct') routeDirect(ws, task);
  else routeReverse(ws, task);
  task.processed = true;
  ws.touch(task);
  recheckJoins(ws);
  checkCompletion(ws);
}

interface Target {
  item: Transition;
  event: TransitionEventName;
  params: JsonMap;
}

function collectTargets(ws: WorkingState, task: TaskExecution): Target[] {
  const spec = ws.spec(task);
  const events: TransitionEvent[] = [];
  if (task.state === 'ERROR') events.push('on-error');
  if (task.state === 'SKIPPED') events.push(spec.transitions['on-skip'].length ? 'on-skip' : 'on-success');
  if (task.state === 'SUCCESS') events.push('on-success');
  if (task.state === 'SUCCESS' || task.state === 'ERROR') events.push('on-complete');
  const data = ws.outboundData(task);
  const out: Target[] = [];
  for (const event of events) {
    for (const item of spec.transitions[event]) {
      try {
        if (item.condition !== undefined && !isTruthy(ws.eval(item.condition, data, task))) continue;
        const params = item.kind === 'command' ? (ws.eval(item.params, data, task) as JsonMap) : {};
        out.push({ item, event: task.state === 'SKIPPED' ? 'on-skip' : event, params });
      } catch (e) {
        throw new FatalTaskError(task, ws.completionFailure(task, errorMessage(e)));
      }
    }
  }
  return out;
}

function routeDirect(ws: WorkingState, task: TaskExecution): void {
  const collected = collectTargets(ws, task);
  task.errorHandled = task.state === 'ERROR' && collected.some((c) => c.event === 'on-error');
  const items = collected.filter((c) => !(c.item.kind === 'command' && c.item.target === 'noop'));
  const next: [string, TransitionEventName][] = [];
  const first = items[0];
  if (
    first &&
    first.item.kind === 'command' &&
    (first.item.target === 'succeed' || first.item.target === 'fail')
  ) {
    task.nextTasks = [];
    executeCommand(ws, first.item.target, first.params, task, []);
    return;
  }
  const cmdIndex = items.findIndex((c) => c.item.kind === 'command');
  const before = cmdIndex < 0 ? items : items.slice(0, cmdIndex);
  for (const c of before) next.push([c.item.target, c.event]);
  task.nextTasks = next;
  ws.touch(task);
  const cmd = cmdIndex < 0 ? undefined : items[cmdIndex]!;
  const after = cmdIndex < 0 ? [] : items.slice(cmdIndex + 1).filter((c) => c.item.kind === 'task');
  for (const c of before) startTarget(ws, c.item.target, c.event, task);
  if (cmd) {
    if (cmd.item.target === 'pause') {
      for (const c of after) task.nextTasks.push([c.item.target, c.event]);
      executeCommand(
        ws,
        'pause',
        cmd.params,
        task,
        after.map((c) => ({ target: c.item.target, event: c.event, fromTaskExecutionId: task.id })),
      );
    } else {
      executeCommand(ws, cmd.item.target, cmd.params, task, []);
    }
  }
}

/** The engine commands of a transition (DSL-4.7): succeed, fail, pause (its later targets deferred). */
function executeCommand(
  ws: WorkingState,
  command: string,
  params: JsonMap,
  task: TaskExecution,
  deferred: WorkflowExecution['deferred'],
): void {
  const msg = params['msg'] === undefined || params['msg'] === null ? null : pyStr(params['msg']);
  task.processed = true;
  ws.touch(task);
  if (command === 'succeed') finish(ws, 'SUCCESS', msg);
  else if (command === 'fail') finish(ws, 'ERROR', msg);
  else if (command === 'pause') {
    ws.ex.deferred = [...ws.ex.deferred, ...deferred];
    ws.flow.enterPause(msg);
  }
}

/** Starts the task `target` reached from `from` (DSL-4.6, join DSL-4.8). */
export function startTarget(
  ws: WorkingState,
  target: string,
  event: TransitionEventName,
  from: TaskExecution,
): void {
  const spec = ws.spec(target);
  const trigger = { task_id: from.id, event };
  if (spec.join !== undefined && spec.join !== 0) {
    // One join execution takes one arrival per inbound task: a later arrival from a task that has
    // not arrived yet joins the existing execution (a no-op once it ran, as for `join: 1`); a new
    // execution is made only when every existing one already has this inbound task (loops).
    const arrivedFrom = (t: TaskExecution) =>
      (t.runtimeContext.triggered_by ?? []).some((x) => ws.task(x.task_id)?.name === from.name);
    let join = ws.tasks.find((t) => t.name === target && !arrivedFrom(t));
    if (!join) join = ws.createTask(target, {}, [], 'WAITING');
    const triggered = join.runtimeContext.triggered_by ?? [];
    triggered.push(trigger);
    join.runtimeContext.triggered_by = triggered;
    ws.touch(join);
    return;
  }
  runTask(ws, ws.createTask(target, outbound(from), [trigger]));
}

/** Join readiness (DSL-4.9) for every waiting join task. */
export function recheckJoins(ws: WorkingState): void {
  for (;;) {
    let progressed = false;
    for (const join of ws.tasks.filter((t) => t.state === 'WAITING' && !t.runtimeContext.timer)) {
      const spec = ws.spec(join);
      if (spec.join === undefined) continue;
      const inbound = ws.ex.spec.inboundTasks[join.name] ?? [];
      const triggered = join.runtimeContext.triggered_by ?? [];
      const arrivedTasks = triggered.map((t) => ws.task(t.task_id)).filter((t): t is TaskExecution => !!t);
      const arrived = new Set(arrivedTasks.map((t) => t.name));
      const live = liveTaskNames(ws, join);
      const pending = inbound.filter((n) => !arrived.has(n) && live.has(n));
      const dead = inbound.filter((n) => !arrived.has(n) && !live.has(n));
      const need = spec.join === 'all' ? inbound.length : spec.join;
      if (arrived.size >= need) {
        join.inContext = Object.assign(
          {},
          ...[...arrivedTasks]
            .sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0))
            .map(outbound),
        );
        join.stateInfo = null;
        ws.touch(join);
        runTask(ws, join);
        progressed = true;
      } else if (dead.length > inbound.length - need) {
        join.result = [];
        setTaskState(ws, join, 'ERROR', `Failed by tasks: ${pyRepr(dead)}`);
        publish(ws, join, 'ERROR');
        afterPolicies(ws, join, 'wait-after');
        progressed = true;
      } else {
        const info = `Blocked by tasks: ${pyRepr(pending)}`;
        if (join.stateInfo !== info) {
          join.stateInfo = info;
          ws.touch(join);
        }
      }
      if (progressed) break;
    }
    if (!progressed || ws.ex.state !== 'RUNNING') return;
  }
}

/** Task names that may still run: active tasks and everything reachable from them (except through `exclude`). */
function liveTaskNames(ws: WorkingState, exclude: TaskExecution): Set<string> {
  const active = new Set<string>();
  for (const t of ws.tasks) {
    if (t.id === exclude.id) continue;
    if (INCOMPLETE_TASK_STATES.has(t.state) || !t.processed) active.add(t.name);
  }
  for (const d of ws.ex.deferred) active.add(d.target);
  const live = new Set<string>();
  const stack = [...active];
  while (stack.length) {
    const n = stack.pop()!;
    if (live.has(n)) continue;
    live.add(n);
    if (n === exclude.name) continue;
    const s = ws.ex.spec.tasks.find((t) => t.name === n);
    if (!s) continue;
    for (const ev of ['on-success', 'on-error', 'on-complete', 'on-skip'] as const) {
      for (const tr of s.transitions[ev]) if (tr.kind === 'task') stack.push(tr.target);
    }
  }
  return live;
}

// ---------------------------------------------------------------- reverse workflows

function reverseNeeded(ws: WorkingState): Set<string> {
  const target = String(ws.ex.params['task_name'] ?? '');
  const needed = new Set<string>();
  const stack = [target];
  while (stack.length) {
    const n = stack.pop()!;
    if (needed.has(n)) continue;
    const s = ws.ex.spec.tasks.find((t) => t.name === n);
    if (!s) continue;
    needed.add(n);
    stack.push(...s.requires);
  }
  return needed;
}

/**
 * Needed tasks not yet started whose prerequisites all have a SUCCESS execution (DSL-5.2); a
 * prerequisite skipped by hand (DSL-15.7) counts as done, so skipping it lets its dependants run.
 */
function reverseReady(ws: WorkingState): string[] {
  const ok = new Set(
    ws.tasks.filter((t) => t.state === 'SUCCESS' || t.state === 'SKIPPED').map((t) => t.name),
  );
  const started = new Set(ws.tasks.map((t) => t.name));
  return [...reverseNeeded(ws)].filter((n) => !started.has(n) && ws.spec(n).requires.every((r) => ok.has(r)));
}

function reverseInContext(ws: WorkingState, name: string): JsonMap {
  const out: JsonMap = {};
  for (const r of ws.spec(name).requires) {
    const t = [...ws.tasks]
      .reverse()
      .find((x) => x.name === r && (x.state === 'SUCCESS' || x.state === 'SKIPPED'));
    if (t) Object.assign(out, outbound(t));
  }
  return out;
}

function routeReverse(ws: WorkingState, task: TaskExecution): void {
  task.nextTasks = [];
  if (task.state !== 'SUCCESS' && task.state !== 'SKIPPED') return;
  for (const name of reverseReady(ws)) {
    if (ws.spec(name).requires.includes(task.name)) task.nextTasks.push([name, 'on-success']);
    runTask(ws, ws.createTask(name, reverseInContext(ws, name), [{ task_id: task.id, event: 'on-success' }]));
  }
}
