import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { BullMqJobQueue, type CommandBus, type JobQueue, messagingMigrations } from '@osc/messaging';
import { PGLITE_MEMORY, closeDataSource, combineMigrations, createDataSource } from '@osc/persistence';
import { purgeTestPrefix } from '@osc/testing';
import { definitionMigrations, executionMigrations } from '@osc/workflow-persistence';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  prefixedBus,
  prefixedJobs,
  startExecution,
  storeWorkflows,
  testRabbitBus,
  waitForState,
} from '../../test/engine-harness';

/**
 * Mistral's expression functions through the whole engine: workflows publish the results of
 * expressions taken verbatim from the reference's registry set, and the execution output must hold
 * the reference's answers (libs/expressions/test/golden/registry.json, produced by python3-yaql and
 * python3-jinja2 driven as Mistral drives them). This checks that the engine hands the evaluator the
 * data, host and options the reference was driven with (publish evaluation, the data context, JSON
 * round trip), and that an expression the reference refuses fails the task with the reference's
 * message. Both modes: embedded (PGlite, in-process bus and jobs) and distributed (PostgreSQL,
 * RabbitMQ, BullMQ).
 */
interface RegistryCase {
  mode: string;
  expr: unknown;
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

type Mode = 'yaql' | 'jinja' | 'string';
interface Case {
  mode: Mode;
  expr: string;
}

/** The reference's case for `expr` evaluated in `mode` against the default context. */
function referenceCase(mode: Mode, expr: string): RegistryCase {
  const hit = registry.cases.find((c) => c.mode === mode && c.expr === expr && !('context' in c));
  if (!hit) throw new Error(`registry.json has no ${mode} case ${expr}`);
  return hit;
}
function reference(mode: Mode, expr: string): unknown {
  const hit = referenceCase(mode, expr);
  if ('error' in hit) throw new Error(`registry.json's ${mode} case ${expr} is an error`);
  return hit.result;
}
/** The reference's error message, without its Python exception type. */
function referenceError(mode: Mode, expr: string): string {
  const hit = referenceCase(mode, expr);
  if (hit.error === undefined) throw new Error(`registry.json's ${mode} case ${expr} succeeds`);
  return hit.error.replace(/^\w+: /, '');
}

const yaql = (expr: string): Case => ({ mode: 'yaql', expr });
const jinja = (expr: string): Case => ({ mode: 'jinja', expr });
const text = (expr: string): Case => ({ mode: 'string', expr });

// published name → expression (registry cases reading only n, s, csv, l, ls, d and users of the default context)
const CASES: Record<string, Case> = {
  def_greet: yaql("def(greet, 'hi ' + $) -> greet($.s)"),
  def_nested: yaql('def(twice, $ * 2) -> def(quad, twice(twice($))) -> quad(3)'),
  join_collections: yaql('[1, 2].join([3], $1 < $2, $1 * $2)'),
  join_strings: yaql("$.ls.join(', ')"),
  list_replace: yaql('[1, 2, 3].replace(1, 9)'),
  list_replace_count: yaql('[1, 2, 3].replace(0, 9, 2)'),
  examine: yaql('examine($.n > 1, $.n > 5, $.s)'),
  search_group: yaql("regex('(\\w+) (\\w+)').search($.s, $2)"),
  search_groups: yaql("regex('(\\w+) (\\w+)').search($.s, [$0, $1, $2])"),
  split_max: yaql("regex(',').split($.csv, maxSplit => 2)"),
  split_method: yaql("$.csv.split(regex(','), 2)"),
  replace_count: yaql("regex('o').replace($.s, '0', count => 1)"),
  replace_backrefs: yaql("regex('(l+)(o)').replace($.s, '\\\\2\\\\1')"),
  replace_named: yaql("regex('(?P<x>o)').replace($.s, '[\\\\g<x>]')"),
  replace_method_count: yaql("$.s.replace(regex('o'), '0', 1)"),
  lazy_to_list_index: yaql('$.l.where($ > 1).toList()[0]'),
  yaml_dump_map: yaql('yaml_dump($.d)'),
  yaml_dump_implicit: yaql(
    "yaml_dump({a => 'yes', b => 'no', c => 'on', d => 'null', e => '1.0', f => '', g => '~', h => 'true'})",
  ),
  yaml_dump_numbers: yaql(
    "yaml_dump(['010', '0x1F', '1e3', '1_000', '12:30', '2001-12-14', '.inf', '-.5', '+1', 'y', 'n'])",
  ),
  yaml_dump_indicators: yaql(
    "yaml_dump({'a b' => 'c: d', 'x' => '- item', 'h' => '#tag', 'q' => \"it's\", 'dq' => '\"q\"'})",
  ),
  yaml_dump_multiline: yaql("yaml_dump('multi\\nline')"),
  yaml_dump_unicode: yaql("yaml_dump('h\u00e9llo')"),
  yaml_dump_scalar_end: yaql('yaml_dump(1)'),
  yaml_dump_users: yaql('yaml_dump($.users)'),
  jinja_yaml_dump: jinja("yaml_dump(['010', '0x1F', '1e3', '12:30', '2001-12-14', 'y', 'Off'])"),
  jinja_int_base16: jinja("'ff' | int(base=16)"),
  jinja_int_base0: jinja("'0o17' | int(base=0)"),
  jinja_int_default: jinja("'z' | int(7, base=16)"),
  jinja_int_float: jinja('2.7 | int(base=16)'),
  jinja_attr_method: jinja("(_.s | attr('upper'))()"),
  jinja_attr_namespace: jinja("namespace(a=1) | attr('a')"),
  lines_yaql: text('x <% $.n %>\ny <% $.s %>'),
  lines_jinja: text('{{ _.n }}\n{{ _.s }}'),
  lines_jinja_for: text('{% for x in _.l %}{{ x }}\n{% endfor %}'),
  lines_jinja_if: text('{% if _.t %}\nyes\n{% endif %}'),
  // an expression spanning lines is no expression for Mistral ('<%.*?%>' stops at a newline)
  split_yaql: text('<% $.n\n + 1 %>'),
  split_jinja: text('{{ _.n\n + 1 }}'),
  // yaql's queries are iterators: computed item by item, read once
  lazy_take_before_failure: yaql('$.l.select(1 / ($ - 1)).take(1)'),
  lazy_first_of_endless: yaql('sequence().select($ * 2).first()'),
  lazy_where_of_endless: yaql('sequence().where($ > 3).take(2)'),
  iterator_read_once: yaql('let(x => $.l.select($)) -> [$x.len(), $x.len()]'),
  iterator_any_stops_early: yaql('let(x => $.l.select($)) -> [$x.any(), $x.len()]'),
  replace_by_groups: yaql("regex('(l)(o)').replaceBy($.s, $2.value + $3.value)"),
  // Python ints are exact at any size; the output is a JSON number
  big_int_text: yaql('str(pow(7, 30))'),
  big_int_exact: yaql('pow(2, 64) - 18446744073709551615'),
  big_int_mod: yaql('pow(-3, 41) mod 1000'),
  jinja_big_int_text: jinja('(2 ** 64) | string'),
  // Mistral's yaml loader: an anchor starts a plain scalar, continued over deeper lines
  yaml_anchor_multiline: yaql("yaml_parse('a: &anchor\\n  - 1\\n  - 2\\nb: *anchor')"),
  jinja_yaml_anchor_multiline: jinja("yaml_parse('a: &x one\\n  two\\nb: *x')"),
};
const INPUT_KEYS = ['n', 's', 'csv', 'l', 'ls', 'd', 'users', 't'];

/** Expressions the reference refuses: each fails its task with the reference's message. */
const FAILING: Record<string, Case> = {
  take_negative: yaql('$.l.take(-1)'),
  skip_negative: yaql('$.l.skip(-1)'),
  take_negative_len: yaql('$.l.take(-1).len()'),
  index_where: yaql('$.l.where($ > 1)[0]'),
  index_select: yaql('$.l.select($)[0]'),
  yaml_dump_set: yaql('yaml_dump(set(1))'),
  jinja_attr_of_item: jinja("_.users[0] | attr('name')"),
  jinja_attr_none: jinja("none | attr('x')"),
  lazy_failure_reached: yaql('$.l.select(1 / ($ - 1)).take(2)'),
  alias_method_refusal: yaql('(1).filter($)'),
  named_group_unpacked: yaql("regex('(?P<first>\\w+) (\\w+)').search($.s, $.first)"),
  yaml_anchor_continued_mapping: yaql("yaml_parse('base: &b\\n  k: v\\nother:\\n  <<: *b\\n  z: 1')"),
  float_pow_overflow: yaql('pow(10.0, 400)'),
  jinja_replace_arguments: jinja('_.s | replace'),
};

const yamlString = (s: string) => JSON.stringify(s); // a JSON string is a YAML double-quoted scalar
const published = (c: Case): string =>
  c.mode === 'yaql' ? `<% ${c.expr} %>` : c.mode === 'jinja' ? `{{ ${c.expr} }}` : c.expr;

const WORKFLOWS = `
version: '2.0'
functions:
  input: [${INPUT_KEYS.join(', ')}]
  tasks:
    publish_all:
      action: std.noop
      publish:
${Object.entries(CASES)
  .map(([k, c]) => `        ${k}: ${yamlString(published(c))}`)
  .join('\n')}
${Object.entries(FAILING)
  .map(
    ([k, c]) => `${k}:
  input: [${INPUT_KEYS.join(', ')}]
  tasks:
    fails:
      action: std.noop
      publish:
        value: ${yamlString(published(c))}`,
  )
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
  bus: CommandBus;
  jobs: JobQueue;
  close: () => Promise<void>;
}
const STACKS: [string, () => Promise<Stack>][] = [
  [
    'embedded (PGlite, in-process bus and jobs)',
    async () => {
      const ds = await createDataSource(
        { kind: 'pglite', dataDir: PGLITE_MEMORY },
        [],
        combineMigrations(messagingMigrations, definitionMigrations, executionMigrations) as never,
      );
      const { bus, jobs } = inProcessMessaging();
      return {
        ds,
        bus,
        jobs,
        close: async () => {
          await bus.close();
          await jobs.close();
          await closeDataSource(ds);
        },
      };
    },
  ],
  [
    'distributed (PostgreSQL, RabbitMQ, BullMQ)',
    async () => {
      const db = await createEngineDatabase();
      const prefix = `expr${randomBytes(4).toString('hex')}.`;
      const bus = prefixedBus(testRabbitBus(), prefix);
      const jobs = prefixedJobs(
        new BullMqJobQueue({ url: 'redis://127.0.0.1:6379', prefix: prefix.slice(0, -1) }),
        prefix,
      );
      return {
        ds: db.dataSource,
        bus,
        jobs,
        close: async () => {
          await bus.close();
          await jobs.close();
          // the run's RabbitMQ queues and BullMQ keys, which closing the clients leaves behind
          await purgeTestPrefix({ queuePrefix: prefix, bullPrefix: prefix.slice(0, -1) });
          await db.drop();
        },
      };
    },
  ],
];

describe.each(STACKS)('expression functions in a workflow — %s', (_name, open) => {
  let stack: Stack;
  let engine: EngineInstance;
  const input = () => Object.fromEntries(INPUT_KEYS.map((k) => [k, registry.defaultContext[k]]));

  beforeAll(async () => {
    stack = await open();
    await storeWorkflows(stack.ds, WORKFLOWS);
    engine = new EngineInstance(stack.ds, stack.bus, stack.jobs);
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    await stack?.close();
  }, 60_000);

  it('publishes the reference answers: def, join, replace, examine, regex methods, yaml_dump, Jinja int(base=) and attr, lines', async () => {
    const id = await startExecution(stack.ds, engine.outbox, 'functions', input());
    const row = await waitForState(stack.ds, id, undefined, 30_000);
    expect(row['state_info']).toBeNull();
    expect(row['state']).toBe('SUCCESS');
    const expected = Object.fromEntries(
      Object.entries(CASES).map(([k, c]) => [k, reference(c.mode, c.expr)]),
    );
    expect(row['output']).toEqual(expected);
    // spot checks, so that a broken lookup cannot make the comparison vacuous
    expect(expected['search_group']).toEqual({ value: 'Hello', start: 0, end: 5 });
    expect(expected['replace_backrefs']).toBe('Heoll World');
    expect(expected['yaml_dump_numbers']).toBe(
      "- '010'\n- '0x1F'\n- 1e3\n- '1_000'\n- '12:30'\n- '2001-12-14'\n- '.inf'\n- -.5\n- '+1'\n- y\n- n\n",
    );
    expect(expected['yaml_dump_unicode']).toBe('"h\\xE9llo"\n');
    expect(expected['jinja_int_base16']).toBe(255);
    expect(expected['jinja_attr_method']).toBe('HELLO WORLD');
    expect(expected['split_yaql']).toBe('<% $.n\n + 1 %>');
    expect(expected['iterator_read_once']).toEqual([3, 0]);
    expect(expected['big_int_text']).toBe('22539340290692258087863249');
    expect(expected['yaml_anchor_multiline']).toEqual({ a: '&anchor - 1 - 2', b: '*anchor' });
  }, 60_000);

  it.each(Object.keys(FAILING))(
    'fails the task as the reference does: %s',
    async (name) => {
      const c = FAILING[name]!;
      const message = referenceError(c.mode, c.expr);
      const id = await startExecution(stack.ds, engine.outbox, name, input());
      const row = await waitForState(stack.ds, id, undefined, 30_000);
      expect(row['state']).toBe('ERROR');
      const info = String(row['state_info']);
      expect(info).toContain(
        `Can not evaluate ${c.mode === 'yaql' ? 'YAQL' : 'Jinja'} expression [expression=`,
      );
      expect(info).toContain(c.expr);
      expect(info).toContain(`error=${message}]`);
    },
    60_000,
  );

  it('env() returns the execution environment', async () => {
    const id = await startExecution(stack.ds, engine.outbox, 'env_fn', {}, { env: { a: 'b' } });
    const row = await waitForState(stack.ds, id, undefined, 30_000);
    expect(row['state']).toBe('SUCCESS');
    const answer = registry.cases.find(
      (c) =>
        c.mode === 'yaql' &&
        c.expr === 'env()' &&
        JSON.stringify(c.context) === JSON.stringify({ x: 1, __env: { a: 'b' } }),
    )?.result;
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
