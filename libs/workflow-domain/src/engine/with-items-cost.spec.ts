import { parseWorkflows } from '../dsl/documents';
import type { WorkflowSpec } from '../dsl/model';
import { decideBatch } from './decide';
import type { Decision, EngineEvent } from './model';
import { ITEMS_STARTED_PER_DECISION } from './with-items';
import { EngineSimulator } from './simulator';

/** Every data context the evaluator converts (plain data passed to `evaluate` or `prepareContext`). */
const converted: unknown[] = [];
jest.mock('@osc/expressions', () => {
  const actual = jest.requireActual<typeof import('@osc/expressions')>('@osc/expressions');
  return {
    ...actual,
    evaluate: (value: unknown, data: unknown, host: unknown) => {
      converted.push(data);
      return actual.evaluate(value, data, host as never);
    },
    prepareContext: (data: unknown) => {
      converted.push(data);
      return actual.prepareContext(data);
    },
  };
});

/**
 * Issue 15 (2) / 17 (4): a with-items task over N items costs O(N), wherever the list comes from.
 * Two ways it did not: the task's data (which holds the list when it comes from the input or a
 * published variable) was sent with every item's run — the 5,000 input items of the report made
 * 300 MB of outbox rows in one transaction — and converted for the evaluator for every item. Each
 * shows here as a count per item that grows with N; none of these tests measures time.
 */
const sources: [string, string][] = [
  [
    'the execution input',
    `
version: '2.0'
wf:
  input: [items]
  tasks:
    each:
      with-items: i in <% $.items %>
      action: std.echo output=<% $.i %>
`,
  ],
  [
    'a published variable',
    `
version: '2.0'
wf:
  input: [items]
  tasks:
    make:
      action: std.noop
      publish: {list: <% $.items %>}
      on-success: each
    each:
      with-items: i in <% $.list %>
      action: std.echo output=<% $.i %>
`,
  ],
  [
    'range()',
    `
version: '2.0'
wf:
  input: [n]
  tasks:
    each:
      with-items: i in <% range($.n).select(concat('item-', str(100000 + $))) %>
      action: std.echo output=<% $.i %>
`,
  ],
];

const catalog = (yaml: string): Record<string, WorkflowSpec> =>
  Object.fromEntries(parseWorkflows(yaml).workflows.map((w) => [w.name, w]));
const bytes = (v: unknown): number => JSON.stringify(v).length;
/** A data context holding a list of `n` items under any top-level key. */
const holdsList = (data: unknown, n: number): boolean =>
  typeof data === 'object' &&
  data !== null &&
  Object.values(data).some((v) => Array.isArray(v) && v.length === n);

interface Cost {
  /** Bytes of the run messages and action rows the start writes, per item. */
  startBytes: number;
  /** Bytes of the action rows the results update, per item. */
  completeBytes: number;
  /** Times the data holding the list was converted for the evaluator while the items started. */
  listConversions: number;
  /** Writes of the with-items task row by the decision applying every result. */
  taskRowWrites: number;
}

/** Runs the workflow over `n` items (fixed-width strings): the decision starting them, then one applying all their results. */
const measure = (yaml: string, n: number): Cost => {
  const sim = new EngineSimulator(catalog(yaml));
  sim.partialSnapshots = true;
  sim.itemsPerDecision = ITEMS_STARTED_PER_DECISION;
  const items = Array.from({ length: n }, (_, i) => `item-${100000 + i}`);
  const id = sim.create('wf', yaml.includes('[n]') ? { n } : { items });
  // the decisions starting the items: the first starts ITEMS_STARTED_PER_DECISION, each of the
  // following (`start-items` events) at most as many as were started before it
  const start: Decision[] = [];
  let listConversions = 0;
  let created = 0;
  // the items' results wait for the decision applying them all at once
  const itemRuns = new Set<string>();
  const results: EngineEvent[] = [];
  while (created < n) {
    const next = sim.queue.shift();
    if (!next) throw new Error('no decision started the items');
    if (next.event.type === 'action-completed' && itemRuns.has(next.event.actionExecutionId)) {
      results.push(next.event);
      continue;
    }
    converted.length = 0;
    const d = sim.send(next.executionId, next.event);
    if (d.changes.actionsCreated.length > 0 && d.changes.actionsCreated[0]!.itemIndex !== null) {
      expect(d.changes.actionsCreated.length).toBeLessThanOrEqual(
        Math.max(ITEMS_STARTED_PER_DECISION, created),
      );
      expect(d.commands.filter((c) => c.type === 'start-items')).toHaveLength(
        created + d.changes.actionsCreated.length < n ? 1 : 0,
      );
      start.push(d);
      for (const a of d.changes.actionsCreated) itemRuns.add(a.id);
      created += d.changes.actionsCreated.length;
      listConversions += converted.filter((data) => holdsList(data, n)).length;
    }
  }
  // 1,000 items: one decision; 5,000: 1,000 + 1,000 + 2,000 + 1,000
  expect(start).toHaveLength(Math.ceil(Math.log2(Math.ceil(n / ITEMS_STARTED_PER_DECISION))) + 1);
  const events = [...results, ...sim.queue.splice(0).map((q) => q.event)];
  expect(events).toHaveLength(n);
  const done = decideBatch(sim.snapshot(id), events, sim.now, sim.newId);
  expect(done.changes.execution?.state).toBe('SUCCESS');
  const task = done.changes.tasksUpdated.find((t) => t.name === 'each');
  expect(task?.result).toEqual(items);
  return {
    startBytes: start.reduce((sum, d) => sum + bytes(d.commands) + bytes(d.changes.actionsCreated), 0) / n,
    completeBytes: bytes(done.changes.actionsUpdated) / n,
    listConversions,
    taskRowWrites: done.changes.tasksUpdated.filter((t) => t.name === 'each').length,
  };
};

describe('decide: with-items cost per item does not grow with the list', () => {
  it.each(sources)('items from %s: the same work per item at 1,000 and 5,000 items', (_source, yaml) => {
    const small = measure(yaml, 1000);
    const large = measure(yaml, 5000);
    // index digits and ids aside, an item's run message and row are the same size whatever N
    expect(large.startBytes).toBeLessThan(small.startBytes * 1.02);
    expect(large.completeBytes).toBeLessThan(small.completeBytes * 1.02);
    // the list is converted for the evaluator a fixed number of times, not once per item
    expect(large.listConversions).toBe(small.listConversions);
    expect(large.listConversions).toBeLessThanOrEqual(5);
    // the task row is written once per decision, not once per item result
    expect(large.taskRowWrites).toBe(1);
  });
});

/**
 * Issue 17 (4): each item event costs O(1). The task row held the list, every item's state and
 * result, and was rewritten by every decision applying a batch of results (O(N) per batch); now
 * the items are rows of their own. Counted here per decision applying a batch of results, as the
 * engine applies them (partial snapshots: the item rows a decision needs are loaded on demand).
 */
describe('decide: a batch of item results touches O(batch) data, whatever the length of the list', () => {
  const BATCH = 50;
  const workflow = (concurrency: number) =>
    catalog(`
version: '2.0'
wf:
  input: [items]
  tasks:
    each:
      with-items: i in <% $.items %>
${concurrency ? `      concurrency: ${concurrency}\n` : ''}      action: std.echo output=<% $.i %>
      publish: {all: <% task().result %>}
`);

  interface BatchCost {
    /** Bytes of task rows written per batch (the with-items task's row). */
    taskRowBytes: number;
    /** Bytes of task rows the batch's snapshot holds (what every transaction reads). */
    snapshotTaskBytes: number;
    /** Bytes of item rows written per batch. */
    itemBytes: number;
    /** Item rows read per batch. */
    itemRowsLoaded: number;
    /** Item rows read by the batch that completes the task (every result, once). */
    finalRowsLoaded: number;
    /** Times the data holding the list was converted for the evaluator by the batches (the last one aside). */
    listConversions: number;
  }

  /** Starts the task over `n` items, then answers the runs `BATCH` at a time, each batch one decision. */
  const run = (n: number, concurrency: number): BatchCost => {
    const sim = new EngineSimulator(workflow(concurrency), () => 'async');
    sim.partialSnapshots = true;
    const items = Array.from({ length: n }, (_, i) => `item-${100000 + i}`);
    const id = sim.create('wf', { items });
    sim.run();
    const sums = { taskRowBytes: 0, snapshotTaskBytes: 0, itemBytes: 0, itemRowsLoaded: 0 };
    let batches = 0;
    let finalRowsLoaded = 0;
    let answered = 0;
    converted.length = 0;
    let listConversions = 0;
    while (answered < n) {
      const runs = sim.asyncActions.slice(answered, answered + BATCH);
      expect(runs.length).toBeGreaterThan(0);
      answered += runs.length;
      const events = runs.map((a): EngineEvent => ({
        type: 'action-completed',
        taskExecutionId: a.taskExecutionId,
        actionExecutionId: a.actionExecutionId,
        state: 'SUCCESS',
        result: `r-${a.actionExecutionId}`,
      }));
      const loadedBefore = sim.itemRowsLoaded;
      const snapshotTaskBytes = bytes(sim.snapshotFor(id, events).tasks);
      const d = sim.sendBatch(id, events);
      if (answered === n) {
        finalRowsLoaded = sim.itemRowsLoaded - loadedBefore;
        break;
      }
      listConversions = converted.filter((data) => holdsList(data, n)).length;
      batches++;
      sums.taskRowBytes += bytes(d.changes.tasksUpdated);
      sums.snapshotTaskBytes += snapshotTaskBytes;
      sums.itemBytes += bytes(d.changes.itemsUpdated ?? []);
      sums.itemRowsLoaded += sim.itemRowsLoaded - loadedBefore;
    }
    expect(sim.execution(id).state).toBe('SUCCESS');
    // results in item order, whatever order they were applied in
    const results = sim.tasksOf(id)[0]!.result as string[];
    expect(results).toHaveLength(n);
    expect(results).toEqual(
      sim
        .actionsOf(id)
        .sort((a, b) => a.itemIndex! - b.itemIndex!)
        .map((a) => `r-${a.id}`),
    );
    return {
      taskRowBytes: sums.taskRowBytes / batches,
      snapshotTaskBytes: sums.snapshotTaskBytes / batches,
      itemBytes: sums.itemBytes / batches,
      itemRowsLoaded: sums.itemRowsLoaded / batches,
      finalRowsLoaded,
      listConversions,
    };
  };

  it.each([
    ['all at once', 0],
    ['concurrency 20', 20],
  ])('%s: the same bytes written and read per batch at 1,000 and 5,000 items', (_name, concurrency) => {
    const small = run(1000, concurrency);
    const large = run(5000, concurrency);
    // the task row stays a few hundred bytes (counters), read and written once per batch
    expect(large.taskRowBytes).toBeLessThan(small.taskRowBytes * 1.05);
    expect(large.snapshotTaskBytes).toBeLessThan(small.snapshotTaskBytes * 1.05);
    expect(large.taskRowBytes).toBeLessThan(2000);
    // one small item row per result (and per item started)
    expect(large.itemBytes).toBeLessThan(small.itemBytes * 1.05);
    expect(large.itemBytes).toBeLessThan(BATCH * 2 * 200);
    // rows read: none when every item started with the list; with a concurrency, the items the
    // batch starts (at most one per result, plus the loads' look-ahead) — never the list
    expect(large.itemRowsLoaded).toBeLessThanOrEqual(small.itemRowsLoaded * 1.05);
    expect(large.itemRowsLoaded).toBeLessThanOrEqual(concurrency === 0 ? 0 : 2 * BATCH);
    // the items started by a batch are evaluated without converting the list again
    expect(large.listConversions).toBe(0);
    // the results are read once, when the last one arrives
    expect(small.finalRowsLoaded).toBe(1000);
    expect(large.finalRowsLoaded).toBe(5000);
  });
});
