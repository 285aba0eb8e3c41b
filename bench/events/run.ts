/**
 * Event stream benchmark (issue #16): many Server-Sent-Events subscribers on ONE workflow-api
 * process while executions run at a fixed rate, distributed (PostgreSQL, RabbitMQ, BullMQ, the
 * product's own workflow-api and workflow-engine processes). Everything goes through the public
 * HTTP API with a real HTTP client (undici): POST /v2/workflows, POST /v2/executions, and the two
 * streams of docs/workflow-events.md.
 *
 *   node -r @swc-node/register bench/events/run.ts [--rate=100] [--seconds=30] [--warmup=5]
 *     [--execution-subscribers=800] [--project-subscribers=200] [--projects=10] [--wait=8] [--engines=2] [--clients=64]
 *     [--results=bench/results/events.json] [--profile-api=<dir>] [--keepalive=false]
 *
 * - `--execution-subscribers` each watch one running execution's stream (GET /v2/executions/{id}/events)
 *   until it ends, then the newest execution nobody watches yet — an operator with an execution page open.
 * - `--project-subscribers` follow a project's stream of execution state changes (GET /v2/executions),
 *   spread evenly over `--projects` projects — a list page open.
 * - The workflow: `first` → `waiting` (`wait-before: --wait` s) → 8 more `std.noop` tasks, so about
 *   rate × wait executions run at once and every execution commits about 12 engine transactions.
 *
 * Delivery latency = the moment a subscriber's client parsed the event − the entry's `created_at`.
 * `created_at` is the engine's clock when it wrote the entry, inside the transaction, just before
 * the outbox rows and the commit: it is earlier than the commit, so the figure is an upper bound of
 * commit → delivery (same machine, same clock). Only entries written after the subscriber was
 * connected count (not the history a new subscriber catches up on), and only those written after
 * the warm-up; execution streams' are also split by whether the entry was written after the
 * response's headers arrived or while the subscription was still being answered (`subscribe_ms`). Each stream is also checked: ids strictly increasing (no duplicate, no reordering).
 *
 * The commit is told apart: the benchmark LISTENs on the engines' announcement channel itself
 * (the NOTIFY is delivered at commit and names the tree's last sequence number), so each entry's
 * commit time is the arrival of the first announcement of its tree at or past its `seq`.
 * `engine_commit_ms` = that − `created_at` (the engine's own delay: its transaction, its lock
 * waits, its CPU), `commit_to_delivery_ms` = delivery − that (the API's part: wake-up, read, write,
 * and the client's). Subscriptions that fail while the load runs are counted apart from those the
 * benchmark's own shutdown cuts (`UND_ERR_DESTROYED` when it destroys the subscribers' connections).
 */
import 'reflect-metadata';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { Agent, Pool, request } from 'undici';
import { purgeTestPrefix } from '@osc/testing';
import { registerStreamListener } from '@osc/workflow-persistence';
import { createEngineDatabase } from '../../apps/workflow-engine/test/engine-harness';
import { processCpuSeconds } from '../engine/proc-cpu';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

const RATE = Number(arg('rate', '100'));
const SECONDS = Number(arg('seconds', '30'));
const WARMUP = Number(arg('warmup', '5'));
const EXEC_SUBS = Number(arg('execution-subscribers', '800'));
const PROJECT_SUBS = Number(arg('project-subscribers', '200'));
const PROJECTS = Number(arg('projects', '10'));
const WAIT = Number(arg('wait', '8'));
const ENGINES = Number(arg('engines', '2'));
/** Concurrent creating clients: enough that a slow POST does not hold the offered rate back. */
const CLIENTS = Number(arg('clients', '64'));
/** Whether a subscriber reuses its connection for its next stream (as a browser's EventSource does); off: a new connection each. */
const KEEPALIVE = arg('keepalive', 'false') === 'true';
/** A directory: the API process writes a V8 CPU profile there when it exits. */
const PROFILE_API = arg('profile-api', '');

const WORKFLOW = `
version: '2.0'
bench_events:
  tasks:
    first:
      action: std.noop
      on-success: [waiting]
    waiting:
      wait-before: ${WAIT}
      action: std.noop
      on-success: [t3]
${[3, 4, 5, 6, 7, 8, 9, 10]
  .map((i) => `    t${i}:\n      action: std.noop${i < 10 ? `\n      on-success: [t${i + 1}]` : ''}`)
  .join('\n')}
`;

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};
const summary = (xs: number[]) => ({
  events: xs.length,
  p50: Math.round(pct(xs, 50)),
  p95: Math.round(pct(xs, 95)),
  p99: Math.round(pct(xs, 99)),
  max: Math.round(xs.reduce((m, x) => (x > m ? x : m), 0)),
});

/** Splits a text/event-stream body into messages (id, event, data), comments dropped. */
class SseSplitter {
  private buf = '';
  push(chunk: string): { id: string; event: string; data: string }[] {
    this.buf += chunk;
    const out: { id: string; event: string; data: string }[] = [];
    let cut: number;
    while ((cut = this.buf.indexOf('\n\n')) >= 0) {
      const block = this.buf.slice(0, cut);
      this.buf = this.buf.slice(cut + 2);
      let id = '';
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data) out.push({ id, event, data });
    }
    return out;
  }
}

/** The product's processes this run started: stopped at its end, and when it fails. */
const children: ChildProcess[] = [];

async function main(): Promise<void> {
  const db = await createEngineDatabase();
  process.stderr.write(`database ${db.url.slice(db.url.lastIndexOf('/') + 1)}\n`);
  const prefix = `benchev${Date.now()}`;
  const productEnv = {
    ...process.env,
    DATABASE_URL: db.url,
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    REDIS_URL: 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: `${prefix}.`,
    DB_POOL_SIZE: '10',
    LOG_LEVEL: 'warn',
  };
  const startProduct = (main: string, env: Record<string, string>, ready: RegExp): Promise<ChildProcess> => {
    const profile =
      PROFILE_API && main.includes('workflow-api') ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_API}`] : [];
    const child = spawn(
      process.execPath,
      [...profile, '-r', '@swc-node/register', path.join(__dirname, '../..', main)],
      { env: { ...productEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      const seen = (d: unknown) => {
        out += String(d);
        if (ready.test(out)) resolve(child);
      };
      child.stdout!.on('data', seen);
      child.stderr!.on('data', (d) => {
        seen(d);
        if (/"level":"(error|fatal)"/.test(String(d))) process.stderr.write(String(d));
      });
      child.once('exit', (code) => reject(new Error(`${main} exited ${code}: ${out.slice(-2000)}`)));
    });
  };
  for (let i = 0; i < ENGINES; i++) {
    await startProduct(
      'apps/workflow-engine/src/main.ts',
      {
        WORKFLOW_ENGINE_HEALTH_PORT: '0',
        WORKFLOW_ENGINE_HEALTH_HOST: '127.0.0.1',
        WORKFLOW_ENGINE_PREFETCH: '64',
        WORKFLOW_EXECUTOR_CONCURRENCY: '64',
      },
      /workflow-engine running/,
    );
  }
  const port = 20000 + Math.floor(Math.random() * 20000);
  const api = await startProduct(
    'apps/workflow-api/src/main.ts',
    {
      WORKFLOW_API_PORT: String(port),
      WORKFLOW_API_HOST: '127.0.0.1',
      AUTH_MODE: 'headers',
      WORKFLOW_API_SYSTEM_WORKFLOWS: 'false',
      DB_POOL_SIZE: '20',
    },
    /listening on/,
  );
  const base = `http://127.0.0.1:${port}`;
  const pool = new Pool(base, { connections: CLIENTS });
  // the subscribers' connections: one each, never pooled behind one another
  const streams = new Agent({
    connections: null,
    pipelining: KEEPALIVE ? 1 : 0,
    bodyTimeout: 0,
    headersTimeout: 0,
  });
  const headersOf = (p: number) => ({
    'x-project-id': `bench-events-${p}`,
    'x-user-id': 'bench',
    'x-roles': 'member',
  });

  for (let p = 0; p < PROJECTS; p++) {
    const res = await pool.request({
      method: 'POST',
      path: '/v2/workflows',
      headers: { ...headersOf(p), 'content-type': 'text/plain' },
      body: WORKFLOW,
    });
    const text = await res.body.text();
    if (res.statusCode !== 201)
      throw new Error(`POST /v2/workflows: ${res.statusCode} ${text.slice(0, 300)}`);
  }

  let stopping = false;
  let measureFrom = Number.POSITIVE_INFINITY;
  const latExec: number[] = [];
  const latProject: number[] = [];
  /** Execution streams: entries written after the response's headers arrived, and before (caught up on). */
  const latExecLive: number[] = [];
  const latExecCatchUp: number[] = [];
  /** Request → response headers of the execution streams opened after the warm-up. */
  const subscribeMs: number[] = [];
  const violations: string[] = [];
  let received = 0;
  let subscribeFailures = 0;
  let shutdownFailures = 0;
  const failureReasons = new Map<string, number>();
  const failed = (why: string) => {
    if (stopping) {
      shutdownFailures++;
      return;
    }
    subscribeFailures++;
    failureReasons.set(why, (failureReasons.get(why) ?? 0) + 1);
  };
  // the commits, as the engines announce them (NOTIFY is delivered at commit): per tree, the
  // arrival time of each announcement and the last sequence number it names
  const commits = new Map<string, { seq: number; at: number }[]>();
  const listener = new Client({ connectionString: db.url });
  await listener.connect();
  listener.on('notification', (n) => {
    const at = Date.now();
    if (!n.payload) return;
    const { r, s } = JSON.parse(n.payload) as { r: string; s?: number };
    if (typeof s !== 'number') return;
    const list = commits.get(r);
    if (list) list.push({ seq: s, at });
    else commits.set(r, [{ seq: s, at }]);
  });
  await listener.query('LISTEN osc_execution_events');
  // registered as the API's hub registers (engines announce only while some listener is)
  await registerStreamListener(
    { query: async (sql: string, values?: unknown[]) => (await listener.query(sql, values)).rows },
    `00000000-0000-4000-8000-${String(process.pid).padStart(12, '0')}`,
    3600,
  );
  /** Measured deliveries: stream kind, tree, seq, created_at, receipt. */
  const deliveries: { project: boolean; root: string; seq: number; created: number; at: number }[] = [];

  // project subscribers
  const projectSubs = Array.from({ length: PROJECT_SUBS }, async (_, i) => {
    const p = i % PROJECTS;
    const res = await request(`${base}/v2/executions`, {
      dispatcher: streams,
      headers: { ...headersOf(p), accept: 'text/event-stream' },
    });
    if (res.statusCode !== 200) throw new Error(`project stream: ${res.statusCode}`);
    const split = new SseSplitter();
    let connectedAt = Number.POSITIVE_INFINITY;
    let last = -1;
    res.body.setEncoding('utf8');
    for await (const chunk of res.body) {
      const now = Date.now();
      for (const m of split.push(chunk as string)) {
        if (m.event === 'position') {
          connectedAt = now;
          last = Number(m.id);
          continue;
        }
        received++;
        const pos = Number(m.id);
        if (pos <= last) violations.push(`project ${p}: position ${pos} after ${last}`);
        last = pos;
        const entry = JSON.parse(m.data) as { created_at: string; root_execution_id: string; seq: number };
        const at = Date.parse(entry.created_at);
        if (at >= connectedAt && at >= measureFrom) {
          latProject.push(now - at);
          deliveries.push({
            project: true,
            root: entry.root_execution_id,
            seq: entry.seq,
            created: at,
            at: now,
          });
        }
      }
      if (stopping) break;
    }
  });

  // execution subscribers: each takes the newest execution nobody watches yet
  const unwatched: { id: string; project: number }[] = [];
  const idle: ((x: { id: string; project: number } | null) => void)[] = [];
  const offer = (x: { id: string; project: number }) => {
    const take = idle.shift();
    if (take) take(x);
    else {
      unwatched.push(x);
      if (unwatched.length > 5000) unwatched.shift();
    }
  };
  const nextExecution = () =>
    new Promise<{ id: string; project: number } | null>((resolve) =>
      stopping ? resolve(null) : unwatched.length > 0 ? resolve(unwatched.pop()!) : idle.push(resolve),
    );
  const watched = { executions: 0 };
  const execSubs = Array.from({ length: EXEC_SUBS }, async () => {
    for (;;) {
      const next = await nextExecution();
      if (!next) return;
      watched.executions++;
      const connectedAt = Date.now();
      let res;
      try {
        res = await request(`${base}/v2/executions/${next.id}/events`, {
          dispatcher: streams,
          headers: { ...headersOf(next.project), accept: 'text/event-stream' },
        });
      } catch (err) {
        failed((err as { code?: string }).code ?? String(err));
        continue;
      }
      if (res.statusCode !== 200) {
        failed(`HTTP ${res.statusCode} ${(await res.body.text()).slice(0, 120)}`);
        continue;
      }
      const openedAt = Date.now();
      if (connectedAt >= measureFrom) subscribeMs.push(openedAt - connectedAt);
      const split = new SseSplitter();
      let last = 0;
      res.body.setEncoding('utf8');
      for await (const chunk of res.body) {
        const now = Date.now();
        for (const m of split.push(chunk as string)) {
          received++;
          const seq = Number(m.id);
          if (seq !== last + 1) violations.push(`execution ${next.id}: seq ${seq} after ${last}`);
          last = seq;
          const entry = JSON.parse(m.data) as { created_at: string; root_execution_id: string };
          const at = Date.parse(entry.created_at);
          if (at >= connectedAt && at >= measureFrom) {
            latExec.push(now - at);
            (at >= openedAt ? latExecLive : latExecCatchUp).push(now - at);
            deliveries.push({ project: false, root: entry.root_execution_id, seq, created: at, at: now });
          }
        }
        if (stopping) break;
      }
    }
  });

  // destroying the subscribers' connections at the end rejects their loops: settled below
  for (const sub of [...projectSubs, ...execSubs]) sub.catch(() => undefined);
  // give the subscribers time to connect, then run the load
  await new Promise((r) => setTimeout(r, 3000));
  const apiCpu0 = processCpuSeconds(api.pid ?? 0);
  const benchCpu0 = process.cpuUsage();
  const t0 = Date.now() + 200;
  measureFrom = t0 + WARMUP * 1000;
  const total = Math.round(RATE * SECONDS);
  let created = 0;
  let createFailures = 0;
  const createFailureReasons = new Map<string, number>();
  let lateArrivals = 0;
  const creators = Array.from({ length: CLIENTS }, async (_, c) => {
    for (let k = c; k < total; k += CLIENTS) {
      const at = t0 + (k * 1000) / RATE;
      const wait = at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      else if (wait < -100) lateArrivals++;
      const project = k % PROJECTS;
      let res;
      let text;
      try {
        res = await pool.request({
          method: 'POST',
          path: '/v2/executions',
          headers: { ...headersOf(project), 'content-type': 'application/json' },
          body: JSON.stringify({ workflow_name: 'bench_events' }),
        });
        text = await res.body.text();
      } catch (err) {
        // a connection refused or timed out counts as a failed create, not the end of the run
        createFailures++;
        createFailureReasons.set(
          (err as { code?: string }).code ?? String(err),
          (createFailureReasons.get((err as { code?: string }).code ?? String(err)) ?? 0) + 1,
        );
        continue;
      }
      if (res.statusCode !== 201) {
        createFailures++;
        continue;
      }
      created++;
      offer({ id: String((JSON.parse(text) as { id: string }).id), project });
    }
  });
  await Promise.all(creators);
  const creationSeconds = (Date.now() - t0) / 1000;
  const measureTo = Date.now();
  const apiCpuSeconds = processCpuSeconds(api.pid ?? 0) - apiCpu0;
  const benchCpu = process.cpuUsage(benchCpu0);
  const benchCpuSeconds = (benchCpu.user + benchCpu.system) / 1e6;
  const load = loadavg().map((l) => Number(l.toFixed(2)));
  // let the last entries of the window arrive, then stop
  await new Promise((r) => setTimeout(r, 2000));
  const connectedExecStreams = EXEC_SUBS - idle.length;
  stopping = true;
  for (const resolve of idle.splice(0)) resolve(null);
  await streams.destroy().catch(() => undefined);
  await Promise.allSettled([...projectSubs, ...execSubs]);
  await pool.close();
  await listener.end().catch(() => undefined);
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(
    children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
  );
  await purgeTestPrefix({ queuePrefix: `${prefix}.`, bullPrefix: prefix }).catch(() => undefined);
  await db.drop();

  const all = [...latExec, ...latProject];
  // each measured delivery's commit: the first announcement of its tree at or past its seq
  const split = {
    engine: { all: [] as number[], execution: [] as number[], project: [] as number[] },
    api: { all: [] as number[], execution: [] as number[], project: [] as number[] },
  };
  let uncommitted = 0;
  for (const d of deliveries) {
    const commit = commits.get(d.root)?.find((c) => c.seq >= d.seq);
    if (!commit) {
      uncommitted++;
      continue;
    }
    const kind = d.project ? 'project' : 'execution';
    split.engine.all.push(commit.at - d.created);
    split.engine[kind].push(commit.at - d.created);
    split.api.all.push(d.at - commit.at);
    split.api[kind].push(d.at - commit.at);
  }
  const result = {
    at: new Date().toISOString(),
    machine: `${cpus().length} cores`,
    load_average: load,
    setup: {
      engines: ENGINES,
      api_processes: 1,
      projects: PROJECTS,
      creating_clients: CLIENTS,
      workflow: `12 tasks, wait-before ${WAIT} s`,
    },
    offered_executions_per_s: RATE,
    achieved_executions_per_s: Number((created / creationSeconds).toFixed(1)),
    executions_created: created,
    create_failures: createFailures,
    create_failure_reasons: Object.fromEntries(createFailureReasons),
    late_arrivals: lateArrivals,
    subscribers: {
      execution_streams: EXEC_SUBS,
      busy_execution_streams_at_end: connectedExecStreams,
      project_streams: PROJECT_SUBS,
      total: EXEC_SUBS + PROJECT_SUBS,
    },
    executions_watched: watched.executions,
    events_received: received,
    measured_window_s: Number(((measureTo - measureFrom) / 1000).toFixed(1)),
    latency_ms: {
      all: summary(all),
      execution_streams: summary(latExec),
      execution_streams_written_after_open: summary(latExecLive),
      execution_streams_written_while_subscribing: summary(latExecCatchUp),
      project_streams: summary(latProject),
    },
    execution_stream_subscribe_ms: summary(subscribeMs),
    engine_commit_ms: {
      all: summary(split.engine.all),
      execution_streams: summary(split.engine.execution),
      project_streams: summary(split.engine.project),
    },
    commit_to_delivery_ms: {
      all: summary(split.api.all),
      execution_streams: summary(split.api.execution),
      project_streams: summary(split.api.project),
    },
    deliveries_without_announcement: uncommitted,
    stream_order_violations: violations.length,
    subscribe_failures: subscribeFailures,
    subscribe_failure_reasons: Object.fromEntries(failureReasons),
    subscribe_failures_at_shutdown: shutdownFailures,
    api_cpu_percent_of_one_core: Number(((apiCpuSeconds / ((measureTo - t0) / 1000)) * 100).toFixed(1)),
    bench_client_cpu_percent_of_one_core: Number(
      ((benchCpuSeconds / ((measureTo - t0) / 1000)) * 100).toFixed(1),
    ),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  if (violations.length) process.stderr.write(`${violations.slice(0, 10).join('\n')}\n`);
  const file = arg('results', path.join(__dirname, '../results/events.json'));
  mkdirSync(path.dirname(file), { recursive: true });
  const prev = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { runs?: unknown[] }) : {};
  writeFileSync(file, `${JSON.stringify({ ...prev, runs: [...(prev.runs ?? []), result] }, null, 2)}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  // a failed run leaves no product process behind
  for (const c of children) c.kill('SIGTERM');
  process.exit(1);
});
