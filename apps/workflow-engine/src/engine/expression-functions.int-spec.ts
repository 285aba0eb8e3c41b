import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { type CommandBus, type JobQueue, messagingMigrations } from '@osc/messaging';
import { PGLITE_MEMORY, closeDataSource, combineMigrations, createDataSource } from '@osc/persistence';
import { definitionMigrations, executionMigrations } from '@osc/workflow-persistence';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  waitForState,
} from '../../test/engine-harness';

/**
 * Mistral's expression functions through the whole engine: a workflow publishes the results of
 * YAQL expressions taken verbatim from the reference's registry set, and the execution output must
 * hold the reference's answers (libs/expressions/test/golden/registry.json, produced by python3-yaql
 * with Mistral's functions). This checks that the engine hands the evaluator the data, host and
 * options the reference was driven with (publish evaluation, the data context, JSON round trip).
 */
interface RegistryCase {
  mode: string;
  expr: string;
  context?: unknown;
  result?: unknown;
  error?: string;
}
const registry = JSON.parse(
  readFileSync(
    join(__dirname, '..', '..', '..', '..', 'libs', 'expressions', 'test', 'golden', 'registry.json'),
    'utf8',
  ),
) as {
  defaultContext: Record<string, unknown>;
  cases: RegistryCase[];
};

/** The reference's answer for a YAQL case evaluated against `context` (default context when absent). */
function reference(expr: string, context?: unknown): unknown {
  const hit = registry.cases.find(
    (c) =>
      c.mode === 'yaql' &&
      c.expr === expr &&
      JSON.stringify(c.context) === JSON.stringify(context) &&
      !('error' in c),
  );
  if (!hit) throw new Error(`registry.json has no successful yaql case ${expr}`);
  return hit.result;
}

// published name → expression (registry cases reading only n, s, csv and ls of the default context)
const CASES: Record<string, string> = {
  def_greet: "def(greet, 'hi ' + $) -> greet($.s)",
  def_nested: 'def(twice, $ * 2) -> def(quad, twice(twice($))) -> quad(3)',
  join_collections: '[1, 2].join([3], $1 < $2, $1 * $2)',
  join_strings: "$.ls.join(', ')",
  list_replace: '[1, 2, 3].replace(1, 9)',
  list_replace_count: '[1, 2, 3].replace(0, 9, 2)',
  examine: 'examine($.n > 1, $.n > 5, $.s)',
  search_group: "regex('(\\w+) (\\w+)').search($.s, $2)",
  search_groups: "regex('(\\w+) (\\w+)').search($.s, [$0, $1, $2])",
  split_max: "regex(',').split($.csv, maxSplit => 2)",
  split_method: "$.csv.split(regex(','), 2)",
  replace_count: "regex('o').replace($.s, '0', count => 1)",
  replace_backrefs: "regex('(l+)(o)').replace($.s, '\\\\2\\\\1')",
  replace_named: "regex('(?P<x>o)').replace($.s, '[\\\\g<x>]')",
  replace_method_count: "$.s.replace(regex('o'), '0', 1)",
};
const INPUT_KEYS = ['n', 's', 'csv', 'ls'];

const yamlString = (s: string) => JSON.stringify(s); // a JSON string is a YAML double-quoted scalar

const WORKFLOWS = `
version: '2.0'
functions:
  input: [${INPUT_KEYS.join(', ')}]
  tasks:
    publish_all:
      action: std.noop
      publish:
${Object.entries(CASES)
  .map(([k, e]) => `        ${k}: ${yamlString(`<% ${e} %>`)}`)
  .join('\n')}
env_fn:
  tasks:
    read_env:
      action: std.noop
      publish:
        whole: <% env() %>
        jinja_whole: "{{ env() }}"
`;

interface Stack {
  ds: DataSource;
  close: () => Promise<void>;
}
const STACKS: [string, () => Promise<Stack>][] = [
  [
    'embedded (PGlite)',
    async () => {
      const ds = await createDataSource(
        { kind: 'pglite', dataDir: PGLITE_MEMORY },
        [],
        combineMigrations(messagingMigrations, definitionMigrations, executionMigrations) as never,
      );
      return { ds, close: () => closeDataSource(ds) };
    },
  ],
  [
    'PostgreSQL',
    async () => {
      const db = await createEngineDatabase();
      return { ds: db.dataSource, close: db.drop };
    },
  ],
];

describe.each(STACKS)('expression functions in a workflow — %s', (_name, open) => {
  let stack: Stack;
  let engine: EngineInstance;
  let bus: CommandBus;
  let jobs: JobQueue;

  beforeAll(async () => {
    stack = await open();
    await storeWorkflows(stack.ds, WORKFLOWS);
    ({ bus, jobs } = inProcessMessaging());
    engine = new EngineInstance(stack.ds, bus, jobs);
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    await bus?.close();
    await jobs?.close();
    await stack?.close();
  }, 60_000);

  it('publishes the reference answers of def, join, replace, examine, regex search/split/replace', async () => {
    const input = Object.fromEntries(INPUT_KEYS.map((k) => [k, registry.defaultContext[k]]));
    const id = await startExecution(stack.ds, engine.outbox, 'functions', input);
    const row = await waitForState(stack.ds, id, undefined, 30_000);
    expect(row['state_info']).toBeNull();
    expect(row['state']).toBe('SUCCESS');
    const expected = Object.fromEntries(Object.entries(CASES).map(([k, e]) => [k, reference(e)]));
    expect(row['output']).toEqual(expected);
    // spot checks, so that a broken lookup cannot make the comparison vacuous
    expect(expected['search_group']).toEqual({ value: 'Hello', start: 0, end: 5 });
    expect(expected['replace_backrefs']).toBe('Heoll World');
  }, 60_000);

  it('env() returns the execution environment', async () => {
    const id = await startExecution(stack.ds, engine.outbox, 'env_fn', {}, { env: { a: 'b' } });
    const row = await waitForState(stack.ds, id, undefined, 30_000);
    expect(row['state']).toBe('SUCCESS');
    const answer = reference('env()', { x: 1, __env: { a: 'b' } });
    expect(answer).toEqual({ a: 'b' });
    expect(row['output']).toEqual({ whole: answer, jinja_whole: answer });
  }, 60_000);

  it('env() without an environment is the empty dict the engine supplies as __env', async () => {
    // registry.json's `env()` → None / KeyError '__env' cases evaluate a bare data context without
    // `__env`; Mistral's engine never does that: data_flow.get_workflow_environment_dict() always
    // supplies {'__env': params.get('env', {})}, so a workflow started without env sees {}.
    const id = await startExecution(stack.ds, engine.outbox, 'env_fn');
    const row = await waitForState(stack.ds, id, undefined, 30_000);
    expect(row['state_info']).toBeNull();
    expect(row['state']).toBe('SUCCESS');
    expect(row['output']).toEqual({ whole: {}, jinja_whole: {} });
  }, 60_000);
});
