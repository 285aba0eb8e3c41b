import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const run = (args: string[], input?: string) =>
  spawnSync(process.execPath, ['-r', '@swc-node/register', 'libs/expressions/tools/cli.ts', ...args], { cwd: ROOT, input, encoding: 'utf8' });

describe('expr CLI', () => {
  it('evaluates one expression with a context', () => {
    const r = run(['<% $.a + 1 %>', '--context', '{"a":1}']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('{"result": 2}\n');
    const f = run(['<% 4.0 / 2 %>']);
    expect(f.stdout).toBe('{"result": 2.0}\n');
    const e = run(['<% $.nope %>']);
    expect(e.status).toBe(1);
    expect(JSON.parse(e.stdout)).toEqual({ error: "Can not evaluate YAQL expression [expression=$.nope, error='nope']" });
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
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      { result: [2, 3] },
      { result: 6 },
      { result: 'x=[1, 2.5]' },
      { error: "Can not evaluate YAQL expression [expression=$.nope, error='nope']" },
      { error: 'invalid JSON input line' },
    ]);
  });
});
