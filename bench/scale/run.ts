/**
 * Scale benchmark (issue 17): does the cost of a request stay flat as the history grows?
 *
 * One PostgreSQL database is grown in steps (`--sizes`, executions): synthetic rows are bulk-loaded
 * server-side (`INSERT … SELECT FROM generate_series`, FK triggers off: PostgreSQL's fastest bulk
 * path, no bytes through the client) — per execution `--tasks` task rows with one action execution
 * each, one volume per `--volume-ratio` executions with one snapshot and one backup each, and one
 * cron trigger per `--cron-ratio` executions. After each step (ANALYZE, as autovacuum would) the
 * workflow-api and volume-api (bench/scale/server.ts, distributed runtimes) are measured through
 * HTTP with one client, sequential requests (latency, not throughput): GET by id, the first list
 * page, a filtered page, a deep page by marker (the 1,000th page of 10, or the deepest page there is),
 * for executions, tasks, action executions, cron triggers, volumes/detail, snapshots/detail and
 * backups/detail. The cron scheduler's due scan and the reconciler's scans have no HTTP surface:
 * they are timed as SQL (`claimDueCronTriggers`' statement; the reconciler's own functions), a
 * diagnostic. Then 8 clients for `--throughput-seconds` on
 * the 100-row pages of executions, tasks and volumes/detail: requests/s and the server's CPU per request.
 * Rows belong to `--projects` projects (g % P), and every project has the same mix (states, names
 * and statuses follow g / P); requests speak as project a0 (volume-api wants hex project ids).
 *
 *   node -r @swc-node/register bench/scale/run.ts [--sizes=10000,100000,1000000] [--tasks=10]
 *     [--volume-ratio=10] [--cron-ratio=50] [--projects=2] [--requests=100] [--keep] [--database=<kept db>]
 *
 * Writes bench/results/scale.json (`--results=<file>` elsewhere).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import {
  findIdleRunningExecutions,
  findLostExecutorActions,
  findStuckTaskCandidates,
} from '@osc/workflow-persistence';
import { processCpuSeconds } from '../engine/proc-cpu';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const SIZES = arg('sizes', '10000,100000,1000000').split(',').map(Number);
const TASKS = Number(arg('tasks', '10'));
const VOLUME_RATIO = Number(arg('volume-ratio', '10'));
const CRON_RATIO = Number(arg('cron-ratio', '50'));
/**
 * PAUSED executions per project: the first rows loaded, never more as the history grows, so the rare
 * filter returns the same page at every size and only the history around it grows.
 */
const RARE = 5;
const PROJECTS = Number(arg('projects', '2'));
const REQUESTS = Number(arg('requests', '100'));
const BATCH = 50_000;
const THROUGHPUT_CLIENTS = 8;
const THROUGHPUT_SECONDS = Number(arg('throughput-seconds', '5'));
const ADMIN_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const uptime = (): string =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

function startServer(url: string): Promise<{ child: ChildProcess; wf: number; bs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', '@swc-node/register', path.join(__dirname, 'server.ts')], {
      cwd: path.resolve(__dirname, '../..'),
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (d) => {
      out += String(d);
      const m = /READY (\d+) (\d+)/.exec(out);
      if (m) resolve({ child, wf: Number(m[1]), bs: Number(m[2]) });
    });
    child.once('exit', (code) => reject(new Error(`scale server exited ${code}`)));
  });
}

/** Grows the history from `from` to `to` executions (and the block-storage rows in proportion). */
async function load(db: pg.Client, from: number, to: number): Promise<void> {
  await db.query(`SET session_replication_role = replica`); // no FK triggers: the rows are consistent by construction
  const base = `'2025-01-01T00:00:00Z'::timestamptz`;
  for (let a = from; a < to; a += BATCH) {
    const b = Math.min(to, a + BATCH);
    await db.query('BEGIN');
    const [{ lo }] = (
      await db.query(
        `WITH payload AS (
           -- a 10-task workflow's spec (~2 KB), as executions store it
           SELECT jsonb_build_object('name', 'wf', 'version', '2.0', 'type', 'direct', 'input', jsonb_build_array('x', 'names'),
                    'tasks', (SELECT jsonb_object_agg('t' || i, jsonb_build_object('name', 't' || i, 'action', 'std.echo',
                                'input', jsonb_build_object('output', '<% $.x + ' || i || ' %>'), 'publish', jsonb_build_object('r' || i, '<% task().result %>'),
                                'on-success', jsonb_build_array('t' || (i + 1)), 'retry', jsonb_build_object('count', 3, 'delay', 1)))
                                FROM generate_series(0, 9) i)) AS spec),
         ins AS (
           INSERT INTO "workflow_executions" ("id", "workflow_id", "workflow_name", "project_id", "state", "state_info", "spec", "input", "output", "params", "context", "created_at", "updated_at")
           SELECT gen_random_uuid(), 'wf-' || (g / ${PROJECTS} % 100), 'wf' || (g / ${PROJECTS} % 100), 'a' || (g % ${PROJECTS}),
                  CASE WHEN g < ${PROJECTS * RARE} THEN 'PAUSED' WHEN g / ${PROJECTS} % 50 = 7 THEN 'ERROR' WHEN g / ${PROJECTS} % 5000 = 3 THEN 'RUNNING' ELSE 'SUCCESS' END,
                  CASE WHEN g / ${PROJECTS} % 50 = 7 THEN 'Failure caused by error in tasks: t3' END,
                  (SELECT spec FROM payload), '{"x":1,"names":["a","b","c"]}', '{"result":"ok","count":10}', '{"env":{"region":"r1"}}',
                  jsonb_build_object('x', 1, 'names', jsonb_build_array('a', 'b', 'c'), 'r0', repeat('v', 100), 'r1', repeat('v', 100), 'r2', repeat('v', 100),
                                     '__execution', jsonb_build_object('id', g, 'params', '{}'::jsonb, 'input', '{"x":1}'::jsonb)),
                  ${base} + g * interval '1 second', ${base} + g * interval '1 second' + interval '2 seconds'
             FROM generate_series($1::bigint, $2::bigint - 1) g
           RETURNING "seq")
         SELECT min("seq") AS lo FROM ins`,
        [a, b],
      )
    ).rows as [{ lo: string }];
    await db.query(
      `INSERT INTO "task_executions" ("id", "name", "workflow_execution_id", "workflow_id", "workflow_name", "project_id", "type", "state",
                                      "published", "runtime_context", "result", "processed", "in_context", "started_at", "finished_at", "created_at", "updated_at")
       SELECT gen_random_uuid(), 't' || k, e."id", e."workflow_id", e."workflow_name", e."project_id", 'ACTION',
              CASE WHEN e."state" = 'ERROR' AND k = 3 THEN 'ERROR'
                   WHEN e."state" = 'RUNNING' AND k = ${TASKS - 1} AND e."seq" % 2 = 0 THEN 'RUNNING' ELSE 'SUCCESS' END,
              jsonb_build_object('r' || k, repeat('v', 100)), '{"triggered_by":[]}', to_jsonb(repeat('result ', 20)), true, e."context", e."created_at", e."created_at", e."created_at" + k * interval '1 millisecond', e."updated_at"
         FROM "workflow_executions" e, generate_series(0, ${TASKS - 1}) k
        WHERE e."seq" >= $1 AND e."seq" < $1 + $2 ORDER BY e."seq", k`,
      [lo, b - a],
    );
    await db.query(
      `INSERT INTO "action_executions" ("id", "name", "workflow_execution_id", "task_execution_id", "task_name", "workflow_name", "project_id",
                                        "state", "input", "output", "accepted", "created_at", "updated_at")
       SELECT gen_random_uuid(), 'std.noop', t."workflow_execution_id", t."id", t."name", t."workflow_name", t."project_id",
              t."state", '{}', '{"result":null}', true, t."created_at", t."updated_at"
         FROM "task_executions" t
        WHERE t."seq" > (SELECT COALESCE(max("seq"), 0) FROM "task_executions") - $1 ORDER BY t."seq"`,
      [(b - a) * TASKS],
    );
    const vFrom = Math.floor(a / VOLUME_RATIO);
    const vTo = Math.floor(b / VOLUME_RATIO);
    if (vTo > vFrom) {
      await db.query(
        `WITH v AS (
           INSERT INTO "volumes" ("id", "project_id", "display_name", "size", "status", "attach_status", "availability_zone", "volume_type_id",
                                  "metadata", "host", "created_at", "updated_at")
           SELECT gen_random_uuid(), 'a' || (g % ${PROJECTS}), 'vol-' || g, 1 + g % 10, CASE WHEN g / ${PROJECTS} % 5 = 2 THEN 'error' ELSE 'available' END,
                  'detached', 'nova', (SELECT "id" FROM "volume_types" WHERE NOT "deleted" ORDER BY "created_at" LIMIT 1),
                  '{"k":"v"}', 'bench@file#file', ${base} + g * interval '10 seconds', ${base} + g * interval '10 seconds'
             FROM generate_series($1::bigint, $2::bigint - 1) g
           RETURNING "id", "project_id", "size", "created_at", "volume_type_id"),
         s AS (
           INSERT INTO "snapshots" ("id", "project_id", "volume_id", "volume_type_id", "display_name", "size", "status", "progress", "created_at", "updated_at")
           SELECT gen_random_uuid(), v."project_id", v."id", v."volume_type_id", 'snap', v."size", 'available', '100%', v."created_at" + interval '1 second', v."created_at"
             FROM v RETURNING "id")
         INSERT INTO "backups" ("id", "project_id", "volume_id", "display_name", "status", "size", "object_count", "availability_zone", "container",
                                "host", "service", "data_timestamp", "created_at", "updated_at")
         SELECT gen_random_uuid(), v."project_id", v."id", 'backup', 'available', v."size", 1, 'nova', 'backups', 'bench', 'file',
                v."created_at", v."created_at" + interval '2 seconds', v."created_at"
           FROM v`,
        [vFrom, vTo],
      );
    }
    const cFrom = Math.floor(a / CRON_RATIO);
    const cTo = Math.floor(b / CRON_RATIO);
    if (cTo > cFrom) {
      // Spread over the next 30 days: the due scan finds a handful due now, as a running system does.
      await db.query(
        `INSERT INTO "cron_triggers" ("id", "name", "project_id", "workflow_id", "workflow_name", "workflow_input_hash", "workflow_params_hash",
                                      "pattern", "next_execution_time", "created_at")
         SELECT gen_random_uuid(), 'cron-' || g, 'a' || (g % ${PROJECTS}), gen_random_uuid(), 'wf' || (g % 100), md5(g::text), md5(''),
                '0 * * * *', now() + ((g * 7919) % 2592000) * interval '1 second', ${base} + g * interval '1 minute'
           FROM generate_series($1::bigint, $2::bigint - 1) g`,
        [cFrom, cTo],
      );
    }
    await db.query('COMMIT');
    process.stderr.write(`  loaded ${b} executions (load ${uptime()})\n`);
  }
  await db.query(`SET session_replication_role = origin`);
  await db.query('ANALYZE');
}

interface Figure {
  p50: number;
  p95: number;
  mean: number;
  status: number;
  items?: number;
}

async function measure(http: Pool, headers: Record<string, string>, paths: string[]): Promise<Figure> {
  const ms: number[] = [];
  let status = 0;
  let items: number | undefined;
  // 5 warm-up requests (connections, prepared plans), then the timed ones
  for (let i = -5; i < REQUESTS; i++) {
    const p = paths[(i + 5) % paths.length]!;
    const t = process.hrtime.bigint();
    const res = await http.request({ method: 'GET', path: p, headers });
    const body = await res.body.text();
    const dt = Number(process.hrtime.bigint() - t) / 1e6;
    if (i < 0) continue;
    ms.push(dt);
    status = res.statusCode;
    if (res.statusCode !== 200) throw new Error(`GET ${p}: ${res.statusCode} ${body.slice(0, 300)}`);
    const parsed = JSON.parse(body) as Record<string, unknown>;
    const list = Object.values(parsed).find(Array.isArray);
    if (list) items = list.length;
  }
  const r = (x: number) => Number(x.toFixed(2));
  return {
    p50: r(pct(ms, 50)),
    p95: r(pct(ms, 95)),
    mean: r(ms.reduce((s, x) => s + x, 0) / ms.length),
    status,
    ...(items !== undefined ? { items } : {}),
  };
}

/** CPU seconds used so far by a process (Linux /proc; 0 elsewhere). */
const cpuSeconds = (pid: number | undefined): number => (pid === undefined ? 0 : processCpuSeconds(pid));

/**
 * Throughput of one request with `THROUGHPUT_CLIENTS` concurrent clients for `THROUGHPUT_SECONDS`,
 * and the API server process's CPU per request (the figure the shared machine's load disturbs least).
 */
async function throughput(
  url: string,
  headers: Record<string, string>,
  p: string,
  serverPid: number | undefined,
) {
  const pool = new Pool(url, { connections: THROUGHPUT_CLIENTS });
  const end = Date.now() + THROUGHPUT_SECONDS * 1000;
  const cpu0 = cpuSeconds(serverPid);
  const t0 = Date.now();
  let n = 0;
  await Promise.all(
    Array.from({ length: THROUGHPUT_CLIENTS }, async () => {
      while (Date.now() < end) {
        const res = await pool.request({ method: 'GET', path: p, headers });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`GET ${p}: ${res.statusCode}`);
        n++;
      }
    }),
  );
  const seconds = (Date.now() - t0) / 1000;
  const cpu = cpuSeconds(serverPid) - cpu0;
  await pool.close();
  return {
    requests: n,
    requests_per_s: Number((n / seconds).toFixed(1)),
    server_cpu_ms_per_request: Number(((cpu * 1000) / n).toFixed(2)),
  };
}

async function sample(db: pg.Client, table: string, where = ''): Promise<string[]> {
  // TABLESAMPLE keeps the set-up cheap at 10 M rows; the ids are random across the history.
  let rows = (
    await db.query(
      `SELECT "id" FROM "${table}" TABLESAMPLE SYSTEM (1) WHERE "project_id" = 'a0' ${where} LIMIT 200`,
    )
  ).rows as { id: string }[];
  if (rows.length < 50)
    rows = (
      await db.query(
        `SELECT "id" FROM "${table}" WHERE "project_id" = 'a0' ${where} ORDER BY random() LIMIT 50`,
      )
    ).rows as { id: string }[];
  const ids = rows.map((r) => r.id).sort(() => Math.random() - 0.5);
  return ids.slice(0, 50);
}

/** The marker of the 1,000th page of 10 in a0's default order (or of the deepest page there is). */
async function deepMarker(
  db: pg.Client,
  table: string,
  where: string,
  order = `"created_at", "id"`,
): Promise<{ marker: string; offset: number }> {
  const [{ n }] = (
    await db.query(`SELECT count(*)::int AS n FROM "${table}" WHERE "project_id" = 'a0' ${where}`)
  ).rows as [{ n: number }];
  const offset = Math.max(0, Math.min(999 * 10, n - 11));
  const rows = (
    await db.query(
      `SELECT "id" FROM "${table}" WHERE "project_id" = 'a0' ${where} ORDER BY ${order} OFFSET ${offset} LIMIT 1`,
    )
  ).rows as { id: string }[];
  return { marker: rows[0]!.id, offset: offset + 1 };
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  // `--database=<name>`: measure (and grow) a database a previous `--keep` run left
  const reuse = arg('database', '');
  const database = reuse || `osc_scale_${randomBytes(4).toString('hex')}`;
  if (!reuse) await admin.query(`CREATE DATABASE "${database}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  process.stderr.write(`database ${database}\n`);
  const server = await startServer(url.toString()); // runs the migrations
  const db = new pg.Client({ connectionString: url.toString() });
  await db.connect();
  const wf = new Pool(`http://127.0.0.1:${server.wf}`, { connections: 1 });
  const bs = new Pool(`http://127.0.0.1:${server.bs}`, { connections: 1 });
  const wfh = { 'x-project-id': 'a0', 'x-user-id': 'u0', 'x-roles': 'member,reader' };
  const bsh = {
    'x-project-id': 'a0',
    'x-user-id': 'u0',
    'x-roles': 'member,reader',
    'openstack-api-version': 'volume 3.60',
  };
  const steps: Record<string, unknown>[] = [];
  let loaded = reuse
    ? Number(
        ((await db.query(`SELECT count(*)::int AS n FROM "workflow_executions"`)).rows as [{ n: number }])[0]
          .n,
      )
    : 0;
  try {
    for (const size of SIZES) {
      const t0 = Date.now();
      if (size > loaded) await load(db, loaded, size);
      else await db.query('ANALYZE');
      loaded = Math.max(loaded, size);
      const loadSeconds = (Date.now() - t0) / 1000;
      const counts = (
        await db.query(
          `SELECT (SELECT count(*) FROM "workflow_executions")::int AS executions, (SELECT count(*) FROM "task_executions")::int AS tasks,
                (SELECT count(*) FROM "action_executions")::int AS action_executions, (SELECT count(*) FROM "cron_triggers")::int AS cron_triggers,
                (SELECT count(*) FROM "volumes")::int AS volumes, (SELECT count(*) FROM "snapshots")::int AS snapshots,
                (SELECT count(*) FROM "backups")::int AS backups`,
        )
      ).rows[0] as Record<string, number>;
      const exIds = await sample(db, 'workflow_executions');
      const taskIds = await sample(db, 'task_executions');
      const actionIds = await sample(db, 'action_executions');
      const volIds = await sample(db, 'volumes');
      const snapIds = await sample(db, 'snapshots');
      const backupIds = await sample(db, 'backups');
      const exDeep = await deepMarker(db, 'workflow_executions', '');
      const taskDeep = await deepMarker(db, 'task_executions', '');
      const actionDeep = await deepMarker(db, 'action_executions', '');
      const cronDeep = await deepMarker(db, 'cron_triggers', '');
      const volDeep = await deepMarker(db, 'volumes', 'AND NOT "deleted"', `"created_at" DESC, "id" DESC`);
      const snapDeep = await deepMarker(db, 'snapshots', 'AND NOT "deleted"', `"created_at" DESC, "id" DESC`);
      const backupDeep = await deepMarker(db, 'backups', 'AND NOT "deleted"', `"created_at" DESC, "id" DESC`);
      const v = '/v3/a0';
      const figures: Record<string, Figure> = {};
      const run = async (name: string, pool: Pool, headers: Record<string, string>, paths: string[]) => {
        figures[name] = await measure(pool, headers, paths);
        process.stderr.write(`  ${name}: p50 ${figures[name].p50} ms p95 ${figures[name].p95} ms\n`);
      };
      await run(
        'execution_get',
        wf,
        wfh,
        exIds.map((id) => `/v2/executions/${id}`),
      );
      await run('executions_first_page', wf, wfh, ['/v2/executions?limit=100']);
      // Every figure compares pages of one size at every step, so that only the history behind them grows.
      // ERROR: 2 % of the rows; wf8: 2 % of the project's rows (both a full page of 100 at 10 k);
      // PAUSED: 5 rows of the project at every size; wf-none: no row at all
      await run('executions_filtered_page', wf, wfh, [
        '/v2/executions?limit=100&state=ERROR',
        '/v2/executions?limit=100&workflow_name=wf8',
      ]);
      await run('executions_filtered_rare', wf, wfh, [
        '/v2/executions?limit=100&state=PAUSED',
        '/v2/executions?limit=100&workflow_name=wf-none',
      ]);
      await run('executions_page_1000', wf, wfh, [`/v2/executions?limit=10&marker=${exDeep.marker}`]);
      await run('executions_first_page_desc', wf, wfh, [
        '/v2/executions?limit=100&sort_keys=created_at&sort_dirs=desc',
      ]);
      await run(
        'task_get',
        wf,
        wfh,
        taskIds.map((id) => `/v2/tasks/${id}`),
      );
      await run('tasks_first_page', wf, wfh, ['/v2/tasks?limit=100']);
      await run(
        'tasks_of_execution',
        wf,
        wfh,
        exIds.map((id) => `/v2/executions/${id}/tasks`),
      );
      await run('tasks_page_1000', wf, wfh, [`/v2/tasks?limit=10&marker=${taskDeep.marker}`]);
      await run(
        'action_execution_get',
        wf,
        wfh,
        actionIds.map((id) => `/v2/action_executions/${id}`),
      );
      await run('action_executions_first_page', wf, wfh, ['/v2/action_executions?limit=100']);
      await run(
        'action_executions_filtered_page',
        wf,
        wfh,
        taskIds.map((id) => `/v2/action_executions?limit=100&task_execution_id=${id}`),
      );
      await run('action_executions_page_1000', wf, wfh, [
        `/v2/action_executions?limit=10&marker=${actionDeep.marker}`,
      ]);
      // one trigger per 50 executions: 200 at 10 k, a full page of 100 for the project
      await run('cron_triggers_first_page', wf, wfh, ['/v2/cron_triggers?limit=100']);
      await run('cron_triggers_page_1000', wf, wfh, [`/v2/cron_triggers?limit=10&marker=${cronDeep.marker}`]);
      await run(
        'volume_get',
        bs,
        bsh,
        volIds.map((id) => `${v}/volumes/${id}`),
      );
      await run('volumes_detail_first_page', bs, bsh, [`${v}/volumes/detail?limit=100`]);
      // status=error: 1 volume in 5, a full page of 100 at 10 k (500 volumes in the project)
      await run('volumes_detail_filtered_page', bs, bsh, [`${v}/volumes/detail?limit=100&status=error`]);
      await run('volumes_detail_page_1000', bs, bsh, [
        `${v}/volumes/detail?limit=10&marker=${volDeep.marker}`,
      ]);
      await run(
        'snapshot_get',
        bs,
        bsh,
        snapIds.map((id) => `${v}/snapshots/${id}`),
      );
      await run('snapshots_detail_first_page', bs, bsh, [`${v}/snapshots/detail?limit=100`]);
      await run('snapshots_detail_page_1000', bs, bsh, [
        `${v}/snapshots/detail?limit=10&marker=${snapDeep.marker}`,
      ]);
      await run(
        'backup_get',
        bs,
        bsh,
        backupIds.map((id) => `${v}/backups/${id}`),
      );
      await run('backups_detail_first_page', bs, bsh, [`${v}/backups/detail?limit=100`]);
      await run(
        'backups_detail_filtered_page',
        bs,
        bsh,
        volIds.map((id) => `${v}/backups/detail?limit=100&volume_id=${id}`),
      );
      await run('backups_detail_page_1000', bs, bsh, [
        `${v}/backups/detail?limit=10&marker=${backupDeep.marker}`,
      ]);
      // Server CPU per list page (issue 17 item 3): the workflow-api and volume-api share the server process.
      const through = {
        executions_list_100: await throughput(
          `http://127.0.0.1:${server.wf}`,
          wfh,
          '/v2/executions?limit=100',
          server.child.pid,
        ),
        tasks_list_100: await throughput(
          `http://127.0.0.1:${server.wf}`,
          wfh,
          '/v2/tasks?limit=100',
          server.child.pid,
        ),
        volumes_detail_100: await throughput(
          `http://127.0.0.1:${server.bs}`,
          bsh,
          `${v}/volumes/detail?limit=100`,
          server.child.pid,
        ),
      };
      process.stderr.write(`  throughput: ${JSON.stringify(through)}\n`);
      // Diagnostic (no HTTP surface): the cron scheduler's due scan, as claimDueCronTriggers runs it.
      const due: number[] = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t = process.hrtime.bigint();
        await db.query('BEGIN');
        await db.query(
          `SELECT * FROM "cron_triggers" WHERE "next_execution_time" <= $1::timestamptz ORDER BY "next_execution_time", "id" LIMIT $2 FOR UPDATE SKIP LOCKED`,
          [new Date(Date.now() + 60_000).toISOString(), 100],
        );
        await db.query('ROLLBACK');
        due.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
      const cronDue = { p50: Number(pct(due, 50).toFixed(2)), p95: Number(pct(due, 95).toFixed(2)) };
      process.stderr.write(`  cron_due_scan (SQL): p50 ${cronDue.p50} ms\n`);
      // Diagnostic (no HTTP surface): the reconciler's scans, as a pass runs them. The history holds
      // RUNNING executions (1 in 5,000), half of them with their last task RUNNING: the stuck-task
      // scan and the idle-execution scan each have candidates to find: 1 of each at 10 k executions,
      // 100 (the pass's limit) at 1 M, so a pass returns more rows as the history grows. Each scan is
      // also timed with a limit of 1 (`*_first`): the cost of reaching the first candidate, the same
      // work at every size, which is what grows if a scan walks the history.
      const rows = { query: async (sql: string, params?: unknown[]) => (await db.query(sql, params)).rows };
      const reconcilerScans: Record<string, { p50: number; p95: number; found: number }> = {};
      for (const [name, scan] of [
        ['stuck_tasks', () => findStuckTaskCandidates(rows, 300, 100)],
        ['stuck_tasks_first', () => findStuckTaskCandidates(rows, 300, 1)],
        ['idle_executions', () => findIdleRunningExecutions(rows, 300, 100)],
        ['idle_executions_first', () => findIdleRunningExecutions(rows, 300, 1)],
        ['lost_executor_actions', () => findLostExecutorActions(rows, 30, 100)],
      ] as const) {
        const took: number[] = [];
        let found = 0;
        for (let i = 0; i < Math.min(REQUESTS, 20); i++) {
          const t = process.hrtime.bigint();
          found = (await scan()).length;
          took.push(Number(process.hrtime.bigint() - t) / 1e6);
        }
        reconcilerScans[name] = {
          p50: Number(pct(took, 50).toFixed(2)),
          p95: Number(pct(took, 95).toFixed(2)),
          found,
        };
      }
      process.stderr.write(`  reconciler scans (SQL): ${JSON.stringify(reconcilerScans)}\n`);
      const step = {
        size,
        rows: counts,
        load_seconds: Number(loadSeconds.toFixed(1)),
        deep_page_offsets: {
          executions: exDeep.offset,
          tasks: taskDeep.offset,
          action_executions: actionDeep.offset,
          cron_triggers: cronDeep.offset,
          volumes: volDeep.offset,
          snapshots: snapDeep.offset,
          backups: backupDeep.offset,
        },
        latency_ms: figures,
        cron_due_scan_sql_ms: cronDue,
        reconciler_scans_sql_ms: reconcilerScans,
        throughput: through,
        load_average: os.loadavg().map((l) => Number(l.toFixed(2))),
        at: new Date().toISOString(),
      };
      steps.push(step);
      write(steps);
      process.stderr.write(`size ${size} measured (load ${uptime()})\n`);
    }
  } finally {
    await wf.close();
    await bs.close();
    server.child.kill('SIGTERM');
    await new Promise((r) => server.child.once('exit', r));
    await db.end();
    if (!reuse && !process.argv.includes('--keep'))
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
}

/** Writes the steps measured so far (a run stopped at a large size keeps its smaller ones). */
function write(steps: Record<string, unknown>[]): void {
  const first = steps[0]!['latency_ms'] as Record<string, Figure>;
  const last = steps[steps.length - 1]!['latency_ms'] as Record<string, Figure>;
  const growth = Object.fromEntries(
    Object.keys(first).map((k) => [k, Number((last[k]!.p50 / first[k]!.p50).toFixed(2))]),
  );
  const result = {
    machine: `${os.cpus().length} cores`,
    requests_per_figure: REQUESTS,
    projects: PROJECTS,
    tasks_per_execution: TASKS,
    steps,
    p50_growth_first_to_last: growth,
  };
  const file = arg('results', path.join(__dirname, '../results/scale.json'));
  mkdirSync(path.dirname(file), { recursive: true });
  const previous = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : {};
  writeFileSync(file, `${JSON.stringify({ ...previous, [arg('label', 'latest')]: result }, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
