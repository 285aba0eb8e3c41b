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

/**
 * Rows by id in their first order, a later version replacing an earlier one in place, without a
 * scan of the list per row (a chain of inline rounds
 * merges every round's rows into the changes of all the rounds before).
 */
class RowsById<T extends { id: string }> {
  readonly byId = new Map<string, number>();
  constructor(readonly rows: T[]) {
    rows.forEach((r, i) => this.byId.set(r.id, i));
  }
  has(id: string): boolean {
    return this.byId.has(id);
  }
  upsert(row: T): void {
    const i = this.byId.get(row.id);
    if (i !== undefined) this.rows[i] = row;
    else this.byId.set(row.id, this.rows.push(row) - 1);
  }
}

/** The rows of `b` applied over those of `a`: a row created in `a` and updated in `b` stays created. */
export function mergeChanges(a: EngineChanges, b: EngineChanges): EngineChanges {
  const tasksCreated = new RowsById([...a.tasksCreated]);
  const tasksUpdated = new RowsById([...a.tasksUpdated]);
  for (const t of b.tasksCreated) tasksCreated.upsert(t);
  for (const t of b.tasksUpdated) (tasksCreated.has(t.id) ? tasksCreated : tasksUpdated).upsert(t);
  const actionsCreated = new RowsById([...a.actionsCreated]);
  const actionsUpdated = new RowsById([...a.actionsUpdated]);
  for (const x of b.actionsCreated) actionsCreated.upsert(x);
  for (const x of b.actionsUpdated) (actionsCreated.has(x.id) ? actionsCreated : actionsUpdated).upsert(x);
  const unaccepted = [...(a.actionsUnaccepted ?? []), ...(b.actionsUnaccepted ?? [])];
  const execution = b.execution ?? a.execution;
  return {
    ...(execution ? { execution } : {}),
    tasksCreated: tasksCreated.rows,
    tasksUpdated: tasksUpdated.rows,
    actionsCreated: actionsCreated.rows,
    actionsUpdated: actionsUpdated.rows,
    ...(unaccepted.length ? { actionsUnaccepted: unaccepted } : {}),
    ...mergeItemChanges(a, b),
  };
}

/** The snapshot as it is once `changes` are written (what the next lock and load would return). */
export function advanceSnapshot(s: ExecutionSnapshot, changes: EngineChanges): ExecutionSnapshot {
  const tasks = new RowsById([...s.tasks]);
  for (const t of changes.tasksUpdated) tasks.upsert(t);
  for (const t of changes.tasksCreated) tasks.upsert(t);
  const actions = new RowsById([...s.actions]);
  for (const a of changes.actionsUpdated) actions.upsert(a);
  for (const a of changes.actionsCreated) actions.upsert(a);
  const items = applyItemChanges(s.items ?? [], changes);
  return { ...s, execution: changes.execution ?? s.execution, tasks: tasks.rows, actions: actions.rows, ...(items.length ? { items } : {}) };
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
