import type { DataSource } from 'typeorm';
import { OutboxWriter } from '@osc/messaging';
import { systemClock } from '@osc/platform';
import {
  type CronTestDatabase,
  createCronTestDatabase,
  firedExecutions,
  seedDueTriggers,
  seedWorkflow,
} from '../../test/cron-fixture';
import { CronPoller } from './cron-poller';
import { CronTriggerFiring, type FiredTrigger } from './cron-trigger-firing';

jest.setTimeout(60_000);

/** A scheduler replica: its own pool, firing and poller (as a separate process would have). */
async function replica(
  db: CronTestDatabase,
  fired: FiredTrigger[],
  opts: {
    batchSize?: number;
    beforeCommit?: (tx: { query(sql: string): Promise<unknown> }) => Promise<void>;
  } = {},
) {
  const ds = await db.connect(3);
  const firing = new CronTriggerFiring(ds, new OutboxWriter(), systemClock, {
    batchSize: opts.batchSize ?? 20,
    onFired: (f) => fired.push(...f),
    ...(opts.beforeCommit ? { beforeCommit: opts.beforeCommit } : {}),
  });
  const poller = new CronPoller(ds, firing, systemClock, { maxSleepMs: 200, busySleepMs: 10 });
  return { ds, firing, poller };
}

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const remaining = async (ds: DataSource) =>
  Number((await ds.query(`SELECT count(*)::int AS n FROM "cron_triggers"`))[0].n);

describe('cron firing on PostgreSQL', () => {
  let db: CronTestDatabase;
  let seed: DataSource;

  beforeEach(async () => {
    db = await createCronTestDatabase('osc_cron');
    seed = await db.connect(2);
  });
  afterEach(async () => {
    await db?.drop();
  });

  it('3 replicas fire 200 triggers due at once exactly once, never early', async () => {
    const wf = await seedWorkflow(seed, 'p1');
    const at = new Date(Math.ceil((Date.now() + 2000) / 1000) * 1000);
    const ids = await seedDueTriggers(seed, wf, 'p1', 200, at);
    const fired: FiredTrigger[] = [];
    const replicas = await Promise.all([replica(db, fired), replica(db, fired), replica(db, fired)]);
    replicas.forEach((r) => r.poller.start());
    try {
      await until(async () => (await remaining(seed)) === 0);
    } finally {
      await Promise.all(replicas.map((r) => r.poller.stop()));
    }
    const { byTrigger, startCommands, executions } = await firedExecutions(seed);
    expect(executions).toBe(200);
    expect(startCommands).toBe(200);
    expect([...byTrigger.keys()].sort()).toEqual([...ids].sort());
    for (const list of byTrigger.values()) expect(list).toHaveLength(1);
    expect(fired).toHaveLength(200);
    const created: { created_at: Date }[] = await seed.query(
      `SELECT "created_at" FROM "workflow_executions"`,
    );
    for (const c of created) expect(new Date(c.created_at).getTime()).toBeGreaterThanOrEqual(at.getTime());
  });

  it('a pattern trigger counting down fires once per occurrence across replicas', async () => {
    const wf = await seedWorkflow(seed, 'p1');
    const at = new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000);
    const ids = await seedDueTriggers(seed, wf, 'p1', 20, at, 2, '* * * * * *');
    const fired: FiredTrigger[] = [];
    const replicas = await Promise.all([
      replica(db, fired, { batchSize: 3 }),
      replica(db, fired, { batchSize: 3 }),
      replica(db, fired, { batchSize: 3 }),
    ]);
    replicas.forEach((r) => r.poller.start());
    try {
      await until(async () => (await remaining(seed)) === 0);
    } finally {
      await Promise.all(replicas.map((r) => r.poller.stop()));
    }
    const { byTrigger } = await firedExecutions(seed);
    expect([...byTrigger.keys()].sort()).toEqual([...ids].sort());
    for (const list of byTrigger.values()) expect(list).toHaveLength(2);
    const times = new Map<string, number[]>();
    for (const f of fired)
      times.set(f.triggerId, [...(times.get(f.triggerId) ?? []), f.scheduledAt.getTime()]);
    for (const list of times.values()) expect(new Set(list).size).toBe(2);
  });

  it('a replica killed mid-firing loses and doubles nothing', async () => {
    const wf = await seedWorkflow(seed, 'p1');
    const at = new Date(Date.now() - 1000);
    const ids = await seedDueTriggers(seed, wf, 'p1', 60, at);
    const fired: FiredTrigger[] = [];
    // The doomed replica claims a batch, writes executions and outbox rows, then its database session
    // dies before COMMIT (what a killed process looks like to PostgreSQL).
    const doomed = await replica(db, [], {
      batchSize: 25,
      beforeCommit: async (tx) => {
        await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
      },
    });
    await expect(doomed.firing.fireBatch()).rejects.toThrow();
    expect(await remaining(seed)).toBe(60);
    expect((await firedExecutions(seed)).executions).toBe(0);

    const survivors = await Promise.all([replica(db, fired), replica(db, fired)]);
    survivors.forEach((r) => r.poller.start());
    try {
      await until(async () => (await remaining(seed)) === 0);
    } finally {
      await Promise.all(survivors.map((r) => r.poller.stop()));
    }
    const { byTrigger, startCommands, executions } = await firedExecutions(seed);
    expect(executions).toBe(60);
    expect(startCommands).toBe(60);
    expect([...byTrigger.keys()].sort()).toEqual([...ids].sort());
    for (const list of byTrigger.values()) expect(list).toHaveLength(1);
  });

  it('a trigger deleted while a replica holds it is fired by that replica or never', async () => {
    const wf = await seedWorkflow(seed, 'p1');
    const [id] = await seedDueTriggers(
      seed,
      wf,
      'p1',
      1,
      new Date(Date.now() - 1000),
      null as never,
      '* * * * * *',
    );
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const claimedP = new Promise<void>((r) => (claimed = r));
    const r = await replica(db, [], {
      beforeCommit: async () => {
        claimed();
        await held;
      },
    });
    const firing = r.firing.fireBatch();
    await claimedP;
    // The API's delete locks the row: it waits for the firing transaction, then removes the trigger.
    const del = seed.transaction(async (em) => {
      await em.query(`SELECT "id" FROM "cron_triggers" WHERE "id" = $1 FOR UPDATE`, [id]);
      await em.query(`DELETE FROM "cron_triggers" WHERE "id" = $1`, [id]);
    });
    await new Promise((res) => setTimeout(res, 200));
    release();
    await firing;
    await del;
    expect(await remaining(seed)).toBe(0);
    expect(await r.firing.fireDue()).toBe(0);
    expect((await firedExecutions(seed)).executions).toBe(1);
  });

  it('catches up after downtime by firing once, then resumes the pattern after now', async () => {
    const wf = await seedWorkflow(seed, 'p1');
    const [id] = await seedDueTriggers(
      seed,
      wf,
      'p1',
      1,
      new Date(Date.now() - 3600_000),
      null as never,
      '* * * * *',
    );
    const fired: FiredTrigger[] = [];
    const r = await replica(db, fired);
    const before = Date.now();
    expect(await r.firing.fireDue()).toBe(1);
    expect(await r.firing.fireDue()).toBe(0);
    expect((await firedExecutions(seed)).executions).toBe(1);
    const rows: { next_execution_time: Date }[] = await seed.query(
      `SELECT "next_execution_time" FROM "cron_triggers" WHERE "id" = $1`,
      [id],
    );
    const next = new Date(rows[0]!.next_execution_time);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime() - before).toBeLessThanOrEqual(60_000);
    expect(next.getUTCSeconds()).toBe(0);
  });
});
