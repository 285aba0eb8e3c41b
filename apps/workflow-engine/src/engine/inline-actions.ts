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
export async function runInline(
  runner: StandardActionRunner,
  ex: WorkflowExecution,
  e: RunAction,
): Promise<EngineEvent> {
  const started = process.hrtime.bigint();
  let outcome = 'ERROR';
  try {
    const event = await runInlineAction(runner, ex, e);
    if (event.type === 'action-completed') outcome = event.state;
    return event;
  } finally {
    // Timed like an executor's run (docs/metrics.md, osc_action_duration_seconds).
    productMetrics.actionDuration
      .labels(e.actionName, outcome)
      .observe(Number(process.hrtime.bigint() - started) / 1e9);
  }
}

async function runInlineAction(
  runner: StandardActionRunner,
  ex: WorkflowExecution,
  e: RunAction,
): Promise<EngineEvent> {
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
  const base = {
    type: 'action-completed',
    taskExecutionId: e.taskExecutionId,
    actionExecutionId: e.actionExecutionId,
  } as const;
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

/**
 * The changes of successive rounds merged as they come (one transaction writes them all): the rows of
 * a later round replace those of an earlier one, a row created in one round and updated in a later
 * one stays created. Kept by id, so a chain of rounds costs each round its own rows, not a copy of
 * all the rows before it.
 */
class MergedChanges {
  private readonly tasksCreated: RowsById<EngineChanges['tasksCreated'][number]>;
  private readonly tasksUpdated: RowsById<EngineChanges['tasksUpdated'][number]>;
  private readonly actionsCreated: RowsById<EngineChanges['actionsCreated'][number]>;
  private readonly actionsUpdated: RowsById<EngineChanges['actionsUpdated'][number]>;
  private readonly unaccepted: NonNullable<EngineChanges['actionsUnaccepted']>;
  private execution: EngineChanges['execution'];
  private items: EngineChanges;

  constructor(first: EngineChanges) {
    this.tasksCreated = new RowsById([...first.tasksCreated]);
    this.tasksUpdated = new RowsById([...first.tasksUpdated]);
    this.actionsCreated = new RowsById([...first.actionsCreated]);
    this.actionsUpdated = new RowsById([...first.actionsUpdated]);
    this.unaccepted = [...(first.actionsUnaccepted ?? [])];
    this.execution = first.execution;
    this.items = {
      tasksCreated: [],
      tasksUpdated: [],
      actionsCreated: [],
      actionsUpdated: [],
      ...mergeItemChanges(first, NO_CHANGES),
    };
  }

  add(b: EngineChanges): void {
    for (const t of b.tasksCreated) this.tasksCreated.upsert(t);
    for (const t of b.tasksUpdated)
      (this.tasksCreated.has(t.id) ? this.tasksCreated : this.tasksUpdated).upsert(t);
    for (const x of b.actionsCreated) this.actionsCreated.upsert(x);
    for (const x of b.actionsUpdated)
      (this.actionsCreated.has(x.id) ? this.actionsCreated : this.actionsUpdated).upsert(x);
    this.unaccepted.push(...(b.actionsUnaccepted ?? []));
    this.execution = b.execution ?? this.execution;
    if (b.itemsDeleted?.length || b.itemsCreated?.length || b.itemsUpdated?.length) {
      this.items = {
        ...this.items,
        itemsDeleted: undefined,
        itemsCreated: undefined,
        itemsUpdated: undefined,
        ...mergeItemChanges(this.items, b),
      };
    }
  }

  changes(): EngineChanges {
    return {
      ...(this.execution ? { execution: this.execution } : {}),
      tasksCreated: [...this.tasksCreated.rows],
      tasksUpdated: [...this.tasksUpdated.rows],
      actionsCreated: [...this.actionsCreated.rows],
      actionsUpdated: [...this.actionsUpdated.rows],
      ...(this.unaccepted.length ? { actionsUnaccepted: [...this.unaccepted] } : {}),
      ...mergeItemChanges(this.items, NO_CHANGES),
    };
  }
}

const NO_CHANGES: EngineChanges = {
  tasksCreated: [],
  tasksUpdated: [],
  actionsCreated: [],
  actionsUpdated: [],
};

/** The rows of `b` applied over those of `a`: a row created in `a` and updated in `b` stays created. */
export function mergeChanges(a: EngineChanges, b: EngineChanges): EngineChanges {
  const merged = new MergedChanges(a);
  merged.add(b);
  return merged.changes();
}

/** The snapshot as it is once `changes` are written (what the next lock and load would return). */
export function advanceSnapshot(s: ExecutionSnapshot, changes: EngineChanges): ExecutionSnapshot {
  return new AdvancingSnapshot(s).advance(changes);
}

/**
 * {@link advanceSnapshot} round after round: the task and action lists are copied once and then
 * updated in place by each round's rows (a snapshot it returned is current only until the next
 * `advance`; the snapshot it started from is never changed).
 */
class AdvancingSnapshot {
  private readonly tasks: RowsById<ExecutionSnapshot['tasks'][number]>;
  private readonly actions: RowsById<ExecutionSnapshot['actions'][number]>;
  constructor(private current: ExecutionSnapshot) {
    this.tasks = new RowsById([...current.tasks]);
    this.actions = new RowsById([...current.actions]);
  }
  advance(changes: EngineChanges): ExecutionSnapshot {
    for (const t of changes.tasksUpdated) this.tasks.upsert(t);
    for (const t of changes.tasksCreated) this.tasks.upsert(t);
    for (const a of changes.actionsUpdated) this.actions.upsert(a);
    for (const a of changes.actionsCreated) this.actions.upsert(a);
    const items = applyItemChanges(this.current.items ?? [], changes);
    const { items: _, ...rest } = this.current;
    this.current = {
      ...rest,
      execution: changes.execution ?? this.current.execution,
      tasks: this.tasks.rows,
      actions: this.actions.rows,
      ...(items.length ? { items } : {}),
    };
    return this.current;
  }
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
  const first = decision.changes;
  let merged: MergedChanges | undefined;
  const commands: EngineEffect[] = [];
  const advancing = new AdvancingSnapshot(snapshot);
  for (let round = 1; ; round++) {
    const inline =
      round < maxRounds && decision.commands.every((c) => CONTINUABLE.has(c.type))
        ? decision.commands.filter(isInlineAction)
        : [];
    for (const c of decision.commands) if (!inline.includes(c as RunAction)) commands.push(c);
    if (inline.length === 0) break;
    const current = advancing.advance(decision.changes);
    const ex = current.execution;
    const results: EngineEvent[] = [];
    for (const e of inline) results.push(await complete(ex, e));
    decision = await decideEvents(current, results);
    (merged ??= new MergedChanges(first)).add(decision.changes);
  }
  return { changes: merged ? merged.changes() : first, commands };
}
