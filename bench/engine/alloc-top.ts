/**
 * Sums heap profiles written by alloc-profile.ts (`node -r @swc-node/register
 * bench/engine/alloc-top.ts <file>... [--top=N]`): the bytes allocated by each function itself and by
 * it with what it called, largest first.
 */
import { readFileSync } from 'node:fs';

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const args = process.argv.slice(2);
const top = Number(args.find((a) => a.startsWith('--top='))?.slice(6) ?? 40);
const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
const walk = (n: Node, onStack: Set<string>): number => {
  const f = n.callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|apps|libs)\//, '$1/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + n.selfSize);
  all += n.selfSize;
  const inner = new Set(onStack).add(key);
  let sum = n.selfSize;
  for (const c of n.children) sum += walk(c, inner);
  if (!onStack.has(key)) total.set(key, (total.get(key) ?? 0) + sum);
  return sum;
};
for (const file of args.filter((a) => !a.startsWith('--')))
  walk((JSON.parse(readFileSync(file, 'utf8')) as { head: Node }).head, new Set());
const mb = (b: number) => (b / 2 ** 20).toFixed(1).padStart(8);
process.stdout.write(`all: ${mb(all)} MiB\nself:\n`);
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${mb(v)}  ${k}\n`);
process.stdout.write('total (with callees):\n');
for (const [k, v] of [...total].sort((a, b) => b[1] - a[1]).slice(0, top))
  process.stdout.write(`${mb(v)}  ${k}\n`);
