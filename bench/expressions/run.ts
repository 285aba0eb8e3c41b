/**
 * Evaluations per second for typical workflow expressions (compiled once, then served from the
 * expression cache). Run: node -r @swc-node/register bench/expressions/run.ts [--ms 400]
 * Writes bench/results/expressions.json. Single-threaded; on 2 shared cores numbers are noisy.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { evaluate, type ExpressionHost, prepareContext } from '@osc/expressions';

const host: ExpressionHost = {
  task: (name) => ({
    id: 't1',
    name: name ?? 'current',
    state: 'SUCCESS',
    state_info: null,
    result: { items: [1, 2, 3] },
    published: {},
  }),
  env: () => ({ region: 'r1' }),
  uuid: () => '00000000-0000-4000-8000-000000000000',
};

const data = {
  n: 7,
  name: 'server-1',
  items: Array.from({ length: 20 }, (_, i) => ({ n: `item-${i}`, v: i, ok: i % 3 === 0 })),
  vms: Array.from({ length: 50 }, (_, i) => ({
    id: `vm${i}`,
    status: i % 4 === 0 ? 'ERROR' : 'ACTIVE',
    flavor: { ram: 512 * (1 + (i % 4)) },
  })),
  params: { retries: 3, timeout: 30, tags: ['a', 'b'] },
  __env: { region: 'r1' },
};

const CASES: Array<{ name: string; value: unknown }> = [
  { name: 'yaql: member access', value: '<% $.params.retries %>' },
  { name: 'yaql: arithmetic and comparison', value: '<% $.n * 2 + 1 > 10 %>' },
  { name: 'yaql: select + sum', value: '<% $.items.select($.v).sum() %>' },
  { name: 'yaql: where + select', value: "<% $.vms.where($.status = 'ACTIVE').select($.id) %>" },
  { name: 'yaql: orderBy + take', value: '<% $.vms.orderByDescending($.flavor.ram).take(3).id %>' },
  { name: 'yaql: task().result', value: '<% task(fetch).result.items.len() %>' },
  { name: 'yaql: let + dict', value: '<% let(x => $.n) -> dict(a => $x, b => $x * 2) %>' },
  { name: 'yaql: embedded in text', value: 'vm <% $.name %> has <% $.items.len() %> items' },
  { name: 'jinja: member access', value: '{{ _.params.retries }}' },
  {
    name: 'jinja: filters',
    value: "{{ _.vms | selectattr('status', 'equalto', 'ACTIVE') | map(attribute='id') | list }}",
  },
  { name: 'jinja: template with for', value: '{% for i in _.params.tags %}{{ i }},{% endfor %}' },
  {
    name: 'mixed structure (action input)',
    value: { name: '<% $.name %>', count: '{{ _.n }}', flags: ['<% $.n > 3 %>', 'static'] },
  },
];

const ms = Number(process.argv[process.argv.indexOf('--ms') + 1]) || 300;

function measure(run: () => unknown): { opsPerSec: number; n: number } {
  let n = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (let i = 0; i < 50; i++) run();
    n += 50;
    now = process.hrtime.bigint();
  }
  return { opsPerSec: Math.round(n / (Number(now - start) / 1e9)), n };
}

// Warm up every case first so the JIT does not favour the later ones.
const prepared = prepareContext(data);
for (let r = 0; r < 300; r++) for (const { value } of CASES) evaluate(value, prepared, host);

process.stdout.write(
  `${'case'.padEnd(36)} ${'prepared'.padStart(10)} ${'raw data'.padStart(10)}  (evals/s)\n`,
);
const results = CASES.map(({ name, value }) => {
  const withPrepared = measure(() => evaluate(value, prepared, host));
  const withRaw = measure(() => evaluate(value, data, host));
  process.stdout.write(
    `${name.padEnd(36)} ${String(withPrepared.opsPerSec).padStart(10)} ${String(withRaw.opsPerSec).padStart(10)}\n`,
  );
  return {
    name,
    expression: value,
    evaluationsPerSecond: withPrepared.opsPerSec,
    evaluationsPerSecondConvertingContext: withRaw.opsPerSec,
  };
});

const out = join(__dirname, '..', 'results', 'expressions.json');
writeFileSync(
  out,
  `${JSON.stringify({ benchmark: 'expressions', node: process.version, loadAverage1m: loadavg()[0], measureMsPerCase: ms, note: 'evaluate() with compiled expressions served from the cache; evaluationsPerSecond uses a prepareContext() context, the other figure converts the ~70-item host context on every call', results }, null, 2)}\n`,
);
process.stdout.write(`wrote ${out}\n`);
