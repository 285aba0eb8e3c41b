import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { DataSource } from 'typeorm';
import {
  type CronTestDatabase,
  createCronTestDatabase,
  firedExecutions,
  seedDueTriggers,
  seedWorkflow,
} from './cron-fixture';

jest.setTimeout(90_000);

const children: ChildProcess[] = [];

/** Starts a replica process; resolves with it once `until` matched a line of its output. */
function startReplica(url: string, env: Record<string, string>, until: RegExp): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-r', '@swc-node/register', path.join(__dirname, 'replica-process.ts')],
    {
      env: { ...process.env, DATABASE_URL: url, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
      cwd: path.join(__dirname, '../../..'),
    },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code, signal) => reject(new Error(`replica exited ${code ?? signal}`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (until.test(line)) resolve(child);
    });
  });
}

const remaining = async (ds: DataSource) =>
  Number((await ds.query(`SELECT count(*)::int AS n FROM "cron_triggers"`))[0].n);

describe('a scheduler process killed mid-firing', () => {
  let db: CronTestDatabase;

  afterEach(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await db?.drop();
  });

  it('loses and doubles nothing: the survivors fire every trigger exactly once', async () => {
    db = await createCronTestDatabase('osc_cron_crash');
    const seed = await db.connect(2);
    const wf = await seedWorkflow(seed, 'p1');
    const ids = await seedDueTriggers(seed, wf, 'p1', 100, new Date(Date.now() - 1000));

    // The victim claims a batch, writes its executions and outbox rows, and is SIGKILLed before COMMIT.
    const victim = await startReplica(db.url, { HANG_BEFORE_COMMIT: '1', BATCH_SIZE: '40' }, /^claimed \d+$/);
    const exited = new Promise((r) => victim.once('exit', r));
    victim.kill('SIGKILL');
    await exited;

    await Promise.all([startReplica(db.url, {}, /^ready$/), startReplica(db.url, {}, /^ready$/)]);
    const deadline = Date.now() + 60_000;
    while ((await remaining(seed)) > 0) {
      if (Date.now() > deadline) throw new Error('triggers left unfired');
      await new Promise((r) => setTimeout(r, 100));
    }
    const { byTrigger, startCommands, executions } = await firedExecutions(seed);
    expect(executions).toBe(100);
    expect(startCommands).toBe(100);
    expect([...byTrigger.keys()].sort()).toEqual([...ids].sort());
    for (const list of byTrigger.values()) expect(list).toHaveLength(1);
  });

  it('three scheduler processes fire 200 triggers due at once exactly once, never early', async () => {
    db = await createCronTestDatabase('osc_cron_three');
    const seed = await db.connect(2);
    const wf = await seedWorkflow(seed, 'p1');
    await Promise.all([1, 2, 3].map(() => startReplica(db.url, {}, /^ready$/)));
    const due = new Date(Date.now() + 1500);
    const ids = await seedDueTriggers(seed, wf, 'p1', 200, due);
    const deadline = Date.now() + 60_000;
    while ((await remaining(seed)) > 0) {
      if (Date.now() > deadline) throw new Error('triggers left unfired');
      await new Promise((r) => setTimeout(r, 100));
    }
    const { byTrigger, startCommands, executions } = await firedExecutions(seed);
    expect(executions).toBe(200);
    expect(startCommands).toBe(200);
    expect([...byTrigger.keys()].sort()).toEqual([...ids].sort());
    for (const list of byTrigger.values()) expect(list).toHaveLength(1);
    const [{ early }] = (await seed.query(
      `SELECT count(*)::int AS early FROM "workflow_executions" WHERE "created_at" < $1`,
      [due],
    )) as [{ early: number }];
    expect(early).toBe(0);
  });
});
