/**
 * Expiration benchmark (issue #18 item 4): does Mistral's execution expiration policy keep up with
 * executions finishing at 100/s, without ever removing a running execution?
 *
 *   node -r @swc-node/register bench/expiration/run.ts
 *     [--duration=180]      seconds of load
 *     [--rate=100]          executions started (and so finishing) per second, all clients together
 *     [--clients=16]        concurrent HTTP clients (undici) of POST /v2/executions
 *     [--interval=0.05]     EXECUTION_EXPIRATION_POLICY_EVALUATION_INTERVAL (minutes)
 *     [--max-finished=1000] EXECUTION_EXPIRATION_POLICY_MAX_FINISHED_EXECUTIONS (0 = off)
 *     [--older-than=0]      EXECUTION_EXPIRATION_POLICY_OLDER_THAN (minutes, 0 = off)
 *     [--batch-size=500]    EXECUTION_EXPIRATION_POLICY_BATCH_SIZE
 *     [--backlog=0]         completed executions (copies of a finished one, a day old) added as the load
 *                           starts: how fast the policy drains them while the load runs is its capacity
 *     [--settle=120]        longest wait (s) after the load for the running executions to finish
 *     [--scenario=<name>]   the key of this run in bench/results/expiration.json (default from the settings)
 *     [--results=<file>]    write elsewhere (trial runs)
 *     [--keep-db=true]      keep the database afterwards (to EXPLAIN the policy's statements on it)
 *
 * The distributed product on the local PostgreSQL (a fresh database), RabbitMQ and Redis (a unique
 * QUEUE_PREFIX, purged at the end): two workflow-api, two workflow-engine and two cron-scheduler
 * replicas (the block-storage apps are not needed). The load: paced arrivals of short executions —
 * `quick` (one inline task), `failing` (ERROR), `parent` (a sub-workflow), and a few that stay
 * RUNNING for a while (`slow`: std.sleep; `slow_parent`: its sub-workflow sleeps) so the policy has
 * running executions next to completed ones.
 *
 * Measured: every second, the completed root executions present (must stay bounded), those removed
 * (from an AFTER DELETE trigger this benchmark installs on `workflow_executions`, recording each
 * removed row's state, root and transaction), hence finishes/s and removals/s; the passes'
 * durations from the cron-schedulers' log lines. Checked from the database at the end: every
 * execution the load started is present or was removed in a completed state (never RUNNING, never
 * with an unfinished descendant), every removed sub-execution went in the same transaction as its
 * root, no sub-execution is left whose root is gone. Exits 1 when a check failed.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { purgeTestPrefix } from '@osc/testing';
import pg from 'pg';
import { Pool } from 'undici';
import { ProductSupervisor, freePort } from '../chaos/product';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const num = (name: string, dflt: number): number => {
  const v = Number(arg(name, String(dflt)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
  return v;
};

const DURATION_S = num('duration', 180);
const RATE = num('rate', 100);
const CLIENTS = num('clients', 16);
const INTERVAL_MIN = num('interval', 0.05);
const MAX_FINISHED = num('max-finished', 1000);
const OLDER_THAN_MIN = num('older-than', 0);
const BATCH_SIZE = num('batch-size', 500);
/** Completed executions (copies of a finished one, a day old) added in one transaction as the load starts: the policy's drain rate. */
const BACKLOG = num('backlog', 0);
const SETTLE_S = num('settle', 120);
/** Keep the database (for EXPLAIN afterwards); its name is logged. */
const KEEP_DB = arg('keep-db', 'false') === 'true';
const SCENARIO = arg(
  'scenario',
  `max_finished_${MAX_FINISHED}_older_than_${OLDER_THAN_MIN}_batch_${BATCH_SIZE}`,
);
const POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP_URL = process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PROJECT = 'expiration-bench';
const HEADERS = { 'x-project-id': PROJECT, 'x-user-id': 'bench', 'x-roles': 'member' };

const WORKFLOWS = `
version: '2.0'
quick:
  tasks:
    t:
      action: std.echo output=1
failing:
  tasks:
    t:
      action: std.fail
parent:
  tasks:
    call:
      workflow: quick
slow:
  tasks:
    t:
      action: std.sleep seconds=15
slow_parent:
  tasks:
    call:
      workflow: slow
`;

/** The workflow of the k-th arrival: 1 % slow, 1 % slow_parent, 5 % failing, 10 % parent, the rest quick. */
const workflowOf = (k: number): string => {
  if (k % 100 === 37) return 'slow';
  if (k % 100 === 71) return 'slow_parent';
  if (k % 20 === 3) return 'failing';
  if (k % 10 === 5) return 'parent';
  return 'quick';
};

const COMPLETED = `('SUCCESS', 'ERROR', 'CANCELLED')`;

/**
 * Installed after the migrations: every row removed from workflow_executions, as it was when removed
 * (the DELETE's row version, under its lock), with the removing transaction.
 */
const AUDIT = [
  `CREATE TABLE "bench_removed_executions" (
     "id" uuid NOT NULL, "state" varchar NOT NULL, "root_execution_id" uuid, "task_execution_id" uuid,
     "updated_at" timestamptz, "removed_at" timestamptz NOT NULL DEFAULT clock_timestamp(), "txid" bigint NOT NULL DEFAULT txid_current())`,
  `CREATE FUNCTION "bench_record_removal"() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     INSERT INTO "bench_removed_executions" ("id", "state", "root_execution_id", "task_execution_id", "updated_at")
     VALUES (OLD."id", OLD."state", OLD."root_execution_id", OLD."task_execution_id", OLD."updated_at");
     RETURN OLD;
   END $$`,
  `CREATE INDEX "bench_removed_executions_root" ON "bench_removed_executions" ("root_execution_id", "txid")`,
  `CREATE INDEX "bench_removed_executions_id" ON "bench_removed_executions" ("id")`,
  `CREATE TRIGGER "bench_record_removal" AFTER DELETE ON "workflow_executions" FOR EACH ROW EXECUTE FUNCTION "bench_record_removal"()`,
];

interface Sample {
  /** Seconds since the load started. */
  t: number;
  completed_roots: number;
  running_roots: number;
  executions: number;
  task_executions: number;
  action_executions: number;
  removed_roots: number;
  removed_executions: number;
  /** Backlog executions (`--backlog`) still present. */
  backlog_left: number;
}

interface PassLine {
  replica: string;
  at: number;
  count: number;
  batches: number;
  durationMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const round = (v: number, d = 1) => Number(v.toFixed(d));
const load = () => loadavg().map((l) => round(l, 2));

async function adminSql(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: POSTGRES_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

async function main(): Promise<void> {
  const log = (msg: string) =>
    void process.stderr.write(`[expiration ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
  const runId = randomBytes(6).toString('hex');
  const database = `osc_expiration_${runId}`;
  const queuePrefix = `osc_dist_${runId}.`;
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  const dbUrl = url.toString();
  const supervisor = new ProductSupervisor(log, 180_000);
  const passes: PassLine[] = [];
  const batchMs: number[] = [];
  let loadStart = 0;
  const readLog = (replica: string) => {
    let partial = '';
    return (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.includes('expiration policy')) continue;
        try {
          const f = JSON.parse(line) as Record<string, unknown>;
          if (f['msg'] === 'expiration policy pass finished') {
            passes.push({
              replica,
              at: (Date.now() - loadStart) / 1000,
              count: Number(f['count']),
              batches: Number(f['batches']),
              durationMs: Number(f['durationMs']),
            });
          } else if (f['msg'] === 'expiration policy removed executions') {
            batchMs.push(Number(f['durationMs']));
          }
        } catch {
          // not a JSON line
        }
      }
    };
  };
  const common = {
    LOG_LEVEL: 'info',
    DATABASE_URL: dbUrl,
    AMQP_URL,
    REDIS_URL,
    QUEUE_PREFIX: queuePrefix,
    DB_POOL_SIZE: '8',
    AUTH_MODE: 'headers',
  };
  const expirationEnv = {
    EXECUTION_EXPIRATION_POLICY_EVALUATION_INTERVAL: String(INTERVAL_MIN),
    EXECUTION_EXPIRATION_POLICY_MAX_FINISHED_EXECUTIONS: String(MAX_FINISHED),
    EXECUTION_EXPIRATION_POLICY_OLDER_THAN: String(OLDER_THAN_MIN),
    EXECUTION_EXPIRATION_POLICY_BATCH_SIZE: String(BATCH_SIZE),
  };
  const db = new pg.Client({ connectionString: dbUrl });
  const apis: Pool[] = [];
  let exitCode = 0;
  try {
    await adminSql(`CREATE DATABASE "${database}"`);
    const apiPorts: number[] = [];
    for (const replica of [1, 2]) {
      const port = await freePort();
      apiPorts.push(port);
      supervisor.add(`workflow-api#${replica}`, 'workflow-api', 'apps/workflow-api/src/main.ts', [port], {
        ...common,
        LOG_LEVEL: 'warn',
        WORKFLOW_API_PORT: String(port),
        WORKFLOW_API_HOST: '127.0.0.1',
      });
      const enginePort = await freePort();
      supervisor.add(
        `workflow-engine#${replica}`,
        'workflow-engine',
        'apps/workflow-engine/src/main.ts',
        [enginePort],
        {
          ...common,
          LOG_LEVEL: 'warn',
          WORKFLOW_ENGINE_HEALTH_PORT: String(enginePort),
          WORKFLOW_ENGINE_HEALTH_HOST: '127.0.0.1',
          WORKFLOW_ENGINE_PREFETCH: '64',
          WORKFLOW_EXECUTOR_CONCURRENCY: '64',
        },
      );
      const cronPort = await freePort();
      supervisor.add(
        `cron-scheduler#${replica}`,
        'cron-scheduler',
        'apps/cron-scheduler/src/main.ts',
        [cronPort],
        {
          ...common,
          ...expirationEnv,
          CRON_SCHEDULER_HEALTH_PORT: String(cronPort),
          CRON_SCHEDULER_HEALTH_HOST: '127.0.0.1',
        },
        readLog(`cron-scheduler#${replica}`),
      );
    }
    // Replica 1 of every app first (they migrate the database), then the second ones.
    await Promise.all(supervisor.slots.filter((s) => s.name.endsWith('#1')).map((s) => supervisor.start(s)));
    await db.connect();
    for (const sql of AUDIT) await db.query(sql);
    await Promise.all(supervisor.slots.filter((s) => s.name.endsWith('#2')).map((s) => supervisor.start(s)));
    log(
      `product up (${supervisor.slots.length} processes), database ${database}, load average ${load().join(' ')}`,
    );

    for (const port of apiPorts) apis.push(new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS }));
    const created = await apis[0]!.request({
      method: 'POST',
      path: '/v2/workflows',
      headers: { ...HEADERS, 'content-type': 'text/plain' },
      body: WORKFLOWS,
    });
    const createdText = await created.body.text();
    if (created.statusCode !== 201)
      throw new Error(`POST /v2/workflows: ${created.statusCode} ${createdText.slice(0, 300)}`);

    // The backlog: one finished `quick` execution through the API, copied (root, task, action) with
    // new ids, a day old, committed at once right before the load starts.
    let template = '';
    if (BACKLOG > 0) {
      const res = await apis[0]!.request({
        method: 'POST',
        path: '/v2/executions',
        headers: { ...HEADERS, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow_name: 'quick' }),
      });
      template = String((JSON.parse(await res.body.text()) as { id: string }).id);
      for (;;) {
        const { rows } = await db.query(`SELECT "state" FROM "workflow_executions" WHERE "id" = $1`, [
          template,
        ]);
        if (rows[0]?.state === 'SUCCESS') break;
        await sleep(200);
      }
    }
    const addBacklog = async (): Promise<number> => {
      const t = Date.now();
      await db.query('BEGIN');
      await db.query(
        `CREATE TEMP TABLE "backlog_ids" AS SELECT n, gen_random_uuid() AS wid, gen_random_uuid() AS tid, gen_random_uuid() AS aid FROM generate_series(1, $1::int) n`,
        [BACKLOG],
      );
      await db.query(
        `INSERT INTO "workflow_executions" SELECT (jsonb_populate_record(NULL::"workflow_executions", to_jsonb(w) || jsonb_build_object(
           'id', i.wid, 'description', 'bench-backlog', 'created_at', now() - interval '1 day' + i.n * interval '1 ms', 'updated_at', now() - interval '1 day' + i.n * interval '1 ms'))).*
           FROM "backlog_ids" i, "workflow_executions" w WHERE w."id" = $1`,
        [template],
      );
      await db.query(
        `INSERT INTO "task_executions" SELECT (jsonb_populate_record(NULL::"task_executions", to_jsonb(x) || jsonb_build_object('id', i.tid, 'workflow_execution_id', i.wid))).*
           FROM "backlog_ids" i, "task_executions" x WHERE x."workflow_execution_id" = $1`,
        [template],
      );
      await db.query(
        `INSERT INTO "action_executions" SELECT (jsonb_populate_record(NULL::"action_executions", to_jsonb(x) || jsonb_build_object('id', i.aid, 'task_execution_id', i.tid, 'workflow_execution_id', i.wid))).*
           FROM "backlog_ids" i, "action_executions" x WHERE x."workflow_execution_id" = $1`,
        [template],
      );
      await db.query(`DROP TABLE "backlog_ids"`);
      await db.query('COMMIT');
      return (Date.now() - t) / 1000;
    };

    // The load: paced arrivals, client c takes arrivals c, c + C, …; each POST goes to one of the two APIs.
    const started: { id: string; workflow: string }[] = [];
    const errors: string[] = [];
    let late = 0;
    const total = Math.round(RATE * DURATION_S);
    const samples: Sample[] = [];
    let backlogInsertS = 0;
    if (BACKLOG > 0) {
      log(`adding a backlog of ${BACKLOG} completed executions`);
      loadStart = Date.now();
      backlogInsertS = await addBacklog();
      log(`backlog committed in ${backlogInsertS.toFixed(1)} s`);
    }
    loadStart = Date.now();
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const t = (Date.now() - loadStart) / 1000;
        const { rows } = await db.query(
          `SELECT (SELECT count(*) FROM "workflow_executions" WHERE "task_execution_id" IS NULL AND "state" IN ${COMPLETED})::int AS completed_roots,
                  (SELECT count(*) FROM "workflow_executions" WHERE "task_execution_id" IS NULL AND "state" NOT IN ${COMPLETED})::int AS running_roots,
                  (SELECT count(*) FROM "workflow_executions")::int AS executions,
                  (SELECT count(*) FROM "task_executions")::int AS task_executions,
                  (SELECT count(*) FROM "action_executions")::int AS action_executions,
                  (SELECT count(*) FROM "bench_removed_executions" WHERE "task_execution_id" IS NULL)::int AS removed_roots,
                  (SELECT count(*) FROM "bench_removed_executions")::int AS removed_executions,
                  (SELECT count(*) FROM "workflow_executions" WHERE "description" = 'bench-backlog')::int AS backlog_left`,
        );
        samples.push({ t: round(t, 2), ...(rows[0] as Omit<Sample, 't'>) });
        await sleep(1000);
      }
    })();
    const t0 = loadStart + 200;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let k = c; k < total; k += CLIENTS) {
          const at = t0 + (k * 1000) / RATE;
          // a fixed duration: a product slower than the offered rate gets fewer arrivals, not more time
          if (Date.now() >= t0 + DURATION_S * 1000) break;
          const wait = at - Date.now();
          if (wait > 0) await sleep(wait);
          else if (wait < -50) late++;
          const workflow = workflowOf(k);
          try {
            const res = await apis[k % apis.length]!.request({
              method: 'POST',
              path: '/v2/executions',
              headers: { ...HEADERS, 'content-type': 'application/json' },
              body: JSON.stringify({ workflow_name: workflow }),
            });
            const text = await res.body.text();
            if (res.statusCode !== 201) errors.push(`${res.statusCode} ${text.slice(0, 200)}`);
            else started.push({ id: String((JSON.parse(text) as { id: string }).id), workflow });
          } catch (err) {
            errors.push(String(err));
          }
        }
      }),
    );
    const loadSeconds = (Date.now() - t0) / 1000;
    const loadAverageAtLoadEnd = load();
    log(
      `load done: ${started.length} started in ${loadSeconds.toFixed(1)} s (${errors.length} errors, ${late} late), load average ${loadAverageAtLoadEnd.join(' ')}`,
    );

    // Settle: the slow executions finish, then one more interval for a pass to bring the count down.
    const settleStart = Date.now();
    while (Date.now() - settleStart < SETTLE_S * 1000) {
      const last = samples[samples.length - 1];
      if (last && last.running_roots === 0) break;
      await sleep(1000);
    }
    await sleep(INTERVAL_MIN * 60_000 * 2 + 2000);
    sampling = false;
    await sampler;

    // The checks, from the database.
    const ids = started.map((s) => s.id);
    const { rows: fate } = await db.query(
      `SELECT s.id, (w."id" IS NOT NULL) AS present, w."state" AS present_state, r."state" AS removed_state,
              (SELECT count(*) FROM "bench_removed_executions" d WHERE d."root_execution_id" = r."id" AND d."txid" = r."txid"
                  AND d."state" NOT IN ${COMPLETED})::int AS unfinished_descendants
         FROM unnest($1::uuid[]) AS s(id)
         LEFT JOIN "workflow_executions" w ON w."id" = s.id
         LEFT JOIN "bench_removed_executions" r ON r."id" = s.id`,
      [ids],
    );
    const present = fate.filter((r) => r.present).length;
    const removed = fate.filter((r) => !r.present && r.removed_state !== null);
    const vanished = fate.filter((r) => !r.present && r.removed_state === null).length;
    const removedIncomplete = removed.filter(
      (r) => !['SUCCESS', 'ERROR', 'CANCELLED'].includes(String(r.removed_state)),
    ).length;
    const removedWithUnfinishedDescendants = removed.filter(
      (r) => Number(r.unfinished_descendants) > 0,
    ).length;
    const { rows: audit } = await db.query(
      `SELECT (SELECT count(*) FROM "bench_removed_executions" WHERE "state" NOT IN ${COMPLETED})::int AS removed_not_completed,
              (SELECT count(*) FROM "bench_removed_executions" c WHERE c."root_execution_id" IS NOT NULL) ::int AS removed_subs,
              (SELECT count(*) FROM "bench_removed_executions" c WHERE c."root_execution_id" IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM "bench_removed_executions" r WHERE r."id" = c."root_execution_id" AND r."txid" = c."txid"))::int AS subs_removed_without_root,
              (SELECT count(*) FROM "workflow_executions" c WHERE c."root_execution_id" IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM "workflow_executions" r WHERE r."id" = c."root_execution_id"))::int AS orphan_subs,
              (SELECT count(*) FROM "workflow_executions" c WHERE c."root_execution_id" IS NOT NULL)::int AS present_subs`,
    );
    const a = audit[0] as Record<string, number>;

    // Rates: finishes = completed roots present + removed roots; per second over the load, by sample.
    const during = samples.filter((s) => s.t >= 0 && s.t <= loadSeconds + 0.2);
    const finished = (s: Sample) => s.completed_roots + s.removed_roots;
    const first = during[0];
    const last = during[during.length - 1];
    const span = first && last ? last.t - first.t : 0;
    const finishesPerS = first && last && span > 0 ? (finished(last) - finished(first)) / span : 0;
    const removalsPerS = first && last && span > 0 ? (last.removed_roots - first.removed_roots) / span : 0;
    // After the first max-finished / older-than worth of finishes, removals must match finishes.
    const secondHalf = during.filter((s) => s.t >= loadSeconds / 2);
    const h0 = secondHalf[0];
    const h1 = secondHalf[secondHalf.length - 1];
    const hSpan = h0 && h1 ? h1.t - h0.t : 0;
    const secondHalfFinishes = h0 && h1 && hSpan > 0 ? (finished(h1) - finished(h0)) / hSpan : 0;
    const secondHalfRemovals = h0 && h1 && hSpan > 0 ? (h1.removed_roots - h0.removed_roots) / hSpan : 0;
    // Least-squares slope of the completed count over the second half: ≈ 0 when bounded.
    const slope = (() => {
      const n = secondHalf.length;
      if (n < 2) return 0;
      const mt = secondHalf.reduce((x, s) => x + s.t, 0) / n;
      const mc = secondHalf.reduce((x, s) => x + s.completed_roots, 0) / n;
      const num_ = secondHalf.reduce((x, s) => x + (s.t - mt) * (s.completed_roots - mc), 0);
      const den = secondHalf.reduce((x, s) => x + (s.t - mt) ** 2, 0);
      return den > 0 ? num_ / den : 0;
    })();
    // With a backlog, the count is bounded once it is drained; the drain rate is the policy's capacity.
    const drained = BACKLOG > 0 ? during.find((s) => s.backlog_left === 0) : undefined;
    const bounded = BACKLOG > 0 ? (drained ? during.filter((s) => s.t >= drained.t) : []) : during;
    const maxCompleted = Math.max(0, ...bounded.map((s) => s.completed_roots));
    const backlog =
      BACKLOG > 0
        ? {
            executions: BACKLOG,
            insert_seconds: round(backlogInsertS),
            drained_after_s: drained ? drained.t : null,
            left_at_load_end: last?.backlog_left ?? null,
            // the backlog is older than every load execution: the first pass removes all but the newest
            // max_finished of it, the rest leaves as load executions finish and push it out
            drain_removals_per_s: drained
              ? round(BACKLOG / drained.t)
              : first && last && last.t > first.t
                ? round((first.backlog_left - last.backlog_left) / (last.t - first.t))
                : null,
          }
        : undefined;
    const passMs = passes.map((p) => p.durationMs);
    const largest = passes.reduce<PassLine | undefined>(
      (a, p) => (!a || p.count > a.count ? p : a),
      undefined,
    );
    const intervalS = INTERVAL_MIN * 60;
    // The count may exceed the limit by what finishes between two passes and during one.
    const expectedBound =
      MAX_FINISHED > 0
        ? Math.ceil(
            MAX_FINISHED + Math.max(finishesPerS, RATE) * (intervalS + Math.max(0, ...passMs) / 1000) * 1.5,
          )
        : null;
    const endSample = samples[samples.length - 1];

    const failures: string[] = [];
    if (vanished > 0) failures.push(`${vanished} started execution(s) gone without a removal record`);
    if (removedIncomplete > 0 || a['removed_not_completed']! > 0)
      failures.push(`${a['removed_not_completed']} execution(s) removed while not completed`);
    if (removedWithUnfinishedDescendants > 0)
      failures.push(`${removedWithUnfinishedDescendants} root(s) removed with an unfinished descendant`);
    if (a['subs_removed_without_root']! > 0)
      failures.push(
        `${a['subs_removed_without_root']} sub-execution(s) removed without their root in the same transaction`,
      );
    if (a['orphan_subs']! > 0) failures.push(`${a['orphan_subs']} sub-execution(s) left whose root is gone`);
    if (BACKLOG > 0 && !drained)
      failures.push(`the backlog was not drained during the load (${last?.backlog_left} left)`);
    if (expectedBound !== null && maxCompleted > expectedBound)
      failures.push(`completed executions reached ${maxCompleted}, above ${expectedBound}`);
    if (expectedBound !== null && endSample && endSample.completed_roots > MAX_FINISHED) {
      failures.push(
        `${endSample.completed_roots} completed executions left after the load, above max_finished_executions ${MAX_FINISHED}`,
      );
    }
    if (removed.length === 0) failures.push('nothing was removed');

    const result = {
      benchmark: 'expiration',
      scenario: SCENARIO,
      at: new Date().toISOString(),
      machine: { cpus: cpus().length },
      load_average: { at_load_end: loadAverageAtLoadEnd, at_end: load() },
      product:
        'distributed: 2 × workflow-api, 2 × workflow-engine, 2 × cron-scheduler; PostgreSQL, RabbitMQ, Redis',
      settings: {
        evaluation_interval_min: INTERVAL_MIN,
        max_finished_executions: MAX_FINISHED,
        older_than_min: OLDER_THAN_MIN,
        batch_size: BATCH_SIZE,
      },
      load: {
        offered_per_s: RATE,
        duration_s: DURATION_S,
        clients: CLIENTS,
        mix: '1 % slow (std.sleep 15 s), 1 % slow_parent (sub-workflow sleeps 15 s), 5 % failing, 10 % parent (sub-workflow), the rest quick (one inline std.echo)',
        started: started.length,
        errors: errors.length,
        first_errors: errors.slice(0, 5),
        late_arrivals: late,
        seconds: round(loadSeconds, 1),
        achieved_started_per_s: round(started.length / loadSeconds),
      },
      ...(backlog ? { backlog } : {}),
      rates: {
        finishes_per_s: round(finishesPerS),
        removals_per_s: round(removalsPerS),
        second_half: {
          finishes_per_s: round(secondHalfFinishes),
          removals_per_s: round(secondHalfRemovals),
          completed_count_slope_per_s: round(slope, 2),
        },
      },
      completed_roots: {
        max_during_load: maxCompleted,
        ...(BACKLOG > 0 ? { max_counted_from_s: drained?.t ?? null } : {}),
        expected_bound: expectedBound,
        p50_during_load: pct(
          during.map((s) => s.completed_roots),
          50,
        ),
        at_end: endSample?.completed_roots ?? null,
      },
      passes: {
        count: passes.length,
        by_replica: Object.fromEntries(
          ['cron-scheduler#1', 'cron-scheduler#2'].map((r) => [
            r,
            passes.filter((p) => p.replica === r).length,
          ]),
        ),
        duration_ms: { p50: pct(passMs, 50), p95: pct(passMs, 95), max: Math.max(0, ...passMs) },
        removed_per_pass: {
          p50: pct(
            passes.map((p) => p.count),
            50,
          ),
          max: Math.max(0, ...passes.map((p) => p.count)),
        },
        // the policy's capacity: the pass that removed the most, and its removals per second of pass time
        largest_pass: largest
          ? {
              count: largest.count,
              batches: largest.batches,
              duration_ms: largest.durationMs,
              removals_per_s: round(largest.count / (largest.durationMs / 1000)),
            }
          : null,
        batch_duration_ms: {
          batches: batchMs.length,
          p50: pct(batchMs, 50),
          p95: pct(batchMs, 95),
          max: Math.max(0, ...batchMs),
        },
      },
      checks: {
        started: ids.length,
        present_at_end: present,
        removed: removed.length,
        vanished_without_record: vanished,
        removed_not_completed: a['removed_not_completed'],
        removed_with_unfinished_descendants: removedWithUnfinishedDescendants,
        sub_executions_removed: a['removed_subs'],
        sub_executions_removed_without_root: a['subs_removed_without_root'],
        sub_executions_present_at_end: a['present_subs'],
        orphan_sub_executions: a['orphan_subs'],
      },
      failures,
      passed: failures.length === 0,
      samples,
    };
    const file = arg('results', path.join(__dirname, '..', 'results', 'expiration.json'));
    mkdirSync(path.dirname(file), { recursive: true });
    const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
    all[SCENARIO] = result;
    writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
    const { samples: _omit, ...summary } = result;
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    for (const f of failures) log(`FAILED: ${f}`);
    if (failures.length > 0) exitCode = 1;
  } finally {
    for (const p of apis) await p.close();
    await supervisor.stopAll();
    await db.end().catch(() => undefined);
    if (KEEP_DB) log(`kept database ${database}`);
    else
      await adminSql(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((e: unknown) =>
        log(`drop database: ${String(e)}`),
      );
    await purgeTestPrefix({ queuePrefix, amqpUrl: AMQP_URL, redisUrl: REDIS_URL }).catch((e: unknown) =>
      log(`purge: ${String(e)}`),
    );
  }
  process.exitCode = exitCode;
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(2);
});
