import { pyRepr } from '../dsl/python-text';
import type { TaskSpec } from '../dsl/model';
import { completeTask } from './completion';
import {
  type EngineChanges,
  ItemsNeeded,
  type ItemsRequest,
  type JsonMap,
  type TaskExecution,
  type TaskItem,
  type TaskItemUpdate,
  type WithItemsProgress,
} from './model';
import { startUnit, unacceptUnits } from './units';
import { FatalTaskError, type ItemBook, type WorkingState, errorMessage } from './working-state';

/**
 * with-items (DSL-6.9, DSL-14.8): the list evaluated once into item rows, items started in index
 * order while fewer than the concurrency run, their outcomes counted, the task completed with the
 * results in item order. The task keeps only counters (`with_items`, `with_items_progress`); the
 * rows a decision needs are loaded on demand ({@link ItemsNeeded}).
 */

const newProgress = (): WithItemsProgress => ({ cursor: 0, running: 0, done: 0 });

/**
 * The engine's default `itemsPerDecision` (see {@link DecideOptions}): the first decision of a
 * with-items task starts this many items; each later one may start as many as the attempt started
 * before it (at least this many), so N items start in about log2(N / 1000) + 1 decisions. The items
 * beyond wait for the decision of the `start-items` event the decision sends itself: the
 * transaction that starts a long list commits (and its first runs reach the executors) after a
 * thousand action rows instead of all of them, and the rest start while the first run. Mistral
 * starts every item at once; here they all start within a few transactions, in index order,
 * whatever the items' actions do meanwhile.
 */
export const ITEMS_STARTED_PER_DECISION = 1000;

/** Items this decision may still start for `task` (Infinity without a window). */
function itemStartBudget(ws: WorkingState, task: TaskExecution, p: WithItemsProgress): number {
  if (ws.itemsPerDecision <= 0) return Infinity;
  const started = ws.itemsStarted.get(task.id) ?? 0;
  const before = p.running + p.done - started;
  return Math.max(ws.itemsPerDecision, before) - started;
}

/** Item rows the snapshot loaded for a task. */
export function addLoad(ws: WorkingState, load: ItemsRequest & { rows: readonly TaskItem[] }): void {
  const book = bookOf(ws, load.taskExecutionId);
  for (const r of load.rows) if (!book.rows.has(r.index)) book.rows.set(r.index, { ...r });
  if (load.count === 'all') book.all = true;
  else {
    const last = load.rows[load.rows.length - 1];
    book.windows.push({
      from: load.from,
      to: load.rows.length < load.count || !last ? Infinity : last.index,
    });
  }
}

function bookOf(ws: WorkingState, taskId: string): ItemBook {
  let b = ws.books.get(taskId);
  if (!b)
    ws.books.set(
      taskId,
      (b = { rows: new Map(), all: false, windows: [], created: false, changed: new Set() }),
    );
  return b;
}

/** The list of a with-items task, evaluated now: its rows replace any the task had. */
function createItems(ws: WorkingState, task: TaskExecution, items: JsonMap[]): void {
  if (!ws.createdTasks.has(task.id)) ws.itemsDeleted.add(task.id);
  const book: ItemBook = { rows: new Map(), all: true, windows: [], created: true, changed: new Set() };
  items.forEach((vars, index) =>
    book.rows.set(index, { taskExecutionId: task.id, index, vars, state: null, result: null }),
  );
  ws.books.set(task.id, book);
}

function setItem(
  ws: WorkingState,
  task: TaskExecution,
  index: number,
  state: TaskItem['state'],
  result: unknown,
): void {
  const book = bookOf(ws, task.id);
  const row = book.rows.get(index);
  if (row) {
    row.state = state;
    row.result = result;
  } else book.rows.set(index, { taskExecutionId: task.id, index, vars: {}, state, result });
  book.changed.add(index);
}

/** Every item of the task, in index order (its outcomes: the task's result, the next attempt's items). */
function allItems(ws: WorkingState, task: TaskExecution, count: number): TaskItem[] {
  const book = bookOf(ws, task.id);
  if (!book.all) throw new ItemsNeeded([{ taskExecutionId: task.id, from: 0, count: 'all' }]);
  const out: TaskItem[] = [];
  for (let i = 0; i < count; i++) {
    const row = book.rows.get(i);
    if (!row) throw new Error(`item ${i} of task ${task.name} is missing`);
    out.push(row);
  }
  return out;
}

/**
 * The first item with index ≥ `from` that waits to start, or undefined when none does. Rows this
 * decision does not hold are asked for: `want` items the first time (an upper bound of what the
 * decision can start), every item if that was not enough.
 */
function nextItem(
  ws: WorkingState,
  task: TaskExecution,
  from: number,
  count: number,
  want: () => number,
): TaskItem | undefined {
  const book = bookOf(ws, task.id);
  for (let i = from; i < count; i++) {
    const known = book.all || book.windows.some((w) => w.from <= i && i <= w.to);
    if (!known) {
      throw new ItemsNeeded([
        book.windows.length === 0
          ? { taskExecutionId: task.id, from, count: Math.max(1, want()) }
          : { taskExecutionId: task.id, from: 0, count: 'all' },
      ]);
    }
    const row = book.rows.get(i);
    if (row && row.state === null) return row;
  }
  return undefined;
}

/** The item rows the decision writes. */
export function itemChanges(
  ws: WorkingState,
): Pick<EngineChanges, 'itemsDeleted' | 'itemsCreated' | 'itemsUpdated'> {
  const created: TaskItem[] = [];
  const updated: TaskItemUpdate[] = [];
  for (const book of ws.books.values()) {
    if (book.created) created.push(...[...book.rows.values()].sort((a, b) => a.index - b.index));
    else {
      for (const i of [...book.changed].sort((a, b) => a - b)) {
        const r = book.rows.get(i)!;
        updated.push({
          taskExecutionId: r.taskExecutionId,
          index: r.index,
          state: r.state,
          result: r.result,
        });
      }
    }
  }
  return {
    ...(ws.itemsDeleted.size ? { itemsDeleted: [...ws.itemsDeleted] } : {}),
    ...(created.length ? { itemsCreated: created } : {}),
    ...(updated.length ? { itemsUpdated: updated } : {}),
  };
}

/**
 * Starts (or, on a new attempt, continues) a with-items task: the list is evaluated into item rows
 * the first time, with `concurrency` (the policy's value, evaluated by its caller only then).
 */
export function startWithItems(
  ws: WorkingState,
  task: TaskExecution,
  spec: TaskSpec,
  data: JsonMap,
  timeoutSeconds: number | undefined,
  concurrency: () => number,
): void {
  const rt = task.runtimeContext;
  let state = rt.with_items;
  if (!state) {
    const lists: unknown[][] = [];
    for (const v of spec.withItems) {
      let list: unknown;
      try {
        list = ws.eval(v.source, data, task);
      } catch (e) {
        throw new FatalTaskError(task, ws.runFailure(task, errorMessage(e)));
      }
      if (!Array.isArray(list)) {
        throw new FatalTaskError(
          task,
          ws.runFailure(
            task,
            `Wrong input format for: ${pyRepr(list)}. List type is expected for each with-items variable.`,
          ),
        );
      }
      lists.push(list);
    }
    const count = lists[0]?.length ?? 0;
    if (lists.some((l) => l.length !== count)) {
      throw new FatalTaskError(
        task,
        ws.runFailure(
          task,
          `Wrong input format for: ${pyRepr(Object.fromEntries(spec.withItems.map((v, i) => [v.variable, lists[i]])))}. All arrays must have the same length.`,
        ),
      );
    }
    state = { count, concurrency: concurrency() };
    createItems(
      ws,
      task,
      Array.from({ length: count }, (_, i) =>
        Object.fromEntries(spec.withItems.map((v, j) => [v.variable, lists[j]![i]])),
      ),
    );
    rt.with_items = state;
    rt.with_items_progress = newProgress();
  }
  if (!rt.with_items_progress) rt.with_items_progress = newProgress();
  if (state.count === 0) {
    task.result = [];
    completeTask(ws, task, 'SUCCESS', null);
    return;
  }
  rt.with_items_timeout = timeoutSeconds ?? null;
  scheduleItems(ws, task);
}

/**
 * Starts the next items of the attempt while fewer than `concurrency` run (DSL-6.9): O(1) per
 * item, from the task's counters and the rows of the items it starts, whatever the number of
 * items. Nothing starts while the execution is not RUNNING: a paused execution lets its running
 * items finish (their results are counted) and starts the waiting ones on resume.
 */
export function scheduleItems(ws: WorkingState, task: TaskExecution): void {
  if (ws.ex.state !== 'RUNNING') return;
  const spec = ws.spec(task);
  const wi = task.runtimeContext.with_items!;
  const p = task.runtimeContext.with_items_progress!;
  const limit = wi.concurrency > 0 ? wi.concurrency : wi.count;
  const timeout = task.runtimeContext.with_items_timeout ?? undefined;
  const want = () =>
    Math.min(
      itemStartBudget(ws, task, p),
      wi.count - p.done - p.running,
      limit - p.running + (ws.eventsPerTask.get(task.id) ?? 0),
    );
  while (p.running < limit && p.done + p.running < wi.count) {
    if (itemStartBudget(ws, task, p) <= 0) {
      // items wait to start and this decision started its share: the next decision starts them
      if (!ws.itemsContinued.has(task.id)) {
        ws.itemsContinued.add(task.id);
        ws.effects.push({ type: 'start-items', taskExecutionId: task.id, cursor: p.cursor });
      }
      return;
    }
    const item = nextItem(ws, task, p.cursor, wi.count, want);
    if (!item) break;
    p.cursor = item.index + 1;
    p.running++;
    ws.itemsStarted.set(task.id, (ws.itemsStarted.get(task.id) ?? 0) + 1);
    setItem(ws, task, item.index, 'RUNNING', null);
    ws.touch(task);
    startUnit(ws, task, spec, item.vars, item.index, timeout);
  }
}

/**
 * The `start-items` event: the next waiting items of the task start, as in {@link scheduleItems}. A
 * redelivered or late event (the task completed, its items all started, the execution paused)
 * starts nothing.
 */
export function onStartItems(ws: WorkingState, taskId: string): void {
  const task = ws.task(taskId);
  if (!task || task.state !== 'RUNNING' || !hasItemProgress(task)) return;
  scheduleItems(ws, task);
}

/** Whether the task is a with-items task in an attempt (its items wait to start or run). */
export const hasItemProgress = (task: TaskExecution): boolean =>
  task.runtimeContext.with_items !== undefined && task.runtimeContext.with_items_progress !== undefined;

/** Forgets the task's items: the next start evaluates its list again (a rerun with reset). */
export function resetItems(task: TaskExecution): void {
  delete task.runtimeContext.with_items;
  delete task.runtimeContext.with_items_progress;
}

/**
 * Prepares the next attempt of a with-items task (retry, rerun): the items without an accepted
 * SUCCESS run again and their previous units are no longer accepted; the others keep their result.
 * With `all` (reset, or an attempt after which no item failed) every item runs again.
 */
export function requeueItems(ws: WorkingState, task: TaskExecution, all: boolean): void {
  const wi = task.runtimeContext.with_items;
  const p = task.runtimeContext.with_items_progress;
  if (!wi || !p) {
    unacceptUnits(ws, task, false);
    resetItems(task);
    return;
  }
  const items = allItems(ws, task, wi.count);
  const succeeded = items.filter((r) => r.state === 'SUCCESS').length;
  const everything = all || succeeded === wi.count;
  unacceptUnits(ws, task, !everything);
  // the items that run again wait to start; the others keep their SUCCESS and result
  for (const r of items)
    if ((everything || r.state !== 'SUCCESS') && (r.state !== null || r.result !== null))
      setItem(ws, task, r.index, null, null);
  const next = newProgress();
  if (!everything) next.done = succeeded;
  task.runtimeContext.with_items_progress = next;
  ws.touch(task);
}

/**
 * One item's accepted outcome (DSL-14.8): counted in the task's progress, a slot freed for the next
 * item; when every item has an outcome the task completes with the results in item order.
 */
export function onItemCompleted(
  ws: WorkingState,
  task: TaskExecution,
  index: number,
  state: 'SUCCESS' | 'ERROR' | 'CANCELLED',
  result: unknown,
): void {
  const wi = task.runtimeContext.with_items;
  const p = task.runtimeContext.with_items_progress;
  // the unit is accepted and was running, so its item is one of this attempt's running items
  if (!wi || !p || p.running <= 0) return;
  p.running--;
  p.done++;
  setItem(ws, task, index, state, result);
  ws.touch(task);
  if (p.done < wi.count) {
    scheduleItems(ws, task);
    return;
  }
  // the last outcome: the results are gathered once, in item order
  const items = allItems(ws, task, wi.count);
  task.result = items.map((r) => r.result ?? null);
  if (items.some((r) => r.state === 'CANCELLED'))
    completeTask(ws, task, 'CANCELLED', 'One or more actions was cancelled.');
  else if (items.some((r) => r.state === 'ERROR'))
    completeTask(ws, task, 'ERROR', 'One or more actions had failed.');
  else completeTask(ws, task, 'SUCCESS', null);
}
