import 'reflect-metadata';
import type { DataSource } from 'typeorm';
import { type CommandBus, type JobQueue, messagingMigrations } from '@osc/messaging';
import { PGLITE_MEMORY, closeDataSource, combineMigrations, createDataSource } from '@osc/persistence';
import { definitionMigrations, executionMigrations } from '@osc/workflow-persistence';
import {
  EngineInstance,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  waitForState,
} from '../../test/engine-harness';

const ITEMS = 5000;

/**
 * Issue 15 (2): in embedded mode a with-items task over 5,000 items passed as execution input stayed
 * RUNNING for good, with no task row: the start decision sent the whole input with every item (300 MB
 * of outbox rows in one INSERT), which PGlite refused with "out of memory", and the command was
 * retried and dead-lettered in silence. Only the embedded database fails that way (PostgreSQL took
 * the 300 MB, slowly), so this runs on the embedded product's stack: in-memory PGlite, in-process
 * command bus and job queue, one engine with its executors.
 */
describe('with-items over 5,000 items from the execution input (embedded stack: PGlite, in-process bus and jobs)', () => {
  let ds: DataSource;
  let engine: EngineInstance;
  let bus: CommandBus;
  let jobs: JobQueue;

  beforeAll(async () => {
    ds = await createDataSource(
      { kind: 'pglite', dataDir: PGLITE_MEMORY },
      [],
      combineMigrations(messagingMigrations, definitionMigrations, executionMigrations) as never,
    );
    await storeWorkflows(
      ds,
      `
version: '2.0'
items_input:
  input: [items]
  tasks:
    each:
      with-items: i in <% $.items %>
      action: std.echo output=<% $.i %>
      publish: {echoed: <% task().result %>}
`,
    );
    ({ bus, jobs } = inProcessMessaging());
    engine = new EngineInstance(ds, bus, jobs, { prefetch: 64, executorConcurrency: 50 });
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    await bus?.close();
    await jobs?.close();
    if (ds) await closeDataSource(ds);
  }, 60_000);

  it('reaches SUCCESS with one action execution per item and the results in item order', async () => {
    const items = Array.from({ length: ITEMS }, (_, i) => `item-${i}`);
    const id = await startExecution(ds, engine.outbox, 'items_input', { items });
    // the bound only turns a stall into a failure; the machine's load decides the actual time
    const row = await waitForState(ds, id, undefined, 280_000);
    expect(row['state_info']).toBeNull();
    expect(row['state']).toBe('SUCCESS');
    expect((row['output'] as { echoed: string[] }).echoed).toEqual(items);
    const [{ n }] = (await ds.query(
      `SELECT count(*)::int AS n FROM "action_executions" WHERE "workflow_execution_id" = $1 AND "state" = 'SUCCESS'`,
      [id],
    )) as [{ n: number }];
    expect(n).toBe(ITEMS);
  }, 300_000);
});
