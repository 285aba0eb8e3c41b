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

const N = 6;
const DELAY_S = 3;

/**
 * SIGKILL of the only engine process while every execution waits in a retry delay (DSL-6.8). The
 * delay is a delayed job in Redis, not a sleep of the dead process: after a restart each retry runs
 * exactly once and never before its delay is over. A local HTTP receiver records when each
 * execution's action ran; its first call fails (500), the retry succeeds.
 */
describe('SIGKILL of the engine during a retry delay (distributed)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let receiver: Server;
  let port = 0;
  const hits = new Map<string, number[]>();
  const children: ChildProcess[] = [];
  const prefix = `crashretry${randomBytes(4).toString('hex')}.`;
  const bullPrefix = `crashretry${randomBytes(4).toString('hex')}`;
  let relay: OutboxRelay;
  let close: () => Promise<void>;
  const outbox = new OutboxWriter();

  const startEngine = (): Promise<ChildProcess> =>
    spawnEngineProcess({ databaseUrl: db.url, queuePrefix: prefix, bullPrefix, children });

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const id = req.url?.split('/').pop() ?? '';
      const times = hits.get(id) ?? [];
      times.push(Date.now());
      hits.set(id, times);
      res.writeHead(times.length === 1 ? 500 : 200, { 'content-type': 'application/json' }).end('{"n": 1}');
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as { port: number }).port;
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(
      ds,
      `
version: '2.0'
retry_crash:
  tasks:
    t:
      action: std.http url=<% 'http://127.0.0.1:${port}/hit/' + execution().id %>
      retry: {count: 3, delay: ${DELAY_S}}
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
  }, 60_000);

  afterAll(async () => {
    await killChildren(children);
    await close?.();
    // The run's RabbitMQ queues and BullMQ keys; the killed engines never got to clean up.
    await purgeTestPrefix({ queuePrefix: prefix, bullPrefix });
    await db?.drop();
    await new Promise((r) => receiver?.close(r));
  }, 60_000);

  it.each([
    ['restarted within the delay', 0],
    ['restarted after the delay is over', (DELAY_S + 1) * 1000],
  ])(
    '%s: every retry runs once, and never before its delay',
    async (_name, downMs) => {
      const ids: string[] = [];
      for (let i = 0; i < N; i++) ids.push(await startExecution(ds, outbox, 'retry_crash'));
      // wait until every task failed its first attempt and sits in the retry delay
      const deadline = Date.now() + 30_000;
      for (;;) {
        const [{ n }] = (await ds.query(
          `SELECT count(*)::int AS n FROM "task_executions" WHERE "workflow_execution_id" = ANY($1::uuid[]) AND "state" = 'DELAYED'`,
          [ids],
        )) as [{ n: number }];
        if (n === N) break;
        if (Date.now() > deadline) throw new Error(`only ${n} of ${N} tasks reached DELAYED`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const engine = children[children.length - 1]!;
      engine.kill('SIGKILL');
      await new Promise((r) => engine.once('exit', r));
      expect(ids.map((id) => hits.get(id)?.length ?? 0)).toEqual(ids.map(() => 1));
      await new Promise((r) => setTimeout(r, downMs));
      await startEngine();

      const rows = await (async () => {
        const until = Date.now() + 60_000;
        for (;;) {
          const r: { id: string; state: string }[] = await ds.query(
            `SELECT "id", "state" FROM "workflow_executions" WHERE "id" = ANY($1::uuid[])`,
            [ids],
          );
          if (r.every((x) => x.state !== 'RUNNING')) return r;
          if (Date.now() > until)
            throw new Error(`still running: ${r.filter((x) => x.state === 'RUNNING').length}`);
          await new Promise((res) => setTimeout(res, 100));
        }
      })();
      expect(rows.map((r) => r.state)).toEqual(ids.map(() => 'SUCCESS'));
      await new Promise((r) => setTimeout(r, 500));
      for (const id of ids) {
        const times = hits.get(id) ?? [];
        // exactly one retry, and it waited the whole delay (the first call's request time is before
        // the delay was armed, so the gap can only be longer); generous upper bound for a loaded machine
        expect({ id, runs: times.length }).toEqual({ id, runs: 2 });
        const gap = times[1]! - times[0]!;
        expect(gap).toBeGreaterThanOrEqual(DELAY_S * 1000);
        expect(gap).toBeLessThan(DELAY_S * 1000 + 30_000);
      }
      const attempts: { n: number }[] = await ds.query(
        `SELECT count(*)::int AS n FROM "action_executions" WHERE "workflow_execution_id" = ANY($1::uuid[]) GROUP BY "workflow_execution_id"`,
        [ids],
      );
      expect(attempts.map((a) => a.n)).toEqual(ids.map(() => 2));
    },
    120_000,
  );
});
