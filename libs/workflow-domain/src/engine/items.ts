import type { EngineChanges, LoadedItems, TaskItem } from './model';

/**
 * The item loads of a snapshot as they are once `changes` are written: what loading them again
 * would return. A task whose rows were deleted and written again is wholly known from the changes;
 * an update reaches the rows a load holds; an item set back to wait (state null) that a partial load
 * does not hold invalidates that load (it would no longer list every waiting item of its range).
 */
export function applyItemChanges(loads: readonly LoadedItems[], changes: EngineChanges): LoadedItems[] {
  const deleted = new Set(changes.itemsDeleted ?? []);
  const created = new Map<string, TaskItem[]>();
  for (const id of deleted) created.set(id, []);
  for (const r of changes.itemsCreated ?? []) {
    let rows = created.get(r.taskExecutionId);
    if (!rows) created.set(r.taskExecutionId, (rows = []));
    rows.push(r);
  }
  const updates = new Map<string, Map<number, Omit<TaskItem, 'vars'>>>();
  for (const u of changes.itemsUpdated ?? []) {
    let m = updates.get(u.taskExecutionId);
    if (!m) updates.set(u.taskExecutionId, (m = new Map()));
    m.set(u.index, u);
  }
  const out: LoadedItems[] = [];
  for (const load of loads) {
    if (created.has(load.taskExecutionId)) continue;
    const m = updates.get(load.taskExecutionId);
    if (!m) {
      out.push(load);
      continue;
    }
    const byIndex = new Map(load.rows.map((r) => [r.index, r]));
    let valid = true;
    for (const u of m.values()) {
      const row = byIndex.get(u.index);
      if (row) byIndex.set(u.index, { ...row, state: u.state, result: u.result });
      else if (load.count !== 'all' && u.state === null && u.index >= load.from) valid = false;
    }
    if (valid) out.push({ ...load, rows: [...byIndex.values()].sort((a, b) => a.index - b.index) });
  }
  for (const [taskExecutionId, rows] of created) {
    const m = updates.get(taskExecutionId);
    const final = m
      ? rows.map((r) =>
          m.has(r.index) ? { ...r, state: m.get(r.index)!.state, result: m.get(r.index)!.result } : r,
        )
      : rows;
    out.push({ taskExecutionId, from: 0, count: 'all', rows: [...final].sort((a, b) => a.index - b.index) });
  }
  return out;
}

/**
 * The item changes of `b` applied over those of `a` (two decisions written as one): a task `b`
 * deletes loses `a`'s rows; otherwise rows are written in order, creations before updates.
 */
export function mergeItemChanges(
  a: EngineChanges,
  b: EngineChanges,
): Pick<EngineChanges, 'itemsDeleted' | 'itemsCreated' | 'itemsUpdated'> {
  const gone = new Set(b.itemsDeleted ?? []);
  const keep = <T extends { taskExecutionId: string }>(rows: readonly T[] | undefined): T[] =>
    (rows ?? []).filter((r) => !gone.has(r.taskExecutionId));
  const itemsDeleted = [...new Set([...(a.itemsDeleted ?? []), ...gone])];
  const itemsCreated = [...keep(a.itemsCreated), ...(b.itemsCreated ?? [])];
  const itemsUpdated = [...keep(a.itemsUpdated), ...(b.itemsUpdated ?? [])];
  return {
    ...(itemsDeleted.length ? { itemsDeleted } : {}),
    ...(itemsCreated.length ? { itemsCreated } : {}),
    ...(itemsUpdated.length ? { itemsUpdated } : {}),
  };
}
