import type { DataSource } from 'typeorm';
import { ACTION_RUN_JOB, ENGINE_COMMAND_QUEUE, engineCommand } from '@osc/contracts';
import { deadLetterQueueOf } from '@osc/messaging';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  waitForState,
} from '../../test/engine-harness';
import { DeadLetters } from './dead-letters';
import type { ReconcilerLog } from './reconciler-log';

/** Dead-lettered engine commands and action jobs that failed for good end their execution in ERROR, saying why. */
describe('DeadLetters', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let engine: EngineInstance;
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const log: ReconcilerLog = (level, msg, fields) => lines.push({ level, msg, fields });
  let dead: DeadLetters;
  const { bus, jobs } = inProcessMessaging();

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(
      ds,
      `
version: '2.0'
slow:
  tasks:
    t:
      action: std.echo
      input: {output: done, delay: 0.01}
`,
    );
    engine = new EngineInstance(ds, bus, jobs, { role: 'engine' });
    await engine.start();
    dead = new DeadLetters(ds, engine.outbox, log);
    await bus.consume(deadLetterQueueOf(ENGINE_COMMAND_QUEUE), (m) => dead.onEngineCommand(m));
  }, 30_000);
  afterAll(async () => {
    await engine?.stop();
    await db?.drop();
  });

  const runningAction = async (executionId: string): Promise<{ id: string; task_execution_id: string }> => {
    for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
      const rows: { id: string; task_execution_id: string }[] = await ds.query(
        `SELECT "id", "task_execution_id" FROM "action_executions" WHERE "workflow_execution_id" = $1 AND "state" = 'RUNNING'`,
        [executionId],
      );
      if (rows[0]) return rows[0];
      await new Promise((r) => setTimeout(r, delay));
    }
  };

  it('a dead-lettered engine command fails its execution with why, and logs an error naming it', async () => {
    const id = await startExecution(ds, engine.outbox, 'slow');
    await runningAction(id);
    // what the bus puts on the dead-letter queue after a command failed for good
    await bus.publish(deadLetterQueueOf(ENGINE_COMMAND_QUEUE), {
      ...engineCommand(`pause:${id}:x`, 'engine.pause-execution', { executionId: id }),
      headers: {
        'x-dead-letter-reason': 'rejected',
        'x-error': 'boom',
        'x-original-queue': ENGINE_COMMAND_QUEUE,
      },
    });
    const row = await waitForState(ds, id);
    expect(row).toMatchObject({
      state: 'ERROR',
      state_info: `dead letter: engine command engine.pause-execution (pause:${id}:x) failed for good (rejected): boom`,
    });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', fields: expect.objectContaining({ executionId: id }) }),
    );
  }, 30_000);

  it('a dead-lettered engine.actions-completed fails every execution it names', async () => {
    const ids = [
      await startExecution(ds, engine.outbox, 'slow'),
      await startExecution(ds, engine.outbox, 'slow'),
    ];
    const actions = await Promise.all(ids.map(runningAction));
    const results = ids.map((id, i) => ({
      executionId: id,
      taskExecutionId: actions[i]!.task_execution_id,
      actionExecutionId: actions[i]!.id,
      state: 'SUCCESS' as const,
    }));
    await bus.publish(deadLetterQueueOf(ENGINE_COMMAND_QUEUE), {
      ...engineCommand('actions-completed:x:2', 'engine.actions-completed', { results }),
      headers: {
        'x-dead-letter-reason': 'rejected',
        'x-error': 'boom',
        'x-original-queue': ENGINE_COMMAND_QUEUE,
      },
    });
    for (const id of ids) {
      expect(await waitForState(ds, id)).toMatchObject({
        state: 'ERROR',
        state_info:
          'dead letter: engine command engine.actions-completed (actions-completed:x:2) failed for good (rejected): boom',
      });
    }
  }, 30_000);

  it('when the failing command is dead-lettered too, the execution row is set to ERROR directly', async () => {
    const id = await startExecution(ds, engine.outbox, 'slow');
    await runningAction(id);
    await dead.onEngineCommand({
      ...engineCommand(`dead-letter:x:${id}`, 'engine.force-execution-state', {
        executionId: id,
        state: 'ERROR',
        message: 'm',
      }),
      headers: { 'x-dead-letter-reason': 'delivery-limit', 'x-error': 'db down' },
    });
    expect(
      (await ds.query(`SELECT "state", "state_info" FROM "workflow_executions" WHERE "id" = $1`, [id]))[0],
    ).toEqual({
      state: 'ERROR',
      state_info: `dead letter: engine command engine.force-execution-state (dead-letter:x:${id}) failed for good (delivery-limit): db down`,
    });
  }, 30_000);

  it('an action job that failed for good reports its run as ERROR', async () => {
    const id = await startExecution(ds, engine.outbox, 'slow');
    const action = await runningAction(id);
    const run = { actionExecutionId: action.id, executionId: id, taskExecutionId: action.task_execution_id };
    await dead.onActionJobFailed(
      { id: action.id, name: ACTION_RUN_JOB, data: run, attempt: 1 },
      new Error('redis gone'),
    );
    const row = await waitForState(ds, id);
    expect(row['state']).toBe('ERROR');
    expect(
      (
        await ds.query(`SELECT "state", "state_info" FROM "action_executions" WHERE "id" = $1`, [action.id])
      )[0],
    ).toEqual({
      state: 'ERROR',
      state_info: 'the action job failed for good after 1 attempt(s): redis gone',
    });
  }, 30_000);
});
