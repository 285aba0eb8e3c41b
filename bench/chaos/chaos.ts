import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { closeDataSource, createDataSource } from '@osc/persistence';
import { purgeTestPrefix } from '@osc/testing';
import pg from 'pg';
import { type KillEvent, type Sql, TRANSITIONAL, type Verdict, judge } from './checks';
import { CountingServer } from './counting-server';
import { MixedLoad } from './load';
import { DISTRIBUTED_APPS, type ProcessSlot, ProductSupervisor, ROOT, freePort } from './product';

export type ChaosMode = 'distributed' | 'embedded';

export interface ChaosOptions {
  readonly mode: ChaosMode;
  /** Distributed: how long the load and the kills last. */
  readonly durationS: number;
  /** Embedded: how many times the single process is killed. */
  readonly kills: number;
  /** Seconds between two kills. */
  readonly killEveryS: number;
  /** Longest wait, after the load stops, for everything to settle. */
  readonly settleS: number;
  /** Passed to the product: how long work may look stuck before a reconciler takes it over. */
  readonly workflowStuckAfterS: number;
  readonly blockStorageStuckAfterS: number;
  /** Workflow executions started per second. */
  readonly rate: number;
  readonly withItems: number;
  readonly cronTriggers: number;
  readonly callDelayMs: number;
  /** Extra environment for every product process (`K=V`), e.g. settings of work not merged yet. */
  readonly productEnv: Readonly<Record<string, string>>;
  readonly postgresUrl: string;
  readonly amqpUrl: string;
  readonly redisUrl: string;
  readonly log: (msg: string) => void;
}

export const DEFAULT_OPTIONS: Omit<ChaosOptions, 'mode' | 'log'> = {
  durationS: 600,
  kills: 20,
  killEveryS: 10,
  settleS: 120,
  workflowStuckAfterS: 30,
  blockStorageStuckAfterS: 30,
  rate: 2,
  withItems: 6,
  cronTriggers: 2,
  callDelayMs: 150,
  productEnv: {},
  postgresUrl: process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  amqpUrl: process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
};

export interface ChaosResult {
  readonly mode: ChaosMode;
  readonly date: string;
  readonly loadavg: number[];
  readonly options: Record<string, unknown>;
  readonly kills: readonly KillEvent[];
  readonly restarts: number;
  readonly loadSeconds: number;
  /** Seconds from the end of the load until everything settled, or null when the bound passed first. */
  readonly settledAfterS: number | null;
  readonly load: MixedLoad['stats'];
  readonly verdict: Verdict;
  readonly passed: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One chaos run: start the product (two replicas of each app, or the embedded process), run the
 * mixed load while killing a random process every few seconds, stop the load, wait (bounded) for
 * the product to settle, judge from the database, clean up. Never throws for a failed check: the
 * verdict says what failed. Throws when the product cannot start or a killed process does not
 * come back.
 */
export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const runId = randomBytes(6).toString('hex');
  // Cinder takes only hex (and dashes) as the project segment of a URL.
  const project = runId;
  const workDir = path.join(ROOT, 'tmp', `chaos-${runId}`);
  mkdirSync(workDir, { recursive: true });
  const volumeDir = path.join(workDir, o.mode === 'embedded' ? 'data/volumes' : 'volumes');
  const counter = new CountingServer({ delayMs: o.callDelayMs, flakyFailures: 2 });
  const callBase = await counter.start();
  const supervisor = new ProductSupervisor(o.log, 180_000);
  const database = `osc_chaos_${runId}`;
  // The queue prefix follows distributed-start's pattern so purge-test-leftovers sweeps a killed run.
  const queuePrefix = `osc_dist_${runId}.`;
  const kills: KillEvent[] = [];
  const productEnv: Record<string, string> = {
    LOG_LEVEL: 'warn',
    WORKFLOW_STUCK_AFTER_SECONDS: String(o.workflowStuckAfterS),
    BLOCK_STORAGE_STUCK_AFTER_SECONDS: String(o.blockStorageStuckAfterS),
    ...o.productEnv,
  };
  let dbUrl = '';
  /** Base URLs of the up processes serving an API; the embedded process serves both (ready ports: workflow, volume). */
  const apiBases = (app: string, portIndex: number): string[] =>
    supervisor.slots
      .filter((s) => s.up && s.app === app)
      .map((s) => `http://127.0.0.1:${s.readyPorts[portIndex]}`);
  try {
    if (o.mode === 'distributed') {
      await adminSql(o.postgresUrl, `CREATE DATABASE "${database}"`);
      const url = new URL(o.postgresUrl);
      url.pathname = `/${database}`;
      dbUrl = url.toString();
      for (const [app, portVar] of DISTRIBUTED_APPS) {
        for (const replica of [1, 2]) {
          const port = await freePort();
          supervisor.add(`${app}#${replica}`, app, `apps/${app}/src/main.ts`, [port], {
            ...productEnv,
            DATABASE_URL: dbUrl,
            AMQP_URL: o.amqpUrl,
            REDIS_URL: o.redisUrl,
            DB_POOL_SIZE: '4',
            QUEUE_PREFIX: queuePrefix,
            [portVar]: String(port),
            VOLUME_BACKEND_HOST: 'chaos',
            VOLUME_BACKEND_DIR: volumeDir,
            BACKUP_STORE_DIR: path.join(workDir, 'backups'),
            VOLUME_BACKEND_STATS_SECONDS: '10',
          });
        }
      }
      // Replica 1 of every app first (they migrate the database), then the second ones.
      await Promise.all(
        supervisor.slots.filter((s) => s.name.endsWith('#1')).map((s) => supervisor.start(s)),
      );
      await Promise.all(
        supervisor.slots.filter((s) => s.name.endsWith('#2')).map((s) => supervisor.start(s)),
      );
    } else {
      const [wf, vol] = [await freePort(), await freePort()];
      const slot = supervisor.add('embedded', 'embedded', 'apps/embedded/src/main.ts', [wf, vol], {
        ...productEnv,
        DATA_DIR: path.join(workDir, 'data'),
        WORKFLOW_API_PORT: String(wf),
        VOLUME_API_PORT: String(vol),
      });
      await supervisor.start(slot);
    }
    o.log(`${o.mode}: product up (${supervisor.slots.length} process(es)), calls to ${callBase}`);

    const workflowBases = () =>
      o.mode === 'embedded' ? apiBases('embedded', 0) : apiBases('workflow-api', 0);
    const volumeBases = () => (o.mode === 'embedded' ? apiBases('embedded', 1) : apiBases('volume-api', 0));
    // Embedded, the only process is down for a whole restart after each kill (30–40 s at load 30):
    // requests wait for it as long as the supervisor does, so a cycle is not dropped for that alone.
    const replicaWaitMs = o.mode === 'embedded' ? 180_000 : 30_000;
    const load = new MixedLoad(
      { callBase, rate: o.rate, withItems: o.withItems, volumeDir, project, log: o.log, replicaWaitMs },
      workflowBases,
      volumeBases,
    );
    await load.prepare();
    await load.createCronTriggers(o.cronTriggers);
    const loadStart = Date.now();
    load.start();

    // Chaos: SIGKILL one process, start it again, repeat. Distributed: only a process whose
    // sibling replica is up, so the service as a whole stays available.
    const order: string[] = [];
    const restarts: Promise<void>[] = [];
    const restartErrors: Error[] = [];
    const done = () =>
      o.mode === 'distributed' ? Date.now() - loadStart >= o.durationS * 1000 : kills.length >= o.kills;
    while (!done()) {
      await sleep(o.killEveryS * 1000);
      if (done() && o.mode === 'distributed') break;
      const victim = pickVictim(supervisor.slots, order);
      if (!victim) continue;
      kills.push({ at: Date.now(), slot: victim.name, app: victim.app });
      o.log(`kill ${kills.length}: ${victim.name} (pid ${victim.child?.pid})`);
      const restart = supervisor.killAndRestart(victim).catch((e: Error) => void restartErrors.push(e));
      restarts.push(restart);
      if (o.mode === 'embedded') await restart; // the next interval counts from the process being back
      if (restartErrors.length > 0) throw restartErrors[0]!;
    }
    await Promise.all(restarts);
    if (restartErrors.length > 0) throw restartErrors[0]!;
    const loadSeconds = Math.round((Date.now() - loadStart) / 1000);
    o.log(`load stopping after ${loadSeconds} s, ${kills.length} kill(s); waiting for its last cycles`);
    await load.stop();
    const leftTriggers = await load.deleteCronTriggers();
    if (leftTriggers.length > 0)
      load.stats.notes.push(`cron triggers not deleted: ${leftTriggers.join(', ')}`);

    // Settle: bounded wait until nothing is in flight, asked through the public APIs.
    const settleStart = Date.now();
    let settledAfterS: number | null = null;
    while (Date.now() - settleStart < o.settleS * 1000) {
      const busy = await inFlight(load, project);
      if (busy === 0) {
        settledAfterS = Math.round((Date.now() - settleStart) / 1000);
        break;
      }
      await sleep(2000);
    }
    o.log(settledAfterS === null ? `not settled within ${o.settleS} s` : `settled after ${settledAfterS} s`);

    // Judge from the database: PostgreSQL while the processes run; PGlite once the process is gone.
    let verdict: Verdict;
    const input = {
      calls: counter.calls(),
      kills,
      actionApps: new Set(['workflow-engine', 'embedded']),
      restores: load.restores,
      volumeDir,
      project,
    };
    if (o.mode === 'distributed') {
      const ds = await createDataSource({ kind: 'postgres', url: dbUrl, poolSize: 2 }, [], []);
      try {
        verdict = await judge(ds as Sql, input);
      } finally {
        await closeDataSource(ds);
      }
      await supervisor.stopAll();
    } else {
      await supervisor.stopAll();
      const ds = await createDataSource(
        { kind: 'pglite', dataDir: path.join(workDir, 'data', 'pg') },
        [],
        [],
      );
      try {
        verdict = await judge(ds as Sql, input);
      } finally {
        await closeDataSource(ds);
      }
    }
    if (settledAfterS === null)
      verdict.failures.unshift(`not settled within ${o.settleS} s after the load stopped`);
    return {
      mode: o.mode,
      date: new Date().toISOString(),
      loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
      options: { ...o, log: undefined, postgresUrl: undefined },
      kills,
      restarts: supervisor.slots.reduce((s, x) => s + x.starts - 1, 0),
      loadSeconds,
      settledAfterS,
      load: load.stats,
      verdict,
      passed: verdict.failures.length === 0,
    };
  } finally {
    await supervisor.stopAll(5_000);
    await counter.stop();
    if (o.mode === 'distributed') {
      await purgeTestPrefix({ queuePrefix, amqpUrl: o.amqpUrl, redisUrl: o.redisUrl }).catch((e: Error) =>
        o.log(`purge: ${e.message}`),
      );
      await adminSql(o.postgresUrl, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((e: Error) =>
        o.log(`drop database: ${e.message}`),
      );
    }
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * The next process to kill: apps take turns in a shuffled order (every app is hit once per round,
 * so a short run still kills an engine and a backup worker), a random replica of the app whose turn
 * it is. Only a process that is up and, when it has a sibling, whose sibling is up too.
 */
function pickVictim(slots: readonly ProcessSlot[], order: string[]): ProcessSlot | undefined {
  const killable = (s: ProcessSlot) => s.up && slots.every((t) => t === s || t.app !== s.app || t.up);
  const apps = [...new Set(slots.map((s) => s.app))];
  for (let tries = 0; tries < apps.length * 2; tries++) {
    if (order.length === 0) order.push(...apps.sort(() => Math.random() - 0.5));
    const app = order.shift()!;
    const candidates = slots.filter((s) => s.app === app && killable(s));
    if (candidates.length > 0) return candidates[Math.floor(Math.random() * candidates.length)];
  }
  return undefined;
}

/** Executions not terminal plus block-storage resources in a transitional status, as the APIs list them. */
async function inFlight(load: MixedLoad, project: string): Promise<number> {
  let busy = 0;
  let marker = '';
  for (;;) {
    const r = await load.workflow.request(
      'GET',
      `/v2/executions?limit=500&fields=state${marker ? `&marker=${marker}` : ''}`,
    );
    if (r?.status !== 200) return Number.POSITIVE_INFINITY;
    const page = r.body.executions as { id: string; state: string }[];
    busy += page.filter((e) => !['SUCCESS', 'ERROR', 'CANCELLED'].includes(e.state)).length;
    if (page.length < 500) break;
    marker = page[page.length - 1]!.id;
  }
  for (const [kind, key, statuses] of [
    ['volumes', 'volumes', TRANSITIONAL.volume],
    ['snapshots', 'snapshots', TRANSITIONAL.snapshot],
    ['backups', 'backups', TRANSITIONAL.backup],
  ] as const) {
    const r = await load.volume.request('GET', `/v3/${project}/${kind}/detail?limit=1000`);
    if (r?.status !== 200) return Number.POSITIVE_INFINITY;
    busy += (r.body[key] as { status: string }[]).filter((x) =>
      (statuses as readonly string[]).includes(x.status),
    ).length;
  }
  return busy;
}

async function adminSql(postgresUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
