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

const ITEMS = 2000;

/**
 * SIGKILL of one of two engine processes (role engine: commands, timers, outbox relay) while a
 * with-items task of 2,000 side-effecting std.http items runs with `concurrency: 200`, so the engine
 * keeps starting items after the kill; the executors run in a third process that lives on. After a
 * restart the execution must reach SUCCESS with the results in item order, and every item must have
 * hit the receiver exactly once: a decision cut off by the kill is rolled back and redone from its
 * redelivered commands, and a run job relayed twice is claimed once.
 */
describe('SIGKILL of an engine-role process during a with-items run of 2,000 items (distributed)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let receiver: Server;
  let port = 0;
  const hits = new Map<string, number>();
  const children: ChildProcess[] = [];
  const prefix = `crashengine${randomBytes(4).toString('hex')}.`;
  const bullPrefix = `crashengine${randomBytes(4).toString('hex')}`;
  let relay: OutboxRelay;
  let close: () => Promise<void>;
  const outbox = new OutboxWriter();

  const startProcess = (role: 'engine' | 'executor'): Promise<ChildProcess> =>
    spawnEngineProcess(
      { databaseUrl: db.url, queuePrefix: prefix, bullPrefix, children },
      { ROLE: role, PREFETCH: '100', EXECUTOR_CONCURRENCY: '20' },
    );

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const item = req.url?.split('/').pop() ?? '';
      hits.set(item, (hits.get(item) ?? 0) + 1);
      setTimeout(
        () =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ i: Number(item) })),
        2,
      );
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as { port: number }).port;
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(
      ds,
      `
version: '2.0'
items_engine_crash:
  tasks:
    each:
      with-items: i in <% range(${ITEMS}) %>
      concurrency: 200
      action: std.http url=<% 'http://127.0.0.1:${port}/item/' + str($.i) %>
      publish: {r: <% task().result.select($.content.i) %>}
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
    await startProcess('engine');
    await startProcess('engine');
    await startProcess('executor');
  }, 60_000);

  afterAll(async () => {
    await killChildren(children);
    await close?.();
    // The run's RabbitMQ queues and BullMQ keys; the killed engines never got to clean up.
    await purgeTestPrefix({ queuePrefix: prefix, bullPrefix });
    await db?.drop();
    await new Promise((r) => receiver?.close(r));
  }, 60_000);

  it('reaches SUCCESS with every item run exactly once and the results in item order', async () => {
    const id = await startExecution(ds, outbox, 'items_engine_crash');
    const deadline = Date.now() + 60_000;
    while (hits.size < ITEMS / 4) {
      if (Date.now() > deadline) throw new Error(`only ${hits.size} items ran`);
      await new Promise((r) => setTimeout(r, 5));
    }
    children[0]!.kill('SIGKILL');
    await new Promise((r) => children[0]!.once('exit', r));
    const ranAtKill = hits.size;
    await startProcess('engine');

    const until = Date.now() + 150_000;
    let ex: { state: string; state_info: string | null; output: unknown } | undefined;
    for (;;) {
      [ex] = (await ds.query(
        `SELECT "state", "state_info", "output" FROM "workflow_executions" WHERE "id" = $1`,
        [id],
      )) as {
        state: string;
        state_info: string | null;
        output: unknown;
      }[];
      if (ex && ex.state !== 'RUNNING') break;
      if (Date.now() > until) throw new Error(`execution still RUNNING, ${hits.size} items ran`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ranAtKill).toBeLessThan(ITEMS);
    expect({ state: ex!.state, info: ex!.state_info }).toEqual({ state: 'SUCCESS', info: null });
    const output = (typeof ex!.output === 'string' ? JSON.parse(ex!.output) : ex!.output) as { r: number[] };
    expect(output.r).toEqual(Array.from({ length: ITEMS }, (_, i) => i));
    // every item hit the receiver exactly once
    expect(hits.size).toBe(ITEMS);
    expect([...hits.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    const [{ n, items }] = (await ds.query(
      `SELECT count(*)::int AS "n", count(DISTINCT "item_index")::int AS "items" FROM "action_executions" WHERE "workflow_execution_id" = $1`,
      [id],
    )) as [{ n: number; items: number }];
    expect({ n, items }).toEqual({ n: ITEMS, items: ITEMS });
  }, 240_000);
});
