import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { DataSource } from 'typeorm';
import { BullMqJobQueue, OutboxRelay, OutboxWriter } from '@osc/messaging';
import { purgeTestPrefix } from '@osc/testing';
import {
  createEngineDatabase,
  prefixedBus,
  prefixedJobs,
  startExecution,
  storeWorkflows,
  spawnEngineProcess,
  killChildren,
  testRabbitBus,
} from '../../test/engine-harness';

const N = 50;

/**
 * Two engine processes (engine + executors each) on PostgreSQL, RabbitMQ and BullMQ run 50
 * executions; one is killed with SIGKILL mid-run and restarted. Every execution must still finish,
 * no task may run twice, and the side-effecting std.http task must hit the receiver exactly once per
 * successful execution (an action interrupted by the kill fails instead of repeating, DSL-6.10).
 */
describe('crash of one of two engine processes (distributed)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let receiver: Server;
  let port = 0;
  const hits = new Map<string, number>();
  const children: ChildProcess[] = [];
  const prefix = `crash${randomBytes(4).toString('hex')}.`;
  const bullPrefix = `crash${randomBytes(4).toString('hex')}`;
  let relay: OutboxRelay;
  let close: () => Promise<void>;
  const outbox = new OutboxWriter();

  const startEngine = (): Promise<ChildProcess> =>
    spawnEngineProcess({ databaseUrl: db.url, queuePrefix: prefix, bullPrefix, children });

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const id = req.url?.split('/').pop() ?? '';
      hits.set(id, (hits.get(id) ?? 0) + 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok": true}');
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as { port: number }).port;
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(
      ds,
      `
version: '2.0'
crashy:
  tasks:
    t1:
      action: std.sleep seconds=1
      safe-rerun: true
      on-success: t2
    t2:
      action: std.http url=<% 'http://127.0.0.1:${port}/hit/' + execution().id %>
      on-success: t3
    t3:
      action: std.sleep seconds=1
      safe-rerun: true
      on-success: t4
    t4:
      action: std.noop
`,
    );
    const bus = prefixedBus(testRabbitBus(), prefix);
    const jobs = prefixedJobs(
      new BullMqJobQueue({ url: 'redis://127.0.0.1:6379', prefix: bullPrefix }),
      prefix,
    );
    relay = new OutboxRelay(ds, bus, jobs, { pollIntervalMs: 100 });
    outbox.onCommitted(() => relay.notify());
    await relay.start();
    close = async () => {
      await relay.stop();
      await bus.close();
      await jobs.close();
    };
    await startEngine();
    await startEngine();
  }, 60_000);

  afterAll(async () => {
    await killChildren(children);
    await close?.();
    // The run's RabbitMQ queues and BullMQ keys; the killed engines never got to clean up.
    await purgeTestPrefix({ queuePrefix: prefix, bullPrefix });
    await db?.drop();
    await new Promise((r) => receiver?.close(r));
  }, 60_000);

  it('every execution finishes and no side effect is repeated', async () => {
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push(await startExecution(ds, outbox, 'crashy'));
    // Kill the first engine once some work is done but much is still in flight.
    for (;;) {
      const [{ n }] = (await ds.query(
        `SELECT count(*)::int AS n FROM "task_executions" WHERE "state" = 'SUCCESS'`,
      )) as [{ n: number }];
      if (n >= 40) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    children[0]!.kill('SIGKILL');
    // Only actions already running when the process died may be cut off: count them now (an upper
    // bound, as it includes the surviving process's running actions).
    const [{ inflight }] = (await ds.query(
      `SELECT count(*)::int AS inflight FROM "task_executions" WHERE "name" = 't2' AND "state" = 'RUNNING'`,
    )) as [{ inflight: number }];
    await startEngine();

    const deadline = Date.now() + 120_000;
    let rows: { id: string; state: string; state_info: string | null }[] = [];
    for (;;) {
      rows = await ds.query(
        `SELECT "id", "state", "state_info" FROM "workflow_executions" WHERE "id" = ANY($1::uuid[])`,
        [ids],
      );
      if (rows.every((r) => r.state !== 'RUNNING')) break;
      if (Date.now() > deadline)
        throw new Error(`still running: ${rows.filter((r) => r.state === 'RUNNING').length}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const dup: unknown[] = await ds.query(
      `SELECT "workflow_execution_id", "name" FROM "task_executions" WHERE "workflow_execution_id" = ANY($1::uuid[])
        GROUP BY 1, 2 HAVING count(*) > 1`,
      [ids],
    );
    expect(dup).toEqual([]);
    for (const r of rows) {
      const n = hits.get(r.id) ?? 0;
      if (r.state === 'SUCCESS') {
        expect({ id: r.id, hits: n }).toEqual({ id: r.id, hits: 1 });
      } else {
        // only the side-effecting (not safe-rerun) action cut off by the kill may fail, and never ran twice
        expect(r.state_info).toMatch(/was interrupted/);
        expect(n).toBeLessThanOrEqual(1);
      }
    }
    expect(rows.filter((r) => r.state !== 'SUCCESS').length).toBeLessThanOrEqual(inflight);
  }, 180_000);
});
