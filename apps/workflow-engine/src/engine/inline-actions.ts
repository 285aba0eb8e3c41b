import type { StandardActionRunner } from '@osc/actions';
import type { ActionContext } from '@osc/contracts';
import { AppError } from '@osc/errors';
import { productMetrics } from '@osc/telemetry';
import {
  type Decision,
  type EngineChanges,
  type EngineEffect,
  type EngineEvent,
  type ExecutionSnapshot,
  type WorkflowExecution,
  applyItemChanges,
  mergeItemChanges,
} from '@osc/workflow-domain';

/**
 * Standard actions the engine may complete itself, inside the transaction that started them: they
 * read nothing but their input, touch nothing outside the engine, and finish at once. Every other
 * action (std.http, std.email, std.javascript, std.ssh, std.sleep, ad-hoc actions, …) keeps going
 * through an executor job, claim and result command.
 */
export const SIDE_EFFECT_FREE_ACTIONS: ReadonlySet<string> = new Set(['std.noop', 'std.echo', 'std.fail']);

/** Decide rounds per transaction: bounds a cycle of inline tasks; what is left goes out as jobs. */
export const MAX_INLINE_ROUNDS = 50;

type RunAction = Extract<EngineEffect, { type: 'run-action' }>;

/**
 * Whether `effect` may be completed inline: a side-effect-free standard action, not a with-items
 * item (those go to executors in batches), and `std.echo` only without a `delay`.
 */
export function isInlineAction(effect: EngineEffect): effect is RunAction {
  if (effect.type !== 'run-action' || effect.itemIndex !== null) return false;
  if (!SIDE_EFFECT_FREE_ACTIONS.has(effect.actionName)) return false;
  if (effect.actionName === 'std.echo') {
    const delay = effect.input['delay'];
    if (delay !== undefined && delay !== null && delay !== 0) return false;
  }
  return true;
}

/** Effects that leave the next round's snapshot exact (no sub-execution or parent to look up). */
const CONTINUABLE: ReadonlySet<EngineEffect['type']> = new Set(['run-action', 'notify', 'arm-timer']);

/**
 * Runs one inline action with the executor's outcome rules: an unknown action or invalid input is a
 * fatal task failure (DSL-13.6), an action error an ERROR result.
 */
export async function runInline(runner: StandardActionRunner, ex: WorkflowExecution, e: RunAction): Promise<EngineEvent> {
  const started = process.hrtime.bigint();
  let outcome = 'ERROR';
  try {
    const event = await runInlineAction(runner, ex, e);
    if (event.type === 'action-completed') outcome = event.state;
    return event;
  } finally {
    // Timed like an executor's run (docs/metrics.md, osc_action_duration_seconds).
    productMetrics.actionDuration.labels(e.actionName, outcome).observe(Number(process.hrtime.bigint() - started) / 1e9);
  }
}

async function runInlineAction(runner: StandardActionRunner, ex: WorkflowExecution, e: RunAction): Promise<EngineEvent> {
  const ctx: ActionContext = {
    workflowName: ex.workflowName,
    workflowNamespace: ex.workflowNamespace,
    workflowExecutionId: ex.id,
    rootExecutionId: ex.rootExecutionId,
    taskExecutionId: e.taskExecutionId,
    taskName: e.taskName,
    actionExecutionId: e.actionExecutionId,
    projectId: ex.projectId,
    data: e.taskData,
  };
  const base = { type: 'action-completed', taskExecutionId: e.taskExecutionId, actionExecutionId: e.actionExecutionId } as const;
  try {
    const outcome = await runner.run(e.actionName, e.input, ctx);
    if (outcome.kind === 'success') return { ...base, state: 'SUCCESS', result: outcome.result };
    if (outcome.kind === 'error') return { ...base, state: 'ERROR', error: outcome.error };
    throw new Error(`inline action ${e.actionName} cannot be asynchronous`);
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'not-found' || err.kind === 'invalid')) {
      return { ...base, state: 'ERROR', error: err.message, fatal: { message: err.message } };
    }
    throw err;
  }
}

const upsert = <T extends { id: string }>(rows: T[], row: T): void => {
  const i = rows.findIndex((r) => r.id === row.id);
  if (i >= 0) rows[i] = row;
  else rows.push(row);
};

/** The rows of `b` applied over those of `a`: a row created in `a` and updated in `b` stays created. */
export function mergeChanges(a: EngineChanges, b: EngineChanges): EngineChanges {
  const tasksCreated = [...a.tasksCreated];
  const tasksUpdated = [...a.tasksUpdated];
  for (const t of b.tasksCreated) upsert(tasksCreated, t);
  for (const t of b.tasksUpdated) upsert(tasksCreated.some((c) => c.id === t.id) ? tasksCreated : tasksUpdated, t);
  const actionsCreated = [...a.actionsCreated];
  const actionsUpdated = [...a.actionsUpdated];
  for (const x of b.actionsCreated) upsert(actionsCreated, x);
  for (const x of b.actionsUpdated) upsert(actionsCreated.some((c) => c.id === x.id) ? actionsCreated : actionsUpdated, x);
  const unaccepted = [...(a.actionsUnaccepted ?? []), ...(b.actionsUnaccepted ?? [])];
  const execution = b.execution ?? a.execution;
  return {
    ...(execution ? { execution } : {}),
    tasksCreated,
    tasksUpdated,
    actionsCreated,
    actionsUpdated,
    ...(unaccepted.length ? { actionsUnaccepted: unaccepted } : {}),
    ...mergeItemChanges(a, b),
  };
}

/** The snapshot as it is once `changes` are written (what the next lock and load would return). */
export function advanceSnapshot(s: ExecutionSnapshot, changes: EngineChanges): ExecutionSnapshot {
  const tasks = [...s.tasks];
  for (const t of [...changes.tasksUpdated, ...changes.tasksCreated]) upsert(tasks, t);
  const actions = [...s.actions];
  for (const a of [...changes.actionsUpdated, ...changes.actionsCreated]) upsert(actions, a);
  const items = applyItemChanges(s.items ?? [], changes);
  return { ...s, execution: changes.execution ?? s.execution, tasks, actions, ...(items.length ? { items } : {}) };
}

/**
 * Decides `events`, then keeps completing the side-effect-free actions the decision starts and
 * deciding their results, in memory, until no such action is left (or {@link MAX_INLINE_ROUNDS}):
 * a chain of `std.noop` tasks runs in one transaction. The caller writes the merged changes and the
 * remaining effects together, so each inline action still has its action execution row (created
 * RUNNING and finished in the same commit) and its task its full result. Rounds stop early when a
 * decision has effects whose next snapshot would need the database (sub-workflows, parents), and
 * never run for workflows that read other executions (`tasks()`, `executions()`).
 */
export async function decideInline(
  snapshot: ExecutionSnapshot,
  events: readonly EngineEvent[],
  decideEvents: (s: ExecutionSnapshot, events: readonly EngineEvent[]) => Decision | Promise<Decision>,
  complete: (ex: WorkflowExecution, effect: RunAction) => Promise<EngineEvent>,
  maxRounds = MAX_INLINE_ROUNDS,
): Promise<Decision> {
  let decision = await decideEvents(snapshot, events);
  if (snapshot.world) return decision;
  let changes = decision.changes;
  const commands: EngineEffect[] = [];
  let current = snapshot;
  for (let round = 1; ; round++) {
    const inline = round < maxRounds && decision.commands.every((c) => CONTINUABLE.has(c.type)) ? decision.commands.filter(isInlineAction) : [];
    for (const c of decision.commands) if (!inline.includes(c as RunAction)) commands.push(c);
    if (inline.length === 0) break;
    current = advanceSnapshot(current, decision.changes);
    const ex = current.execution;
    const results: EngineEvent[] = [];
    for (const e of inline) results.push(await complete(ex, e));
    decision = await decideEvents(current, results);
    changes = mergeChanges(changes, decision.changes);
  }
  return { changes, commands };
}
