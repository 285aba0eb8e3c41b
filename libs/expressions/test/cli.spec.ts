import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, ['-r', '@swc-node/register', 'libs/expressions/tools/cli.ts', ...args], {
    cwd: ROOT,
    input,
    encoding: 'utf8',
  });

describe('expr CLI', () => {
  it('evaluates one expression with a context', () => {
    const r = run(['<% $.a + 1 %>', '--context', '{"a":1}']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('{"result": 2}\n');
    const f = run(['<% 4.0 / 2 %>']);
    expect(f.stdout).toBe('{"result": 2.0}\n');
    const e = run(['<% $.nope %>']);
    expect(e.status).toBe(1);
    expect(JSON.parse(e.stdout)).toEqual({
      error: "Can not evaluate YAQL expression [expression=$.nope, error='nope']",
    });
  });

  it('answers one line per JSONL case, in order', () => {
    const input = [
      { lang: 'yaql', expr: '$.a.where($ > 1)', context: { a: [1, 2, 3] } },
      { lang: 'jinja', expr: '_.a | sum', context: { a: [1, 2, 3] } },
      { lang: 'jinja', expr: 'x={{ _.a }}', context: { a: [1, 2.5] } },
      { lang: 'yaql', expr: '$.nope' },
    ]
      .map((c) => JSON.stringify(c))
      .concat(['not json'])
      .join('\n');
    const r = run(['--jsonl'], input);
    expect(r.status).toBe(0);
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { result: [2, 3] },
      { result: 6 },
      { result: 'x=[1, 2.5]' },
      { error: "Can not evaluate YAQL expression [expression=$.nope, error='nope']" },
      { error: 'invalid JSON input line' },
    ]);
  });

  it('evaluates a whole data structure in recursive mode (task input / publish)', () => {
    const ctx = { a: [1, 2.5], n: 2 };
    const input = [
      {
        expr: {
          '<% $.n %>': '<% $.n + 1 %>',
          plain: 'no delimiters here',
          list: ['{{ _.n * 2 }}', 'n=<% $.n %>', 7, null],
          deep: { x: { y: '<% $.a %>' } },
        },
        context: ctx,
        recursive: true,
      },
      { expr: 'just text, $.n', context: ctx, recursive: true },
      { lang: 'jinja', expr: '{{ _.a }}', context: ctx, recursive: true },
      { expr: 4.0, context: ctx, recursive: true },
      { expr: ['<% $.nope %>'], context: ctx, recursive: true },
      { expr: { k: 'v' }, context: ctx },
    ]
      .map((c) => JSON.stringify(c))
      .join('\n');
    const r = run(['--jsonl'], input);
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      {
        result: {
          '<% $.n %>': 3,
          plain: 'no delimiters here',
          list: [4, 'n=2', 7, null],
          deep: { x: { y: [1, 2.5] } },
        },
      },
      { result: 'just text, $.n' },
      { result: [1, 2.5] },
      { result: 4 },
      { error: "Can not evaluate YAQL expression [expression=$.nope, error='nope']" },
      { error: '"expr" must be a string (or set "recursive": true)' },
    ]);
    expect(lines[3]).toBe('{"result": 4}');
  });

  it('takes a JSON argument with --recursive', () => {
    const r = run(['--recursive', '{"a": "<% $.x * 2 %>", "b": "x"}', '--context', '{"x": 1.5}']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('{"result": {"a": 3.0, "b": "x"}}\n');
    const bad = run(['--recursive', 'not json']);
    expect(bad.status).toBe(2);
  });
});
