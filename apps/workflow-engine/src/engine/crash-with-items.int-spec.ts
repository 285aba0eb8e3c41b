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
const EXECUTOR_CONCURRENCY = 20;

/**
 * SIGKILL of one of two engine processes (engine + executors each) in the middle of a with-items task
 * of 2,000 side-effecting std.http items, then a restart. The task must end, every item must have
 * exactly one action execution, and no item may hit the receiver twice: an item cut off by the kill
 * is not safe-rerun, so it fails as interrupted (DSL-6.10) instead of repeating.
 */
describe('SIGKILL of an engine during a with-items run of 2,000 items (distributed)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let receiver: Server;
  let port = 0;
  const hits = new Map<string, number>();
  const children: ChildProcess[] = [];
  const prefix = `crashitems${randomBytes(4).toString('hex')}.`;
  const bullPrefix = `crashitems${randomBytes(4).toString('hex')}`;
  let relay: OutboxRelay;
  let close: () => Promise<void>;
  const outbox = new OutboxWriter();

  const startEngine = (): Promise<ChildProcess> =>
    spawnEngineProcess(
      { databaseUrl: db.url, queuePrefix: prefix, bullPrefix, children },
      { EXECUTOR_CONCURRENCY: String(EXECUTOR_CONCURRENCY) },
    );

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const item = req.url?.split('/').pop() ?? '';
      hits.set(item, (hits.get(item) ?? 0) + 1);
      // a few ms per item, so that many items are in flight when the engine dies
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok": true}'), 5);
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    port = (receiver.address() as { port: number }).port;
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(
      ds,
      `
version: '2.0'
items_crash:
  tasks:
    each:
      with-items: i in <% range(${ITEMS}) %>
      action: std.http url=<% 'http://127.0.0.1:${port}/item/' + str($.i) %>
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

  it('every item has one action execution and none runs twice', async () => {
    const id = await startExecution(ds, outbox, 'items_crash');
    const deadline = Date.now() + 60_000;
    while ([...hits.values()].length < ITEMS / 4) {
      if (Date.now() > deadline) throw new Error(`only ${hits.size} items ran`);
      await new Promise((r) => setTimeout(r, 10));
    }
    children[0]!.kill('SIGKILL');
    await new Promise((r) => children[0]!.once('exit', r));
    const ranAtKill = hits.size;
    await startEngine();

    const until = Date.now() + 150_000;
    let ex: { state: string; state_info: string | null } | undefined;
    for (;;) {
      [ex] = (await ds.query(`SELECT "state", "state_info" FROM "workflow_executions" WHERE "id" = $1`, [
        id,
      ])) as { state: string; state_info: string | null }[];
      if (ex && ex.state !== 'RUNNING') break;
      if (Date.now() > until) throw new Error(`execution still RUNNING, ${hits.size} items ran`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(ranAtKill).toBeLessThan(ITEMS);
    const actions: { item_index: number; state: string; state_info: string | null; n: number }[] =
      await ds.query(
        `SELECT "item_index", min("state") AS "state", min("state_info") AS "state_info", count(*)::int AS "n"
         FROM "action_executions" WHERE "workflow_execution_id" = $1 GROUP BY "item_index" ORDER BY "item_index"`,
        [id],
      );
    // one action execution per item, for every item
    expect(actions.length).toBe(ITEMS);
    expect(actions.filter((a) => a.n !== 1)).toEqual([]);
    // no side effect twice
    expect([...hits.entries()].filter(([, n]) => n > 1)).toEqual([]);
    const failed = actions.filter((a) => a.state !== 'SUCCESS');
    // only items cut off by the kill may fail, as interrupted, and at most what that executor held:
    // its slots (a run holds one from before its claim until its report is confirmed)
    for (const a of failed)
      expect({ item: a.item_index, state: a.state, info: a.state_info }).toMatchObject({
        state: 'ERROR',
        info: expect.stringMatching(/was interrupted/),
      });
    expect(failed.length).toBeLessThanOrEqual(EXECUTOR_CONCURRENCY);
    // every item that succeeded hit the receiver exactly once
    for (const a of actions.filter((x) => x.state === 'SUCCESS'))
      expect({ item: a.item_index, hits: hits.get(String(a.item_index)) }).toEqual({
        item: a.item_index,
        hits: 1,
      });
    expect(ex!.state).toBe(failed.length === 0 ? 'SUCCESS' : 'ERROR');
  }, 240_000);
});
