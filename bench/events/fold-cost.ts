/**
 * Diagnostic (not a result): PostgreSQL backend CPU of the history's two appends of a seq10
 * execution, written as statements of their own (as before 2026-11-27) and folded into the statements
 * that write the rows (executionEventsAppendCall): the API's create (its insert, then the append, in
 * a transaction; now one statement without BEGIN/COMMIT) and an engine transaction (its row statement,
 * then the group append; now one statement). Rounds alternate the two forms; one backend, CPU from
 * /proc (needs PostgreSQL on this machine). `off` writes no history: the baseline of both.
 *   node -r @swc-node/register bench/events/fold-cost.ts [--n=2000] [--rounds=3]
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { createTestDataSource } from '@osc/persistence';
import {
  executionHistoryEvent,
  newExecution,
  parseWorkflows,
  type HistoryEvent,
  type WorkflowExecution,
} from '@osc/workflow-domain';
import {
  appendExecutionEvents,
  appendExecutionEventsOfMany,
  applyChangesOfMany,
  definitionMigrations,
  executionEventsAppendCall,
  executionMigrations,
  insertExecutionReturning,
  setExecutionHistoryWrites,
} from '@osc/workflow-persistence';
import { processCpuSeconds } from '../engine/proc-cpu';

const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const N = arg('n', 2000);
const ROUNDS = arg('rounds', 3);

async function main(): Promise<void> {
  const t = await createTestDataSource('postgres', {
    migrations: [...definitionMigrations, ...executionMigrations],
  });
  const SPEC = parseWorkflows(`version: '2.0'\nwf:\n  tasks:\n    t:\n      action: std.noop\n`)
    .workflows[0]!;
  const qr = t.dataSource.createQueryRunner();
  await qr.connect();
  const pid = Number((await qr.query('SELECT pg_backend_pid() AS p'))[0].p);
  const cpu = () => processCpuSeconds(pid) * 1000; // ms
  const fresh = (): WorkflowExecution =>
    newExecution(
      { id: randomUUID(), spec: SPEC, workflowId: randomUUID(), workflowNamespace: '', projectId: 'p' },
      new Date(),
    );
  // the entries of the engine transaction that runs a seq10 execution with inline actions
  const run = (ex: WorkflowExecution): HistoryEvent[] => [
    ...Array.from({ length: 20 }, (_, i) => ({
      subject: (i % 2 ? 'action' : 'task') as HistoryEvent['subject'],
      executionId: ex.id,
      taskExecutionId: randomUUID(),
      actionExecutionId: i % 2 ? randomUUID() : null,
      name: `t${i}`,
      state: 'SUCCESS',
      previousState: 'RUNNING',
      stateInfo: null,
      details: {},
    })),
    { ...executionHistoryEvent(ex, 'RUNNING'), state: 'SUCCESS' },
  ];
  const none = { tasksCreated: [], tasksUpdated: [], actionsCreated: [], actionsUpdated: [] };
  const forms: Record<
    string,
    { create(ex: WorkflowExecution): Promise<void>; engine(ex: WorkflowExecution): Promise<void> }
  > = {
    separate: {
      async create(ex) {
        await qr.startTransaction();
        setExecutionHistoryWrites(false);
        await insertExecutionReturning(qr.manager, ex);
        setExecutionHistoryWrites(true);
        await appendExecutionEvents(qr.manager, ex, [executionHistoryEvent(ex, null)], ex.createdAt);
        await qr.commitTransaction();
      },
      async engine(ex) {
        const done = { ...ex, state: 'SUCCESS' as const, updatedAt: new Date() };
        await qr.startTransaction();
        await applyChangesOfMany(qr.manager, [{ ex: done, changes: { ...none, execution: done } }]);
        await appendExecutionEventsOfMany(qr.manager, [{ ex: done, events: run(ex) }], new Date());
        await qr.commitTransaction();
      },
    },
    folded: {
      async create(ex) {
        await insertExecutionReturning(qr.manager, ex);
      },
      async engine(ex) {
        const done = { ...ex, state: 'SUCCESS' as const, updatedAt: new Date() };
        await qr.startTransaction();
        await applyChangesOfMany(
          qr.manager,
          [{ ex: done, changes: { ...none, execution: done } }],
          (bind) => executionEventsAppendCall([{ ex: done, events: run(ex) }], new Date(), bind).call,
        );
        await qr.commitTransaction();
      },
    },
    // no history at all: what the two forms add is measured against this
    off: {
      async create(ex) {
        setExecutionHistoryWrites(false);
        await insertExecutionReturning(qr.manager, ex);
        setExecutionHistoryWrites(true);
      },
      async engine(ex) {
        const done = { ...ex, state: 'SUCCESS' as const, updatedAt: new Date() };
        setExecutionHistoryWrites(false);
        await qr.startTransaction();
        await applyChangesOfMany(qr.manager, [{ ex: done, changes: { ...none, execution: done } }]);
        await qr.commitTransaction();
        setExecutionHistoryWrites(true);
      },
    },
  };
  for (let round = 1; round <= ROUNDS; round++) {
    const order = Object.entries(forms);
    // alternate which form goes first: the tables grow through the run
    for (const [name, form] of round % 2 ? order : order.reverse()) {
      const exs = Array.from({ length: N }, fresh);
      let c0 = cpu();
      for (const ex of exs) await form.create(ex);
      const create = (cpu() - c0) / N;
      c0 = cpu();
      for (const ex of exs) await form.engine(ex);
      const engine = (cpu() - c0) / N;
      console.log(
        `round ${round} ${name}: create ${create.toFixed(3)} ms, engine transaction ${engine.toFixed(3)} ms, both ${(create + engine).toFixed(3)} ms backend CPU per execution`,
      );
    }
  }
  await qr.release();
  await t.cleanup();
}
void main();
