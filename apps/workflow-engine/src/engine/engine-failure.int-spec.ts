import type { DataSource } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, engineCommand } from '@osc/contracts';
import type { CommandBus, JobQueue, MessagingLogger } from '@osc/messaging';
import { failExecutionRow } from '@osc/workflow-persistence';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  waitForState,
} from '../../test/engine-harness';

const WORKFLOWS = `
version: '2.0'
waits:
  tasks:
    wait:
      action: std.async_noop
corrupt:
  tasks:
    one:
      action: std.noop
`;

/**
 * Issue 15 (2) / 17 (4): a command the engine cannot apply must not leave its execution RUNNING with
 * nothing happening and nothing said. Before, such a command was retried and then dead-lettered
 * without a word, and the execution stayed RUNNING for good.
 */
describe('engine: a command that cannot be applied ends its execution in ERROR (in-process bus, PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let engine: EngineInstance;
  let bus: CommandBus;
  let jobs: JobQueue;
  const logged: { level: 'warn' | 'error'; message: string; context?: Record<string, unknown> }[] = [];
  const logger: MessagingLogger = {
    warn: (message, context) => logged.push({ level: 'warn', message, context }),
    error: (message, context) => logged.push({ level: 'error', message, context }),
  };

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(ds, WORKFLOWS);
    // a stored spec naming a start task it does not define: decide throws for it
    await ds.query(
      `UPDATE "workflow_definitions" SET "spec" = jsonb_set("spec", '{startTasks}', '["ghost"]') WHERE "name" = 'corrupt'`,
    );
    ({ bus, jobs } = inProcessMessaging());
    engine = new EngineInstance(ds, bus, jobs, { logger });
    await engine.start();
  }, 30_000);

  afterAll(async () => {
    await engine?.stop();
    await bus?.close();
    await jobs?.close();
    await db?.drop();
  });

  it('a result PostgreSQL refuses to store (a NUL character) ends the execution in ERROR, logged with its id', async () => {
    const id = await startExecution(ds, engine.outbox, 'waits');
    let actionId: string | undefined;
    let taskId: string | undefined;
    while (!actionId) {
      const rows: { id: string; task_execution_id: string }[] = await ds.query(
        `SELECT "id", "task_execution_id" FROM "action_executions" WHERE "workflow_execution_id" = $1`,
        [id],
      );
      actionId = rows[0]?.id;
      taskId = rows[0]?.task_execution_id;
      if (!actionId) await new Promise((r) => setImmediate(r));
    }
    // what an executor reports for an action whose response held a NUL byte
    await bus.publish(
      ENGINE_COMMAND_QUEUE,
      engineCommand(`action-completed:${actionId}`, 'engine.action-completed', {
        executionId: id,
        taskExecutionId: taskId!,
        actionExecutionId: actionId,
        state: 'SUCCESS',
        result: 'before\u0000after',
      }),
    );
    const row = await waitForState(ds, id);
    expect(row['state']).toBe('ERROR');
    expect(row['state_info']).toMatch(
      /^The engine failed to apply the command engine\.action-completed to this execution \[error=QueryFailedError: .*\]$/,
    );
    expect(logged).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: expect.stringContaining(id),
        context: expect.objectContaining({ executionId: id, command: 'engine.action-completed' }),
      }),
    );
  }, 30_000);

  it('a decision that throws ends the execution in ERROR at the first delivery', async () => {
    const id = await startExecution(ds, engine.outbox, 'corrupt');
    const row = await waitForState(ds, id);
    expect(row['state']).toBe('ERROR');
    expect(row['state_info']).toBe(
      'The engine failed to apply the command engine.start-execution to this execution [error=Error: task ghost is not in workflow corrupt]',
    );
    const mine = logged.filter((l) => l.context?.['executionId'] === id);
    // no redelivery: the one error line, no warning about a retry
    expect(mine.map((l) => [l.level, l.context?.['delivery']])).toEqual([['error', 1]]);
  }, 30_000);

  it('the last resort (no snapshot) sets ERROR only from a state the domain lets move to ERROR', async () => {
    const id = await startExecution(ds, engine.outbox, 'waits');
    expect(await failExecutionRow(ds, id, 'why', new Date())).toBe(true);
    const [row] = (await ds.query(
      `SELECT "state", "state_info", "output" FROM "workflow_executions" WHERE "id" = $1`,
      [id],
    )) as Record<string, unknown>[];
    expect(row).toEqual({ state: 'ERROR', state_info: 'why', output: { result: 'why' } });
    // the change is in the execution's history, as the engine's own changes are
    const history = (await ds.query(
      `SELECT "subject", "previous_state", "state", "state_info" FROM "execution_events" WHERE "root_execution_id" = $1 AND "subject" = 'execution' ORDER BY "seq"`,
      [id],
    )) as Record<string, unknown>[];
    expect(history.at(-1)).toEqual({
      subject: 'execution',
      previous_state: 'RUNNING',
      state: 'ERROR',
      state_info: 'why',
    });
    // ERROR keeps its first reason; SUCCESS is final
    expect(await failExecutionRow(ds, id, 'again', new Date())).toBe(false);
    await ds.query(`UPDATE "workflow_executions" SET "state" = 'SUCCESS' WHERE "id" = $1`, [id]);
    expect(await failExecutionRow(ds, id, 'late', new Date())).toBe(false);
    const [after] = (await ds.query(
      `SELECT "state", "state_info" FROM "workflow_executions" WHERE "id" = $1`,
      [id],
    )) as Record<string, unknown>[];
    expect(after).toEqual({ state: 'SUCCESS', state_info: 'why' });
  }, 30_000);
});
