/**
 * Diagnostic (not a result): PostgreSQL backend CPU of the history append per engine transaction,
 * for a seq10-like payload, with parts of the append function switched off in turn.
 *   node -r @swc-node/register bench/events/append-cost.ts [--n=3000]
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createTestDataSource } from '@osc/persistence';
import {
  newExecution,
  parseWorkflows,
  type HistoryEvent,
  type WorkflowExecution,
} from '@osc/workflow-domain';
import {
  appendExecutionEvents,
  definitionMigrations,
  executionMigrations,
  insertExecution,
  registerStreamListener,
} from '@osc/workflow-persistence';
import { processCpuSeconds } from '../engine/proc-cpu';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 3000);

async function main(): Promise<void> {
  const t = await createTestDataSource('postgres', {
    migrations: [...definitionMigrations, ...executionMigrations],
  });
  const ds = t.dataSource;
  const SPEC = parseWorkflows(`version: '2.0'\nwf:\n  tasks:\n    t:\n      action: std.noop\n`)
    .workflows[0]!;
  // engines announce only while a listener is registered: the variants measure the NOTIFY as a
  // watched server pays it
  await registerStreamListener(ds, randomUUID(), 3600);
  const qr = ds.createQueryRunner();
  await qr.connect();
  const pid = Number((await qr.query('SELECT pg_backend_pid() AS p'))[0].p);
  const cpu = () => processCpuSeconds(pid) * 1000; // ms
  const exs: WorkflowExecution[] = [];
  for (let i = 0; i < N; i++) {
    const ex = newExecution(
      { id: randomUUID(), spec: SPEC, workflowId: randomUUID(), workflowNamespace: '', projectId: 'p' },
      new Date(),
    );
    exs.push(ex);
  }
  await ds.transaction(async (em) => {
    for (const ex of exs) await insertExecution(em, ex);
  });
  const ev = (ex: { id: string }, subject: string, name: string): HistoryEvent => ({
    subject: subject as HistoryEvent['subject'],
    executionId: ex.id,
    taskExecutionId: subject === 'execution' ? null : randomUUID(),
    actionExecutionId: subject === 'action' ? randomUUID() : null,
    name,
    state: 'SUCCESS',
    previousState: 'RUNNING',
    stateInfo: null,
    details: subject === 'action' ? { taskName: name } : {},
  });
  const variants: Record<string, (ex: WorkflowExecution) => HistoryEvent[]> = {
    'exec only (1 entry)': (ex) => [ev(ex, 'execution', 'wf')],
    'tasks only (20 entries)': (ex) =>
      Array.from({ length: 20 }, (_, i) => ev(ex, i % 2 ? 'action' : 'task', `t${i}`)),
    'seq10 run (exec + 20)': (ex) => [
      ...Array.from({ length: 20 }, (_, i) => ev(ex, i % 2 ? 'action' : 'task', `t${i}`)),
      ev(ex, 'execution', 'wf'),
    ],
  };
  const original = String(
    (await qr.query(`SELECT pg_get_functiondef('osc_append_execution_events_of_trees'::regproc) AS d`))[0].d,
  );
  const bodies: Record<string, string> = {
    full: original,
    'no NOTIFY': original.replace(/PERFORM pg_notify\([^;]*;/, 'NULL;'),
    'no counter upsert': original.replace(
      /INSERT INTO "execution_event_counters"[\s\S]*?RETURNING "last_seq" INTO v_one;/,
      'v_one := (random() * 1e12)::bigint;',
    ),
    'nothing but the call': original.replace(/BEGIN[\s\S]*END/, 'BEGIN NULL; END'),
  };
  for (const [fn, body] of Object.entries(bodies)) {
    if (body === original && fn !== 'full') throw new Error(`variant ${fn} did not change the function`);
    await qr.query(body);
    for (const round of [1]) {
      for (const [name0, make] of Object.entries(variants)) {
        const name = `[${fn}] ${name0}`;
        const sub = exs.slice(0, N);
        // empty transactions: the baseline of BEGIN/COMMIT
        let c0 = cpu();
        for (const ex of sub) {
          await qr.startTransaction();
          await qr.query('SELECT 1');
          await qr.commitTransaction();
          void ex;
        }
        const base = (cpu() - c0) / sub.length;
        c0 = cpu();
        for (const ex of sub) {
          await qr.startTransaction();
          await appendExecutionEvents(qr.manager, ex, make(ex), new Date());
          await qr.commitTransaction();
        }
        const per = (cpu() - c0) / sub.length;
        console.log(
          `round ${round} ${name}: ${per.toFixed(3)} ms backend CPU per transaction (empty transaction ${base.toFixed(3)})`,
        );
      }
    }
  }
  await qr.query(original);
  await qr.release();
  await t.cleanup();
}
void main();
