import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { purgeTestPrefix } from '@osc/testing';

export const ROOT = path.resolve(__dirname, '../../..');
const POSTGRES = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/**
 * `OSC_TEST_FROM_BUNDLES=1` (CI sets it after `npm run build`) starts each app from its bundle,
 * `node dist/apps/<app>/main.js`, as the image does; otherwise from its TypeScript sources.
 */
export const FROM_BUNDLES = process.env['OSC_TEST_FROM_BUNDLES'] === '1';

/** Each app and the variable that sets the port answering /healthz, /readyz and /metrics (and the API). */
export const APPS: readonly [string, string][] = [
  ['workflow-api', 'WORKFLOW_API_PORT'],
  ['workflow-engine', 'WORKFLOW_ENGINE_HEALTH_PORT'],
  ['cron-scheduler', 'CRON_SCHEDULER_HEALTH_PORT'],
  ['volume-api', 'VOLUME_API_PORT'],
  ['scheduler-stats', 'SCHEDULER_STATS_HEALTH_PORT'],
  ['backup-worker', 'BACKUP_WORKER_HEALTH_PORT'],
];

/** The node arguments that start one app, from its bundle or from its sources. */
export function appCommand(app: string): string[] {
  if (!FROM_BUNDLES) return ['-r', '@swc-node/register', `apps/${app}/src/main.ts`];
  const bundle = path.join(ROOT, 'dist/apps', app, 'main.js');
  if (!existsSync(bundle))
    throw new Error(`${bundle} is missing: run \`npm run build\` first (OSC_TEST_FROM_BUNDLES=1)`);
  return ['--enable-source-maps', bundle];
}

export function freePort(): Promise<number> {
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

export async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<Response> {
  // Six processes starting at once on two shared cores: under a busy CI machine this took over
  // 45 s from sources (the failure seen at load ~26); readiness itself is checked, not its speed.
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

/** One process to start: `name` tells processes of one app apart (an engine and an executor). */
export interface ProcessSpec {
  name: string;
  app: string;
  portVar: string;
  env?: Record<string, string>;
}

export const SIX_APPS: readonly ProcessSpec[] = APPS.map(([app, portVar]) => ({ name: app, app, portVar }));

export interface StartedApp {
  name: string;
  app: string;
  port: number;
  child: ChildProcess;
  output(): string;
}

/**
 * The six apps as separate processes on one fresh PostgreSQL database and a queue prefix of their
 * own (RabbitMQ and Redis); `processes` and their `env` choose what runs. `stop()` kills what still runs,
 * removes the run's queues and keys, and drops the database.
 */
export class DistributedStack {
  readonly database = `osc_dist_${randomBytes(6).toString('hex')}`;
  readonly prefix = `${this.database}.`;
  readonly apps: StartedApp[] = [];

  /** The run's database, for checks that read it directly. */
  databaseUrl(): string {
    const url = new URL(POSTGRES);
    url.pathname = `/${this.database}`;
    return url.toString();
  }

  async createDatabase(): Promise<void> {
    await admin(`CREATE DATABASE "${this.database}"`);
  }

  private readonly specs = new Map<string, ProcessSpec>();

  async start(processes: readonly ProcessSpec[] = SIX_APPS): Promise<StartedApp[]> {
    const started = await Promise.all(
      processes.map(async (spec) => {
        this.specs.set(spec.name, spec);
        const app = this.spawnApp(spec, await freePort());
        this.apps.push(app);
        return app;
      }),
    );
    for (const s of started) await waitReady(`http://127.0.0.1:${s.port}/readyz`, s.child, s.output);
    return started;
  }

  private spawnApp({ name, app, portVar, env }: ProcessSpec, port: number): StartedApp {
    let out = '';
    const child = spawn(process.execPath, appCommand(app), {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: this.databaseUrl(),
        AMQP_URL: AMQP,
        REDIS_URL: REDIS,
        DB_POOL_SIZE: '3',
        LOG_LEVEL: 'warn',
        QUEUE_PREFIX: this.prefix,
        [portVar]: String(port),
        VOLUME_BACKEND_DIR: path.join(ROOT, 'tmp', this.database, 'volumes'),
        BACKUP_STORE_DIR: path.join(ROOT, 'tmp', this.database, 'backups'),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    return { name, app, port, child, output: () => out };
  }

  /**
   * SIGTERM to process `name`, then, once it has exited, the same app again on the same port with
   * the same environment, ready. Resolves with the old process's exit code, the time from the
   * signal to its exit, and its output.
   */
  async restart(
    name: string,
  ): Promise<{ code: number | null; signal: string | null; exitMs: number; output: string }> {
    const i = this.apps.findIndex((a) => a.name === name);
    const old = this.apps[i];
    const spec = this.specs.get(name);
    if (!old || !spec) throw new Error(`${name} is not started`);
    const t0 = Date.now();
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => {
      if (old.child.exitCode !== null || old.child.signalCode !== null)
        resolve({ code: old.child.exitCode, signal: old.child.signalCode });
      else old.child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    old.child.kill('SIGTERM');
    const { code, signal } = await exited;
    const exitMs = Date.now() - t0;
    const fresh = this.spawnApp(spec, old.port);
    this.apps[i] = fresh;
    await waitReady(`http://127.0.0.1:${fresh.port}/readyz`, fresh.child, fresh.output);
    return { code, signal, exitMs, output: old.output() };
  }

  port(name: string): number {
    const found = this.apps.find((a) => a.name === name);
    if (!found) throw new Error(`${name} is not started`);
    return found.port;
  }

  /** SIGTERM to every process; resolves with their exit codes once all have exited. */
  async terminate(): Promise<(number | null)[]> {
    return Promise.all(
      this.apps.map(
        (s) =>
          new Promise<number | null>((resolve) => {
            if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve(s.child.exitCode);
            s.child.once('exit', (code) => resolve(code));
            s.child.kill('SIGTERM');
          }),
      ),
    );
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.apps.map(async (c) => {
        if (c.child.exitCode !== null || c.child.signalCode !== null) return;
        const gone = new Promise((resolve) => c.child.once('exit', resolve));
        c.child.kill('SIGKILL');
        await gone;
      }),
    );
    // Only after the apps are gone (a live consumer declares its queue again): the run's queues and BullMQ keys.
    await purgeTestPrefix({ queuePrefix: this.prefix, amqpUrl: AMQP, redisUrl: REDIS });
    await admin(`DROP DATABASE IF EXISTS "${this.database}" WITH (FORCE)`);
    rmSync(path.join(ROOT, 'tmp', this.database), { recursive: true, force: true });
  }
}
