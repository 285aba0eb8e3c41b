import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import {
  DEFAULT_BACKUP_POLICIES,
  DEFAULT_FIRING,
  SCHEMA_PARTS as CRON_SCHEMA_PARTS,
  startCronScheduler,
} from '@osc/cron-scheduler';
import { createRuntime, type RunningApp, type Runtime } from '@osc/platform';
import { TEST_QUEUE_EXPIRES_MS } from '@osc/testing';
import { admin, Client, memberOf, newProject, startBlockStorage, type BlockStorage } from './harness';
import { MIB, scratchDir, sha256File, writeAt } from './backup-files';

const AMQP_URL = process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cronConfig = (env: Record<string, string>) => ({
  health: { port: 0, host: '127.0.0.1' },
  logLevel: env['LOG_LEVEL'] ?? 'error',
  firing: { ...DEFAULT_FIRING, maxSleepMs: 200 },
  backupPolicies: { ...DEFAULT_BACKUP_POLICIES, retentionIntervalMs: 1000 },
});

async function newVolume(c: Client): Promise<string> {
  const r = await c.post('/volumes', { volume: { size: 1 } });
  expect(r.status).toBe(202);
  await c.waitFor('volumes', r.body.volume.id, ['available']);
  return r.body.volume.id;
}

async function policyBackups(c: Client, volumeId: string): Promise<any[]> {
  const r = await c.get(`/backups/detail?volume_id=${volumeId}`);
  expect(r.status).toBe(200);
  return r.body.backups;
}

/**
 * Backup policies fired by the cron-scheduler (ours, issue 21 item 3), end to end with real
 * servers: PostgreSQL, RabbitMQ and Redis, and TWO cron-scheduler replicas on their own runtimes
 * (connection pools, outbox relays) racing for the same rows.
 */
describe('backup policies, distributed, two cron-scheduler replicas', () => {
  let bs: BlockStorage;
  let store: ReturnType<typeof scratchDir>;
  const replicas: { app: RunningApp; runtime: Runtime }[] = [];

  beforeAll(async () => {
    store = scratchDir('osc-policy-backups-');
    // Small chunks: a 1 GiB sparse volume with a few MiB written makes small, cheap backups.
    bs = await startBlockStorage('distributed', {
      BACKUP_STORE_DIR: store.dir,
      BACKUP_CHUNK_SIZE: String(MIB),
      LOG_LEVEL: 'error',
    });
    const d = bs.distributed!;
    for (let i = 0; i < 2; i++) {
      const runtime = await createRuntime(
        {
          mode: 'distributed',
          databaseUrl: d.databaseUrl,
          amqpUrl: AMQP_URL,
          redisUrl: REDIS_URL,
          poolSize: 4,
          queuePrefix: d.queuePrefix,
          queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
        },
        CRON_SCHEMA_PARTS,
      );
      replicas.push({ runtime, app: await startCronScheduler(cronConfig({}), runtime, { http: false }) });
    }
  }, 180_000);

  afterAll(async () => {
    for (const r of replicas) {
      await r.app.close().catch(() => undefined);
      await r.runtime.close().catch(() => undefined);
    }
    await bs?.close();
    store?.remove();
  });

  it(
    'keeps exactly 3 restorable backups after 6 one-minute runs, rebasing, none made twice',
    async () => {
      const member = new Client(bs.base, admin).as(memberOf(newProject()));
      const volumeId = await newVolume(member);
      const file = path.join(bs.volumeDir, `volume-${volumeId}`);
      await writeAt(file, 0, randomBytes(2 * MIB));
      const created = await member.post('/os-backup-policies', {
        backup_policy: {
          name: 'every-minute',
          volume_id: volumeId,
          schedule: '* * * * *',
          retention: 3,
          full_every: 100,
        },
      });
      expect(created.status).toBe(200);
      const policyId: string = created.body.backup_policy.id;

      // Follow the runs: when a backup is available, note the volume's bytes it holds, then change a
      // few MiB (only between backups, so each one's content is known) for the next incremental.
      const expected = new Map<string, string>();
      const wasIncremental = new Map<string, boolean>();
      const until = Date.now() + 8 * 60_000;
      while (expected.size < 6) {
        if (Date.now() > until)
          throw new Error(`only ${expected.size} policy backups became available in 8 minutes`);
        for (const b of await policyBackups(member, volumeId)) {
          if (!wasIncremental.has(b.id)) wasIncremental.set(b.id, b.is_incremental);
          if (b.status === 'error') throw new Error(`policy backup ${b.id} failed: ${b.fail_reason}`);
          if (b.status === 'available' && !expected.has(b.id)) {
            expected.set(b.id, await sha256File(file));
            await writeAt(file, (expected.size % 8) * 4 * MIB + MIB, randomBytes(MIB));
          }
        }
        await sleep(500);
      }

      // Retention settles: exactly 3 backups left, none being deleted or rebased.
      let kept: any[] = [];
      const settle = Date.now() + 90_000;
      for (;;) {
        kept = await policyBackups(member, volumeId);
        // The oldest kept one must have become a full (its parents are gone).
        const oldest = [...kept].sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)))[0];
        if (
          kept.length === 3 &&
          kept.every((b) => b.status === 'available') &&
          oldest &&
          !oldest.is_incremental
        )
          break;
        if (Date.now() > settle)
          throw new Error(
            `retention did not settle: ${JSON.stringify(kept.map((b) => [b.id, b.status, b.is_incremental]))}`,
          );
        await sleep(500);
      }
      // Let a run that was due meanwhile finish and be retained too, then take the final picture.
      await member.put(`/os-backup-policies/${policyId}`, { backup_policy: { enabled: false } });
      for (;;) {
        kept = await policyBackups(member, volumeId);
        if (kept.length === 3 && kept.every((b) => b.status === 'available')) break;
        if (Date.now() > settle + 60_000)
          throw new Error(`retention did not settle: ${JSON.stringify(kept.map((b) => [b.id, b.status]))}`);
        await sleep(500);
      }
      expect(kept).toHaveLength(3);

      // At least one kept backup was made as an incremental and is now a full (rebased in the store).
      const rebased = kept.filter((b) => wasIncremental.get(b.id) === true && b.is_incremental === false);
      expect(rebased.length).toBeGreaterThanOrEqual(1);

      // Each kept backup restores to the volume's bytes at its time.
      for (const b of kept) {
        const want = expected.get(b.id);
        expect(want).toBeDefined();
        const r = await member.post(`/backups/${b.id}/restore`, { restore: {} });
        expect(r.status).toBe(202);
        const v = await member.waitFor('volumes', r.body.restore.volume_id, ['available', 'error'], 120_000);
        expect(v.status).toBe('available');
        expect(await sha256File(path.join(bs.volumeDir, `volume-${r.body.restore.volume_id}`))).toBe(want);
      }

      // None created twice: one backup row (deleted ones included) per scheduled minute.
      const db = new pg.Client({ connectionString: bs.distributed!.databaseUrl });
      await db.connect();
      try {
        const rows = (
          await db.query(
            `SELECT date_trunc('minute', created_at) AS minute, count(*)::int AS n FROM backups WHERE backup_policy_id = $1 GROUP BY 1 ORDER BY 1`,
            [policyId],
          )
        ).rows as { minute: Date; n: number }[];
        expect(rows.length).toBeGreaterThanOrEqual(6);
        expect(rows.filter((r) => r.n !== 1)).toEqual([]);
        const deleted = (
          await db.query(`SELECT count(*)::int AS n FROM backups WHERE backup_policy_id = $1 AND deleted`, [
            policyId,
          ])
        ).rows[0].n;
        expect(deleted).toBe(rows.length - 3);
      } finally {
        await db.end();
      }
    },
    12 * 60_000,
  );
});

describe('backup policies, embedded', () => {
  let bs: BlockStorage;
  let store: ReturnType<typeof scratchDir>;

  beforeAll(async () => {
    store = scratchDir('osc-policy-backups-e-');
    bs = await startBlockStorage(
      'embedded',
      { BACKUP_STORE_DIR: store.dir, BACKUP_CHUNK_SIZE: String(MIB) },
      {
        schemaParts: CRON_SCHEMA_PARTS,
        more: async (runtime, env) => [await startCronScheduler(cronConfig(env), runtime, { http: false })],
      },
    );
  }, 120_000);

  afterAll(async () => {
    await bs?.close();
    store?.remove();
  });

  it('fires a policy: a backup of the volume appears and becomes available', async () => {
    const member = new Client(bs.base, admin).as(memberOf(newProject()));
    const volumeId = await newVolume(member);
    const file = path.join(bs.volumeDir, `volume-${volumeId}`);
    await writeAt(file, 3 * MIB, randomBytes(MIB));
    const want = await sha256File(file);
    const created = await member.post('/os-backup-policies', {
      backup_policy: { volume_id: volumeId, schedule: '* * * * *', retention: 2, full_every: 5 },
    });
    expect(created.status).toBe(200);
    const until = Date.now() + 90_000;
    let backups: any[] = [];
    while (!(backups.length === 1 && backups[0].status === 'available')) {
      if (Date.now() > until) throw new Error(`no policy backup: ${JSON.stringify(backups)}`);
      await sleep(250);
      backups = await policyBackups(member, volumeId);
    }
    expect(backups[0]).toMatchObject({
      volume_id: volumeId,
      is_incremental: false,
      description: `Made by backup policy ${created.body.backup_policy.id}.`,
    });
    const shown = await member.get(`/os-backup-policies/${created.body.backup_policy.id}`);
    expect(shown.body.backup_policy.last_run_at).not.toBeNull();
    const r = await member.post(`/backups/${backups[0].id}/restore`, { restore: {} });
    expect(r.status).toBe(202);
    await member.waitFor('volumes', r.body.restore.volume_id, ['available'], 60_000);
    expect(await sha256File(path.join(bs.volumeDir, `volume-${r.body.restore.volume_id}`))).toBe(want);

    // skip_unchanged (on by default): the next run's incremental finds the volume as the first backup
    // left it, so no backup is kept, the volume is back to available and the policy's last run says why.
    const policyId: string = created.body.backup_policy.id;
    let policy: any = (await member.get(`/os-backup-policies/${policyId}`)).body.backup_policy;
    const firstRun: string = policy.last_run.at;
    expect(policy.last_run).toEqual({ at: firstRun, backups: [backups[0].id], skipped: [] });
    const next = Date.now() + 90_000;
    while (!(policy.last_run.at !== firstRun && policy.last_run.skipped.length === 1)) {
      if (Date.now() > next) throw new Error(`no skipped run: ${JSON.stringify(policy)}`);
      await sleep(250);
      policy = (await member.get(`/os-backup-policies/${policyId}`)).body.backup_policy;
    }
    expect(policy.last_run).toEqual({
      at: expect.any(String),
      backups: [],
      skipped: [
        {
          volume_id: volumeId,
          reason: `unchanged since backup ${backups[0].id}: no backup kept (skip_unchanged)`,
        },
      ],
    });
    expect((await policyBackups(member, volumeId)).map((b) => b.id)).toEqual([backups[0].id]);
    expect((await member.get(`/volumes/${volumeId}`)).body.volume.status).toBe('available');

    // Once the volume changed, the next run keeps its incremental.
    await writeAt(file, 5 * MIB, randomBytes(MIB));
    const changed = await sha256File(file);
    const third = Date.now() + 90_000;
    while (!(backups.length === 2 && backups.every((b) => b.status === 'available'))) {
      if (Date.now() > third) throw new Error(`no second policy backup: ${JSON.stringify(backups)}`);
      await sleep(250);
      backups = await policyBackups(member, volumeId);
    }
    const incremental = backups.find((b) => b.is_incremental);
    expect(incremental).toBeDefined();
    policy = (await member.get(`/os-backup-policies/${policyId}`)).body.backup_policy;
    expect(policy.last_run).toMatchObject({ backups: [incremental.id], skipped: [] });
    const r2 = await member.post(`/backups/${incremental.id}/restore`, { restore: {} });
    expect(r2.status).toBe(202);
    await member.waitFor('volumes', r2.body.restore.volume_id, ['available'], 60_000);
    expect(await sha256File(path.join(bs.volumeDir, `volume-${r2.body.restore.volume_id}`))).toBe(changed);
  }, 360_000);
});
