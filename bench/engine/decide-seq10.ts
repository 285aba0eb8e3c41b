/**
 * CPU of the engine's pure work for one seq10 execution with inline actions (decideInline from start to
 * SUCCESS, then the history entries), in this process, without the database:
 * `node -r @swc-node/register bench/engine/decide-seq10.ts [--n=2000]`. A figure that does not
 * depend on the machine's load as much as the end-to-end benchmark's.
 */
import { StandardActionRunner } from '@osc/actions';
import {
  type Decision,
  type EngineEvent,
  type ExecutionSnapshot,
  decide,
  decideBatch,
  decideInline,
  historyEvents,
  newExecution,
  parseWorkflows,
} from '@osc/workflow-domain';
import { randomUUID } from 'node:crypto';
import { runInline } from '../../apps/workflow-engine/src/engine/inline-actions';

const n = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 2000);
const yaml = `
version: '2.0'
seq10:
  tasks:
${Array.from({ length: 10 }, (_, i) => `    t${i}:\n      action: std.noop\n${i < 9 ? `      on-success: t${i + 1}\n` : ''}`).join('')}`;
const spec = parseWorkflows(yaml).workflows[0]!;
const runner = new StandardActionRunner();
const decideEvents = (s: ExecutionSnapshot, evs: readonly EngineEvent[]): Decision =>
  evs.length === 1
    ? decide(s, evs[0] as EngineEvent, new Date(), randomUUID)
    : decideBatch(s, evs, new Date(), randomUUID);

async function one(): Promise<void> {
  const execution = newExecution(
    { id: randomUUID(), spec, workflowId: 'wf', workflowNamespace: '', projectId: 'p', input: {} },
    new Date(),
  );
  const snapshot: ExecutionSnapshot = { execution, tasks: [], actions: [], subExecutions: [] };
  const d = await decideInline(snapshot, [{ type: 'start' }], decideEvents, (ex, e) =>
    runInline(runner, ex, e),
  );
  if (d.changes.execution?.state !== 'SUCCESS') throw new Error(`seq10 ended ${d.changes.execution?.state}`);
  historyEvents(snapshot, d.changes);
}

async function main(): Promise<void> {
  for (let i = 0; i < 500; i++) await one();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) await one();
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({
      executions: n,
      cpu_ms_per_execution: Number(((used.user + used.system) / 1000 / n).toFixed(3)),
    }),
  );
}
void main();
