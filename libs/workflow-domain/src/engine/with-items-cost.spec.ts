import { parseWorkflows } from '../dsl/documents';
import type { WorkflowSpec } from '../dsl/model';
import { decideBatch } from './decide';
import type { Decision } from './model';
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

const catalog = (yaml: string): Record<string, WorkflowSpec> => Object.fromEntries(parseWorkflows(yaml).workflows.map((w) => [w.name, w]));
const bytes = (v: unknown): number => JSON.stringify(v).length;
/** A data context holding a list of `n` items under any top-level key. */
const holdsList = (data: unknown, n: number): boolean =>
  typeof data === 'object' && data !== null && Object.values(data).some((v) => Array.isArray(v) && v.length === n);

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
  const items = Array.from({ length: n }, (_, i) => `item-${100000 + i}`);
  const id = sim.create('wf', yaml.includes('[n]') ? { n } : { items });
  let start: Decision | undefined;
  let listConversions = 0;
  while (!start) {
    const next = sim.queue.shift();
    if (!next) throw new Error('no decision started the items');
    converted.length = 0;
    const d = sim.send(next.executionId, next.event);
    if (d.changes.actionsCreated.length === n) {
      start = d;
      listConversions = converted.filter((data) => holdsList(data, n)).length;
    }
  }
  const events = sim.queue.splice(0).map((q) => q.event);
  expect(events).toHaveLength(n);
  const done = decideBatch(sim.snapshot(id), events, sim.now, sim.newId);
  expect(done.changes.execution?.state).toBe('SUCCESS');
  const task = done.changes.tasksUpdated.find((t) => t.name === 'each');
  expect(task?.result).toEqual(items);
  return {
    startBytes: (bytes(start.commands) + bytes(start.changes.actionsCreated)) / n,
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
