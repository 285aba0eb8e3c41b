import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import {
  SpecCache,
  type StatementBatchRunner,
  lockSnapshot,
  lockSnapshots,
  lockSnapshotsAtOnce,
} from '@osc/workflow-persistence';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  taskStates,
} from '../../test/engine-harness';
import { inSnapshotTransaction } from './snapshot-transactions';

const WORKFLOWS = `
version: '2.0'
waits:
  tasks:
    first:
      action: std.noop
      on-success: hold
    hold:
      action: std.async_noop
parent:
  tasks:
    call:
      workflow: waits
items:
  tasks:
    each:
      with-items: i in <% range(3) %>
      action: std.async_noop
`;

/** The engine's group transactions load several executions at once: the same snapshots as one by one. */
describe('lockSnapshots (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let engine: EngineInstance;

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(ds, WORKFLOWS);
    const { bus, jobs } = inProcessMessaging();
    engine = new EngineInstance(ds, bus, jobs);
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    await db?.drop();
  });

  const waitFor = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** An execution of `items` whose three item actions run, and their rows' ids in item order. */
  const runningItems = async (): Promise<{ c: string; items: { id: string }[] }> => {
    const c = await startExecution(ds, engine.outbox, 'items');
    await waitFor(async () => (await taskStates(ds, c))['each'] === 'RUNNING');
    const items: { id: string }[] = await ds.query(
      `SELECT "id" FROM "action_executions" WHERE "workflow_execution_id" = $1 ORDER BY "item_index"`,
      [c],
    );
    return { c, items };
  };

  it('returns, for each execution, what lockSnapshot returns, and skips unknown ids', async () => {
    const a = await startExecution(ds, engine.outbox, 'waits');
    const b = await startExecution(ds, engine.outbox, 'parent');
    const c = await startExecution(ds, engine.outbox, 'items');
    await waitFor(async () => (await taskStates(ds, a))['hold'] === 'RUNNING');
    await waitFor(async () => (await taskStates(ds, c))['each'] === 'RUNNING');
    await waitFor(
      async () =>
        (await ds.query(`SELECT 1 FROM "workflow_executions" WHERE "parent_execution_id" = $1`, [b]))
          .length === 1,
    );
    const itemActions: { id: string }[] = await ds.query(
      `SELECT "id" FROM "action_executions" WHERE "workflow_execution_id" = $1 ORDER BY "item_index"`,
      [c],
    );
    expect(itemActions).toHaveLength(3);
    const named = new Map([[c, [itemActions[1]!.id]]]);
    const missing = randomUUID();

    const one = await ds.transaction(async (em) => ({
      a: await lockSnapshot(em, a),
      b: await lockSnapshot(em, b, new SpecCache(), []),
      c: await lockSnapshot(em, c, new SpecCache(), [itemActions[1]!.id]),
    }));
    const cache = new SpecCache();
    const spec = one.a!.execution.spec;
    cache.set(a, spec); // a cached spec is used as is, an uncached one is loaded
    const many = await ds.transaction((em) => lockSnapshots(em, [c, missing, b, a], cache, named));

    expect([...many.keys()].sort()).toEqual([a, b, c].sort());
    // the successful action of the task that succeeded (`first`) is left out; `hold`'s is there
    const succeeded = new Set(one.a!.tasks.filter((t) => t.state === 'SUCCESS').map((t) => t.id));
    expect(succeeded.size).toBe(1);
    const kept = one.a!.actions.filter((x) => !(x.state === 'SUCCESS' && succeeded.has(x.taskExecutionId)));
    expect(one.a!.actions).toHaveLength(2);
    expect(kept).toHaveLength(1);
    expect(many.get(a)).toEqual({
      ...one.a,
      actions: kept.map((x) => expect.objectContaining({ ...x })),
    });
    expect(many.get(b)).toEqual(one.b);
    expect(many.get(b)!.subExecutions).toHaveLength(1);
    expect(many.get(c)).toEqual(one.c);
    // only the named item action of the with-items task
    expect(many.get(c)!.actions.map((x) => x.id)).toEqual([itemActions[1]!.id]);
    expect(many.get(a)!.execution.spec).toBe(spec);

    // the lock and the load in the transaction's first round trip: the same snapshots
    const atOnce = await inSnapshotTransaction(ds, cache, [c, missing, b, a], named, async (_, s) => s);
    expect([...atOnce.keys()].sort()).toEqual([a, b, c].sort());
    for (const id of [a, b, c]) expect(atOnce.get(id)).toEqual(many.get(id));
    expect(atOnce.get(a)!.execution.spec).toBe(spec);
  });

  it('opens the transaction with the lock, loads what committed while it waited, commits and rolls back', async () => {
    const a = await startExecution(ds, engine.outbox, 'waits');
    await waitFor(async () => (await taskStates(ds, a))['hold'] === 'RUNNING');
    const qr = ds.createQueryRunner();
    await qr.startTransaction();
    await qr.query(`SELECT 1 FROM "workflow_executions" WHERE "id" = $1 FOR UPDATE`, [a]);
    let committed = 0;
    ds.subscribers.push({ afterTransactionCommit: () => void committed++ });
    const loaded = inSnapshotTransaction(ds, new SpecCache(), [a], new Map(), async (em, s) => {
      // the transaction is open and holds the lock: another locker waits
      const inTx: { now: Date }[] = await em.query(`SELECT now() <> statement_timestamp() AS "now"`);
      expect(inTx[0]!.now).toBe(true);
      await em.query(`UPDATE "workflow_executions" SET "description" = 'seen' WHERE "id" = $1`, [a]);
      return s.get(a)!;
    });
    // a task renamed while the lock was held is seen by the load that follows the lock
    await new Promise((r) => setTimeout(r, 100));
    await qr.query(`UPDATE "task_executions" SET "state_info" = 'late' WHERE "workflow_execution_id" = $1`, [
      a,
    ]);
    await qr.commitTransaction();
    await qr.release();
    const snapshot = await loaded;
    expect(snapshot.tasks.map((t) => t.stateInfo)).toEqual(snapshot.tasks.map(() => 'late'));
    expect(committed).toBeGreaterThan(0);
    const rows: { description: string }[] = await ds.query(
      `SELECT "description" FROM "workflow_executions" WHERE "id" = $1`,
      [a],
    );
    expect(rows[0]!.description).toBe('seen');

    // a failure rolls back and frees the connection's transaction (and the lock)
    await expect(
      inSnapshotTransaction(ds, new SpecCache(), [a], new Map(), async (em) => {
        await em.query(`UPDATE "workflow_executions" SET "description" = 'lost' WHERE "id" = $1`, [a]);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const after: { description: string }[] = await ds.query(
      `SELECT "description" FROM "workflow_executions" WHERE "id" = $1 FOR UPDATE NOWAIT`,
      [a],
    );
    expect(after[0]!.description).toBe('seen');
    // a failing lock statement (an id that is no uuid) leaves no transaction open on the pooled connection
    await expect(
      inSnapshotTransaction(ds, new SpecCache(), ["x'; SELECT 1; --"], new Map(), async () => 1),
    ).rejects.toThrow(/uuid/);
    // (the engine of this test runs beside it: its relay's pass is idle in a transaction while it
    // publishes, for a moment; a transaction left open stays so)
    const idleInTransaction = async (): Promise<number> =>
      Number(
        (
          await ds.query(
            `SELECT count(*) AS "n" FROM pg_stat_activity WHERE "datname" = current_database() AND "state" LIKE 'idle in transaction%'`,
          )
        )[0].n,
      );
    await waitFor(async () => (await idleInTransaction()) === 0);
  });

  it('locks and loads through statements prepared once per connection, with generic plans that read by index', async () => {
    const { c, items } = await runningItems();
    const named = new Map([[c, { ids: [items[1]!.id], failing: [] }]]);
    const qr = ds.createQueryRunner();
    const client = (await qr.connect()) as StatementBatchRunner;
    try {
      const plans = async (): Promise<Record<string, [number, number]>> =>
        Object.fromEntries(
          (
            (await qr.query(
              `SELECT "name", "generic_plans", "custom_plans" FROM pg_prepared_statements WHERE "name" LIKE 'osc_snapshot_%'`,
            )) as { name: string; generic_plans: string; custom_plans: string }[]
          ).map((r) => [r.name, [Number(r.generic_plans), Number(r.custom_plans)]]),
        );
      const before = await plans();
      for (let i = 0; i < 3; i++) {
        const s = await lockSnapshotsAtOnce(client, qr.manager, [c], new SpecCache(), named, { begin: true });
        expect(s.get(c)!.actions.map((x) => x.id)).toEqual([items[1]!.id]);
        await qr.query('ROLLBACK');
      }
      // prepared on this connection, never planned for the values at hand
      const after = await plans();
      for (const name of ['osc_snapshot_lock', 'osc_snapshot_load']) {
        expect(after[name]![0] - (before[name]?.[0] ?? 0)).toBe(3);
        expect(after[name]![1]).toBe(0);
      }
      // the settings stay with those two statements: the transaction's other statements plan as usual
      const settings = (): Promise<{ mode: string; seq: string; jit: string }[]> =>
        qr.query(
          `SELECT current_setting('plan_cache_mode') AS "mode", current_setting('enable_seqscan') AS "seq",
                  current_setting('jit') AS "jit"`,
        );
      const usual = await settings();
      expect(usual[0]).toEqual({ mode: 'auto', seq: 'on', jit: 'on' });
      await qr.query('START TRANSACTION');
      await lockSnapshotsAtOnce(client, qr.manager, [c], new SpecCache(), named);
      expect(await settings()).toEqual(usual);
      await qr.query('ROLLBACK');
    } finally {
      await qr.release();
    }
  });

  it('keeps plans made on an empty database that read every table through an index', async () => {
    // a plan is made once and kept: made on empty tables, where a sequential scan looks cheapest, it
    // must not scan them once they have grown
    const empty = await createEngineDatabase();
    const qr = empty.dataSource.createQueryRunner();
    try {
      const client = (await qr.connect()) as StatementBatchRunner;
      const id = randomUUID();
      const named = new Map([[id, { ids: [randomUUID()], failing: [randomUUID()] }]]);
      expect(
        (await lockSnapshotsAtOnce(client, qr.manager, [id], new SpecCache(), named, { begin: true })).size,
      ).toBe(0);
      await qr.query('ROLLBACK');
      await qr.query('START TRANSACTION');
      await qr.query('SET LOCAL plan_cache_mode = force_generic_plan');
      for (const statement of [
        `osc_snapshot_lock('{}', '{}', '{}')`,
        `osc_snapshot_load('{}', '{}', '{}')`,
      ]) {
        const plan = ((await qr.query(`EXPLAIN EXECUTE ${statement}`)) as { 'QUERY PLAN': string }[])
          .map((r) => r['QUERY PLAN'])
          .join('\n');
        expect(plan).toMatch(/Index Scan/);
        expect(plan).not.toMatch(/Seq Scan/);
      }
      await qr.query('ROLLBACK');
    } finally {
      await qr.release();
      await empty.drop();
    }
  });

  it('gives named item actions their position in the task only when an event fails them', async () => {
    const { c, items } = await runningItems();
    const [, second, third] = items.map((r) => r.id);
    const load = (named: { ids: string[]; failing: string[] }) =>
      ds.transaction(async (em) => ({
        one: await lockSnapshot(em, c, new SpecCache(), named),
        many: (await lockSnapshots(em, [c], new SpecCache(), new Map([[c, named]]))).get(c),
      }));
    const ordinals = (s: Awaited<ReturnType<typeof lockSnapshot>>) =>
      s!.actions.map((x) => [x.id, x.ordinal]);

    const succeeding = await load({ ids: [second!, third!], failing: [] });
    expect(ordinals(succeeding.one)).toEqual([
      [second, undefined],
      [third, undefined],
    ]);
    expect(succeeding.many).toEqual(succeeding.one);

    const failing = await load({ ids: [second!, third!], failing: [third!] });
    expect(ordinals(failing.one)).toEqual([
      [second, 1],
      [third, 2],
    ]);
    expect(failing.many).toEqual(failing.one);
    const atOnce = await inSnapshotTransaction(
      ds,
      new SpecCache(),
      [c],
      new Map([[c, { ids: [second!, third!], failing: [third!] }]]),
      async (_, s) => s.get(c),
    );
    expect(atOnce).toEqual(failing.one);
    // a plain list counts every named action as failing (the positions are always there)
    const plain = await ds.transaction((em) => lockSnapshot(em, c, new SpecCache(), [third!]));
    expect(ordinals(plain)).toEqual([[third, 2]]);
  });
});
