import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { purgeTestPrefix } from '@osc/testing';

const ROOT = path.resolve(__dirname, '../../..');
const POSTGRES = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** Each app and the variable that sets the port answering /healthz, /readyz and /metrics. */
const APPS: readonly [string, string][] = [
  ['workflow-api', 'WORKFLOW_API_PORT'],
  ['workflow-engine', 'WORKFLOW_ENGINE_HEALTH_PORT'],
  ['cron-scheduler', 'CRON_SCHEDULER_HEALTH_PORT'],
  ['volume-api', 'VOLUME_API_PORT'],
  ['scheduler-stats', 'SCHEDULER_STATS_HEALTH_PORT'],
  ['backup-worker', 'BACKUP_WORKER_HEALTH_PORT'],
];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<Response> {
  // Six processes compiling the sources at once on two shared cores: under a busy CI machine this
  // took over 45 s (the failure seen at load ~26); readiness itself is checked, not its speed.
  const deadline = Date.now() + 100_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited early (${child.exitCode}):\n${output()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return res;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error(`not ready in time:\n${output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Distributed mode as an operator runs it: every app is its own process on one PostgreSQL,
 * RabbitMQ and Redis, migrates the shared database at start (concurrently), reports ready only
 * when its dependencies answer, exposes Prometheus metrics and stops cleanly on SIGTERM.
 */
describe('distributed mode: the six apps as separate processes', () => {
  const database = `osc_dist_${randomBytes(6).toString('hex')}`;
  const url = new URL(POSTGRES);
  url.pathname = `/${database}`;
  const children: ChildProcess[] = [];

  beforeAll(() => admin(`CREATE DATABASE "${database}"`));
  afterAll(async () => {
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const gone = new Promise((resolve) => c.once('exit', resolve));
        c.kill('SIGKILL');
        await gone;
      }),
    );
    // Only after the apps are gone (a live consumer declares its queue again): the run's queues and BullMQ keys.
    await purgeTestPrefix({ queuePrefix: `${database}.`, amqpUrl: AMQP, redisUrl: REDIS });
    await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    rmSync(path.join(ROOT, 'tmp', database), { recursive: true, force: true });
  }, 30_000);

  it('start together, answer /readyz and /metrics, and stop on SIGTERM', async () => {
    const prefix = `${database}.`;
    const started = await Promise.all(
      APPS.map(async ([app, portVar]) => {
        const port = await freePort();
        let out = '';
        const child = spawn(process.execPath, ['-r', '@swc-node/register', `apps/${app}/src/main.ts`], {
          cwd: ROOT,
          env: {
            ...process.env,
            DATABASE_URL: url.toString(),
            AMQP_URL: AMQP,
            REDIS_URL: REDIS,
            DB_POOL_SIZE: '3',
            LOG_LEVEL: 'warn',
            QUEUE_PREFIX: prefix,
            [portVar]: String(port),
            VOLUME_BACKEND_DIR: path.join(ROOT, 'tmp', database, 'volumes'),
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
        children.push(child);
        return { app, port, child, output: () => out };
      }),
    );
    for (const s of started) {
      const ready = await waitReady(`http://127.0.0.1:${s.port}/readyz`, s.child, s.output);
      expect(await ready.json()).toMatchObject({ status: 'ok' });
      const metrics = await fetch(`http://127.0.0.1:${s.port}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain(`app="${s.app}"`);
    }
    const versions = await fetch(`http://127.0.0.1:${started[0]!.port}/`);
    expect(versions.status).toBe(200);
    const codes = await Promise.all(
      started.map(
        (s) =>
          new Promise<number | null>((resolve) => {
            s.child.once('exit', (code) => resolve(code));
            s.child.kill('SIGTERM');
          }),
      ),
    );
    expect(codes).toEqual(APPS.map(() => 0));
  }, 180_000);
});
