import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { DataSource } from 'typeorm';
import { BullMqJobQueue, OutboxRelay, OutboxWriter } from '@osc/messaging';
import { purgeTestPrefix } from '@osc/testing';
import { EXECUTOR_LOST } from '@osc/workflow-domain';
import {
  createEngineDatabase,
  killChildren,
  prefixedBus,
  prefixedJobs,
  spawnEngineProcess,
  startExecution,
  storeWorkflows,
  testRabbitBus,
  waitForState,
} from '../../test/engine-harness';
import { type Resolution, WorkflowReconciler } from './workflow-reconciler';

/**
 * An executor process killed with SIGKILL in the middle of an action (distributed: PostgreSQL,
 * RabbitMQ, BullMQ; engine and executor in separate processes). Its heartbeat goes stale and the
 * reconciler (dead bound 2 s here) fails the action with the executor sentence, after which the
 * task's retry runs a new action; a safe-rerun task's action runs again instead. The receiver never
 * answers the first call of each execution (the action is mid-flight when the executor dies).
 */
describe('an executor killed mid-action (distributed)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let receiver: Server;
  let port = 0;
  const hits = new Map<string, number>();
  const children: ChildProcess[] = [];
  const prefix = `wfkill${randomBytes(4).toString('hex')}.`;
  const bullPrefix = `wfkill${randomBytes(4).toString('hex')}`;
  const outbox = new OutboxWriter();
  let close: () => Promise<void>;

  const spawn = (role: 'engine' | 'executor') =>
    spawnEngineProcess(
      { databaseUrl: db.url, queuePrefix: prefix, bullPrefix, children },
      { ROLE: role, HEARTBEAT_MS: '300' },
    );

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const id = req.url?.split('/').pop() ?? '';
      const n = (hits.get(id) ?? 0) + 1;
      hits.set(id, n);
      if (n > 1) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok": true}');
      // the first call hangs: the action is running when its executor is killed
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as { port: number }).port;
    db = await createEngineDatabase();
    ds = db.dataSource;
    const url = `<% 'http://127.0.0.1:${port}/hit/' + execution().id %>`;
    await storeWorkflows(
      ds,
      `
version: '2.0'
killed_retry:
  tasks:
    t:
      action: std.http url=${url}
      retry: {count: 1, delay: 0}
killed_safe:
  tasks:
    t:
      action: std.http url=${url}
      safe-rerun: true
`,
    );
    const bus = prefixedBus(testRabbitBus(), prefix);
    const jobs = prefixedJobs(
      new BullMqJobQueue({ url: 'redis://127.0.0.1:6379', prefix: bullPrefix }),
      prefix,
    );
    const relay = new OutboxRelay(ds, bus, jobs, { pollIntervalMs: 100 });
    outbox.onCommitted(() => relay.notify());
    await relay.start();
    close = async () => {
      await relay.stop();
      await bus.close();
      await jobs.close();
    };
    await spawn('engine');
  }, 60_000);

  afterAll(async () => {
    await killChildren(children);
    await close?.();
    await purgeTestPrefix({ queuePrefix: prefix, bullPrefix });
    await db?.drop();
    receiver?.closeAllConnections();
    await new Promise((r) => receiver?.close(r));
  }, 60_000);

  it('fails the action with the executor sentence (then retry), or runs a safe-rerun action again', async () => {
    const executor = await spawn('executor');
    const retried = await startExecution(ds, outbox, 'killed_retry');
    const safe = await startExecution(ds, outbox, 'killed_safe');
    for (let delay = 10; !(hits.get(retried) && hits.get(safe)); delay = Math.min(delay * 2, 100)) {
      await new Promise((r) => setTimeout(r, delay));
    }
    const [{ executor_id: executorId }] = (await ds.query(
      `SELECT DISTINCT "executor_id" FROM "action_executions" WHERE "workflow_execution_id" = $1`,
      [retried],
    )) as [{ executor_id: string }];
    executor.kill('SIGKILL');
    await new Promise((r) => executor.once('exit', r));

    const reconciler = new WorkflowReconciler(
      ds,
      outbox,
      { stuckAfterSeconds: 3600, executorDeadAfterSeconds: 2 },
      () => undefined,
    );
    const done: Resolution[] = [];
    while (!done.some((r) => r.executionId === retried) || !done.some((r) => r.executionId === safe)) {
      done.push(...(await reconciler.pass()));
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(done.map((r) => [r.executionId, r.kind]).sort()).toEqual(
      [
        [retried, 'fail-action'],
        [safe, 'run-action-again'],
      ].sort(),
    );
    await spawn('executor');

    expect((await waitForState(ds, retried, undefined, 60_000))['state']).toBe('SUCCESS');
    expect((await waitForState(ds, safe, undefined, 60_000))['state']).toBe('SUCCESS');
    const actions = async (id: string) =>
      (await ds.query(
        `SELECT "state", "state_info" FROM "action_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`,
        [id],
      )) as {
        state: string;
        state_info: string | null;
      }[];
    const [first, second, ...more] = await actions(retried);
    expect(first).toEqual({
      state: 'ERROR',
      state_info: expect.stringContaining(`${EXECUTOR_LOST} (executor ${executorId}, last heartbeat `),
    });
    expect([second?.state, more]).toEqual(['SUCCESS', []]);
    expect((await actions(safe)).map((a) => a.state)).toEqual(['SUCCESS']);
  }, 120_000);
});
