import { applyItemChanges, mergeItemChanges } from './items';
import type { EngineChanges, ExecutionSnapshot } from './model';

/**
 * Rows by id in their first order, a later version replacing an earlier one in place, without a
 * scan of the list per row (a chain of inline rounds merges every round's rows into the changes of
 * all the rounds before).
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
export class MergedChanges {
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
export class AdvancingSnapshot {
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
