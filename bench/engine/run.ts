/**
 * Engine benchmark (issue 6): seq10 — executions of a workflow of 10 sequential std.noop tasks,
 * started by C concurrent clients. Two measurements:
 *   saturation — N executions created back to back (open loop, clients do not wait for them); the run
 *     ends when all have finished: executions/s, task transitions/s (each task goes
 *     IDLE→RUNNING→SUCCESS: 2 transitions), and latency from creation to SUCCESS (a queueing figure);
 *   paced — the same clients offer `--rate` executions/s together (evenly spaced arrivals) for
 *     `--paced-seconds`: p50/p95 latency from the scheduled arrival to SUCCESS at that load.
 * Also fanout — a 100-way parallel fan-out joined by one task — and with-items sizes (`--items`), the
 * list from `range($.n)` or, with `--source=input`, passed as the execution's input (`--items-timeout=<s>`
 * gives up on a run that has not finished and records it RUNNING).
 *
 * Modes:
 *   distributed — PostgreSQL + RabbitMQ + BullMQ, engines in E separate processes;
 *   inprocess   — PostgreSQL + in-process bus and job queue, one engine in this process;
 *   embedded    — in-memory PGlite + in-process bus and job queue journaled in it (the embedded product's stack).
 * Executions are created as POST /v2/executions does (row + start command in one transaction), or,
 * with `--via=api` (distributed only), through POST /v2/executions of a workflow-api process, the
 * engines then being the product's own `apps/workflow-engine/src/main.ts` processes (config from
 * the environment: `--inline=false` sets WORKFLOW_ENGINE_INLINE_ACTIONS=false). Completion is
 * watched in the database either way (an observation, not load).
 *
 *   node -r @swc-node/register bench/engine/run.ts --mode=distributed --n=500 --clients=8 --engines=2 --rate=100
 *   node -r @swc-node/register bench/engine/run.ts --mode=distributed --via=api --inline=false --only=seq10 --rate=0
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:net';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import {
  InProcessCommandBus,
  InProcessJobQueue,
  MessageJournal,
  OutboxRelay,
  OutboxWriter,
  RabbitMqCommandBus,
  BullMqJobQueue,
} from '@osc/messaging';
import { PGLITE_MEMORY, closeDataSource, combineMigrations, createDataSource } from '@osc/persistence';
import { messagingMigrations } from '@osc/messaging';
import { TEST_QUEUE_EXPIRES_MS, purgeTestPrefix } from '@osc/testing';
import { Pool } from 'undici';
import { processCpuSeconds } from './proc-cpu';
import { decideSeq10Ms } from './speed-probe';
import {
  definitionMigrations,
  dynamicActionMigrations,
  executionMigrations,
  setExecutionHistoryWrites,
} from '@osc/workflow-persistence';
import {
  EngineInstance,
  createEngineDatabase,
  prefixedBus,
  prefixedJobs,
  PROJECT,
  startExecution as startExecutionInDb,
  storeWorkflows,
} from '../../apps/workflow-engine/test/engine-harness';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

const mode = arg('mode', 'inprocess') as 'distributed' | 'inprocess' | 'embedded';
const N = Number(arg('n', '300'));
const CLIENTS = Number(arg('clients', '8'));
const ENGINES = Number(arg('engines', '2'));
const FANOUT = Number(arg('fanout', '100'));
/** Starts the V8 profiler in this process; the returned function stops it and gives the profile. */
async function startProfile(): Promise<() => Promise<unknown>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    return profile;
  };
}

/** with-items fan-out sizes (std.echo per item); `--only=items` skips seq10 and the join fan-out. */
const ITEMS = arg('items', '1000,10000').split(',').filter(Boolean).map(Number);
const ONLY = arg('only', 'all') as 'all' | 'items' | 'seq10';
/** Where the with-items list comes from: `range` (`range($.n)`) or `input` (the list itself is the execution's input `items`). */
const SOURCE = arg('source', 'range') as 'range' | 'input';
/** Seconds after which a with-items run is recorded as still RUNNING (0: wait for ever). */
const ITEMS_TIMEOUT = Number(arg('items-timeout', '0'));
/**
 * Milliseconds of pause before each with-items run, over which the processes' idle CPU is measured
 * (`--items-pause`, default 3000): with 100 the runs follow each other almost at once.
 */
const ITEMS_PAUSE_MS = Number(arg('items-pause', '3000'));
/**
 * `--items-vacuum` (default true): the benchmark VACUUMs the database before each with-items run, on
 * its own connection (not counted as the service's CPU; its wall time and CPU are reported as `vacuum_before`).
 * Without it a run pays for pruning the dead row versions the run before it left (a 1,000-item run
 * after a 10,000-item one pays for 10,000 items' worth), and that debt grows run after run: within
 * one minute no autovacuum comes (`autovacuum_naptime`, 60 s by default). With it, each run pays for
 * its own rows only, in a database kept as autovacuum keeps it in a steady state.
 */
const ITEMS_VACUUM = arg('items-vacuum', 'true') !== 'false';
/**
 * Sizes of the unmeasured warm-up runs before the measured with-items runs (`--items-warmup`, a list;
 * default: one run of each measured size; `0` or empty: none).
 */
const ITEMS_WARMUP = arg('items-warmup', arg('items', '1000,10000'))
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
/**
 * Measured rounds of with-items runs, each one run of every size of `--items` in turn (default 5: a
 * 1,000-item run lasts a quarter of a second, and one that a collection or another process's burst
 * lands in costs a fifth more; the median of five stands two such runs).
 */
const ITEMS_ROUNDS = Number(arg('items-rounds', '5'));
/**
 * Items per measured sample (`--items-per-sample`, default 10000): a measured run of n items is
 * `max(1, round(itemsPerSample / n))` executions of n items, one after another (each started once the
 * one before it finished), its CPU per item that of them all. A lone 1,000-item execution's CPU is a
 * quarter of a second's: a scavenge, a neighbour's burst or an idle timer landing in it moves its
 * figure by a fifth (the engines' 0.25–0.46 ms per item within one run at stop 50), where a 10,000-item run
 * averages them out. Each execution still pays its own fixed cost (its start, its last transactions),
 * so what a short list costs more per item stays in the figure. 0 or 1: one execution per run.
 * Warm-up runs are one execution each.
 */
const ITEMS_PER_SAMPLE = Number(arg('items-per-sample', '10000'));
/** Executions in a with-items sample of n items (see `--items-per-sample`). */
const executionsPerSample = (n: number, warmup: boolean): number =>
  warmup ? 1 : Math.max(1, Math.round(ITEMS_PER_SAMPLE / n));

/**
 * The with-items runs: warm-up runs first (recorded, `warmup: true`, left out of the summary), then
 * `--items-rounds` rounds of every size. The processes' JIT (and, embedded, PGlite's WebAssembly
 * tier-up) is still compiling through the first runs, which a cost per item must not be confused with.
 */
const itemsPlan = (): { n: number; warmup: boolean; round: number }[] => [
  ...ITEMS_WARMUP.map((n) => ({ n, warmup: true, round: 0 })),
  ...Array.from({ length: ITEMS_ROUNDS }, (_, r) =>
    ITEMS.map((n) => ({ n, warmup: false, round: r + 1 })),
  ).flat(),
];

/**
 * Per size, the median over the measured rounds of the seconds and of the service's CPU per item
 * (distributed: engine and API processes and PostgreSQL; embedded and inprocess: this process, which
 * is the service, and PostgreSQL), and the largest median over the smallest.
 */
function summariseItems(runs: Record<string, unknown>[], mode: string) {
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  };
  const bySize = new Map<number, { seconds: number[]; cpu: number[] }>();
  for (const r of runs) {
    if (r['warmup']) continue;
    const cpu = r['cpu_ms_per_item'] as Record<string, number>;
    const service = (mode === 'distributed' ? cpu['server']! : cpu['bench']!) + cpu['postgres']!;
    const e = bySize.get(r['items'] as number) ?? { seconds: [], cpu: [] };
    e.seconds.push(r['seconds'] as number);
    e.cpu.push(service);
    bySize.set(r['items'] as number, e);
  }
  const sizes = Object.fromEntries(
    [...bySize].map(([n, e]) => [
      n,
      {
        runs: e.seconds.length,
        seconds_median: Number(median(e.seconds).toFixed(2)),
        service_cpu_ms_per_item: e.cpu.map((c) => Number(c.toFixed(4))),
        service_cpu_ms_per_item_median: Number(median(e.cpu).toFixed(4)),
      },
    ]),
  );
  const medians = Object.values(sizes).map((v) => v.service_cpu_ms_per_item_median);
  return {
    sizes,
    cpu_per_item_ratio:
      medians.length > 1 ? Number((Math.max(...medians) / Math.min(...medians)).toFixed(2)) : 1,
  };
}
/** Offered rate (executions/s, all clients together) and length (s) of the paced seq10 run; rate 0 skips it. */
const RATE = Number(arg('rate', '100'));
/** seq10 (distributed, inprocess): executions each client runs to completion before the measured run. */
const WARMUP = Number(arg('warmup', '1'));
/**
 * seq10: untimed open-loop runs of `--n` executions after the sequential warm-up and before the measured
 * one (default 0). The sequential warm-up leaves the paths of a loaded run (groups of many executions,
 * batch jobs, result batches) to be compiled during the measured run; each of these runs is reported
 * too (`warmup_runs`), the first being what the measured run gives without them.
 */
const WARMUP_RUNS = Number(arg('warmup-runs', '0'));
const PACED_SECONDS = Number(arg('paced-seconds', '10'));
/** `api`: executions are created through workflow-api's POST /v2/executions, engines are the product's processes. */
const VIA = arg('via', 'db') as 'db' | 'api';
/** The `application_name` of this process's own database connections (see `cpuNow`). */
const BENCH_APPLICATION = 'osc-bench-engine';
/**
 * `--history=off`: no execution history is written (an internal switch, for measuring what the history
 * costs: bench/events); the benchmark process and the engine processes (`EXECUTION_HISTORY=off`, `--via=db`;
 * with `--via=api`, the engine and API processes preload history-off.ts, from the sources only).
 */
const HISTORY = arg('history', 'on') as 'on' | 'off' | 'alternate';
if (HISTORY === 'off') setExecutionHistoryWrites(false);
/**
 * `--history=alternate` (`--via=api`, seq10): the open-loop run is repeated `--phases` times (default
 * 8) in the same processes, history off and on in the order off, on, on, off, off, on, … (a drift of
 * the machine weighs on both alike), switched between phases through history-switch.ts; reports each
 * phase and what the history adds, on against off. Runs apart (fresh processes, database, JIT) vary
 * by ±7 % on this machine, more than what is measured.
 */
const PHASES = Number(arg('phases', '8'));
const SWITCH_FILE = path.join(tmpdir(), `bench-history-${process.pid}`);
/**
 * BENCH_GC_DIR=<dir> (`--via=api`, from the sources; a diagnostic): the product processes preload
 * gc-watch.ts, and each with-items run reports the garbage collections of the engine and API processes
 * over it (`gc_ms`: scavenges and the rest, milliseconds summed over the processes).
 */
const GC_DIR = process.env['BENCH_GC_DIR'];
/** The running GC totals the product processes wrote (see gc-watch.ts), summed. */
function gcTotals(): { minor: number; other: number; minorCount: number; otherCount: number } {
  const sum = { minor: 0, other: 0, minorCount: 0, otherCount: 0 };
  if (!GC_DIR || !existsSync(GC_DIR)) return sum;
  for (const f of readdirSync(GC_DIR)) {
    const t = JSON.parse(readFileSync(path.join(GC_DIR, f), 'utf8')) as Record<
      'minor' | 'other',
      { count: number; ms: number }
    >;
    sum.minor += t.minor.ms;
    sum.other += t.other.ms;
    sum.minorCount += t.minor.count;
    sum.otherCount += t.other.count;
  }
  return sum;
}
/** `--inline=false`: WORKFLOW_ENGINE_INLINE_ACTIONS=false in the engine processes (`--via=api` only). */
const INLINE = arg('inline', 'true');
/**
 * `--from=bundle`: the engine and API processes (`--via=api`) run from their bundles in dist/ (build
 * them first: `npx nx run-many -t build -p workflow-engine workflow-api`), as they are deployed,
 * instead of from the TypeScript sources through @swc-node/register.
 */
const FROM = arg('from', 'source') as 'source' | 'bundle';

const seq10 = `
version: '2.0'
seq10:
  tasks:
${Array.from({ length: 10 }, (_, i) => `    t${i}:\n      action: std.noop\n${i < 9 ? `      on-success: t${i + 1}\n` : ''}`).join('')}`;

const fanout = `
version: '2.0'
fanout:
  tasks:
${Array.from({ length: FANOUT }, (_, i) => `    b${i}:\n      action: std.noop\n      on-success: j\n`).join('')}    j:
      join: all
      action: std.noop
`;

const withItems = `
version: '2.0'
items:
  input: [n]
  tasks:
    each:
      with-items: i in <% range($.n) %>
      action: std.echo output=<% $.i %>
`;

const withItemsFromInput = `
version: '2.0'
items_input:
  input: [items]
  tasks:
    each:
      with-items: i in <% $.items %>
      action: std.echo output=<% $.i %>
`;

/** The embedded product's database: in-memory PGlite through @osc/persistence. */
async function createEmbeddedDatabase(): Promise<Awaited<ReturnType<typeof createEngineDatabase>>> {
  const dataSource = await createDataSource(
    { kind: 'pglite', dataDir: PGLITE_MEMORY },
    [],
    combineMigrations(
      messagingMigrations,
      definitionMigrations,
      executionMigrations,
      dynamicActionMigrations,
    ) as never,
  );
  return { dataSource, url: 'memory://', drop: () => closeDataSource(dataSource) };
}

/** A port nothing listens on now (the OS picks it), for the product's HTTP servers. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

/** `decide-seq10.ts` before the run (see speed-probe.ts); `--speed-probe=false` skips both probes. */
let speedBefore: number | null = null;
const SPEED_PROBE = arg('speed-probe', 'true') === 'true';
/** The machine's speed before and after the run, in CPU ms per seq10 decision (lower is faster). */
async function machineSpeed(): Promise<Record<string, unknown>> {
  if (!SPEED_PROBE) return {};
  return { machine_speed: { decide_seq10_ms: { before: speedBefore, after: await decideSeq10Ms() } } };
}

/**
 * `--mode=embedded --via=api`: the embedded product as users run it (`npm start`'s
 * apps/embedded/src/main.ts in its own process, PGlite in a temporary DATA_DIR), seq10 created
 * through POST /v2/executions and completion watched through GET /v2/executions (the database is
 * inside that process): executions/s and the process's CPU per execution. Latency figures are
 * not reported: Mistral's timestamps have whole seconds.
 */
async function embeddedViaApi(): Promise<void> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-embedded-'));
  const [port, volumePort] = [await freePort(), await freePort()];
  const nodeArgs = (process.env['ENGINE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const child = spawn(
    process.execPath,
    [...nodeArgs, '-r', '@swc-node/register', path.join(__dirname, '../../apps/embedded/src/main.ts')],
    {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        WORKFLOW_API_PORT: String(port),
        WORKFLOW_API_HOST: '127.0.0.1',
        VOLUME_API_PORT: String(volumePort),
        VOLUME_API_HOST: '127.0.0.1',
        AUTH_MODE: 'headers',
        LOG_LEVEL: 'warn',
        WORKFLOW_ENGINE_INLINE_ACTIONS: INLINE,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // a run that fails leaves no product process behind
  process.once('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (d: unknown) => {
      out += String(d);
      if (/embedded mode ready/.test(out)) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`embedded exited ${code}: ${out.slice(-2000)}`)));
  });
  const api = new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS + 1 });
  const headers = { 'x-project-id': PROJECT, 'x-user-id': 'bench', 'x-roles': 'member' };
  const call = async (
    method: 'GET' | 'POST',
    p: string,
    body?: string,
    type = 'application/json',
  ): Promise<unknown> => {
    const res = await api.request({
      method,
      path: p,
      headers: { ...headers, ...(body ? { 'content-type': type } : {}) },
      body,
    });
    const text = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${p}: ${res.statusCode} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const cpuSeconds = (): number => processCpuSeconds(child.pid ?? 0);
  const running = async (): Promise<number> =>
    ((await call('GET', '/v2/executions?state=RUNNING&limit=1000&fields=id')) as { executions: unknown[] })
      .executions.length;
  const waitIdle = async (): Promise<void> => {
    while ((await running()) > 0) await new Promise((r) => setTimeout(r, 50));
  };
  const file = arg('results', path.join(__dirname, '../results/engine.json'));
  const record = (key: string, result: Record<string, unknown>): void => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    mkdirSync(path.dirname(file), { recursive: true });
    const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
    all[key] = result;
    writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
  };
  try {
    if (ONLY === 'items') {
      // with-items through the API: the list is the execution's input, completion watched through
      // GET /v2/executions?state=RUNNING; CPU is the embedded process's (the whole service)
      await call('POST', '/v2/workflows', withItemsFromInput, 'text/plain');
      const runs: Record<string, unknown>[] = [];
      for (const { n, warmup, round } of itemsPlan()) {
        const idle0 = cpuSeconds();
        const idleT0 = Date.now();
        await new Promise((r) => setTimeout(r, ITEMS_PAUSE_MS));
        const idleRate = (cpuSeconds() - idle0) / ((Date.now() - idleT0) / 1000);
        const body = JSON.stringify({
          workflow_name: 'items_input',
          input: { items: Array.from({ length: n }, (_, i) => `item-${i}`) },
        });
        const executions = executionsPerSample(n, warmup);
        const cpu0 = cpuSeconds();
        const u0 = process.cpuUsage();
        const t0 = Date.now();
        let state = '';
        for (let e = 0; e < executions && (e === 0 || state === 'SUCCESS'); e++) {
          const { id } = (await call('POST', '/v2/executions', body)) as { id: string };
          await waitIdle();
          ({ state } = (await call('GET', `/v2/executions/${id}`)) as { state: string });
        }
        const wall = (Date.now() - t0) / 1000;
        const cpu = cpuSeconds() - cpu0;
        const u = process.cpuUsage(u0);
        // per execution: the sample's wall time over its executions (see `--items-per-sample`)
        const seconds = wall / executions;
        const total = n * executions;
        runs.push({
          items: n,
          ...(warmup ? { warmup: true } : { round }),
          source: 'input',
          executions,
          state,
          seconds: Number(seconds.toFixed(2)),
          items_per_s: Math.round(n / seconds),
          // `bench` here is the embedded process (the service, PostgreSQL inside it), as in-process
          // runs of this benchmark report it; `client` is this process's HTTP client
          cpu_ms_per_item: {
            bench: Number(((cpu * 1000) / total).toFixed(4)),
            postgres: 0,
            client: Number(((u.user + u.system) / 1e3 / total).toFixed(3)),
          },
          cpu_ms_per_item_net: Number((((cpu - idleRate * wall) * 1000) / total).toFixed(4)),
        });
        process.stderr.write(
          `with-items ${n}${warmup ? ' (warm-up)' : ''}: ${state} in ${seconds.toFixed(2)} s${
            executions > 1 ? ` (mean of ${executions})` : ''
          }\n`,
        );
      }
      record('embedded_via_api_items', {
        ...(await machineSpeed()),
        mode,
        via: VIA,
        inline_actions: INLINE === 'true',
        machine: `${cpus().length} cores`,
        load_average: loadavg().map((l) => Number(l.toFixed(2))),
        at: new Date().toISOString(),
        items_warmup: ITEMS_WARMUP,
        items_rounds: ITEMS_ROUNDS,
        with_items: runs,
        with_items_summary: summariseItems(runs, mode),
      });
      return;
    }
    await call('POST', '/v2/workflows', seq10, 'text/plain');
    const create = async (): Promise<string> =>
      String(
        ((await call('POST', '/v2/executions', JSON.stringify({ workflow_name: 'seq10' }))) as { id: string })
          .id,
      );
    await Promise.all(Array.from({ length: CLIENTS }, create));
    await waitIdle();
    const cpu0 = cpuSeconds();
    const u0 = process.cpuUsage();
    const ids: string[] = [];
    let started = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (started < N) {
          started++;
          ids.push(await create());
        }
      }),
    );
    const creationSeconds = (Date.now() - t0) / 1000;
    await waitIdle();
    const seconds = (Date.now() - t0) / 1000;
    const cpu = cpuSeconds() - cpu0;
    const u = process.cpuUsage(u0);
    const wanted = new Set(ids);
    const list = (await call('GET', '/v2/executions?limit=1000&fields=id,state')) as {
      executions: { id: string; state: string }[];
    };
    const failed = list.executions.filter((e) => wanted.has(e.id) && e.state !== 'SUCCESS').length;
    const result = {
      mode,
      via: VIA,
      inline_actions: INLINE === 'true',
      clients: CLIENTS,
      machine: `${cpus().length} cores`,
      load_average: loadavg().map((l) => Number(l.toFixed(2))),
      at: new Date().toISOString(),
      seq10: {
        executions: N,
        failed,
        seconds: Number(seconds.toFixed(2)),
        creation_seconds: Number(creationSeconds.toFixed(2)),
        executions_per_s: Number((N / seconds).toFixed(1)),
        task_transitions_per_s: Number(((N * 10 * 2) / seconds).toFixed(0)),
        cpu_ms_per_execution: {
          bench: Number(((u.user + u.system) / 1e3 / N).toFixed(2)),
          embedded: Number(((cpu * 1000) / N).toFixed(2)),
        },
      },
    };
    record(`embedded_via_api${INLINE === 'true' ? '' : '_no_inline'}`, {
      ...result,
      ...(await machineSpeed()),
    });
  } finally {
    await api.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The scratch database a failed run still drops before it exits. */
let dropOnFailure: (() => Promise<void>) | undefined;

async function main(): Promise<void> {
  if (SPEED_PROBE) speedBefore = await decideSeq10Ms();
  if (mode === 'embedded' && VIA === 'api') return embeddedViaApi();
  const db =
    mode === 'embedded' ? await createEmbeddedDatabase() : await createEngineDatabase(BENCH_APPLICATION);
  dropOnFailure = () => db.drop();
  const ds = db.dataSource;
  const syncCommit = arg('synchronous-commit', 'on');
  if (syncCommit !== 'on' && mode !== 'embedded') {
    // SYNC_COMMIT: an operator knob; off keeps durability against process crashes, not server crashes.
    await ds.query(
      `ALTER DATABASE "${db.url.split('/').pop()}" SET synchronous_commit = ${syncCommit === 'off' ? 'off' : 'on'}`,
    );
  }
  await storeWorkflows(ds, seq10);
  await storeWorkflows(ds, fanout);
  await storeWorkflows(ds, withItems);
  await storeWorkflows(ds, withItemsFromInput);
  const children: ChildProcess[] = [];
  // a run that fails (main's rejection exits the process) leaves none of its product processes behind
  process.once('exit', () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  });
  /** The workflow-api process (`--via=api`): its CPU is reported apart from the engines'. */
  let apiChild: ChildProcess | undefined;
  let local: EngineInstance | undefined;
  let close: () => Promise<void>;
  const outbox = new OutboxWriter();
  let relay: OutboxRelay;
  let api: Pool | undefined;
  /** Creates an execution: through POST /v2/executions with `--via=api`, else as that endpoint does, in the database. */
  const startExecution = async (
    _ds: unknown,
    _outbox: unknown,
    workflowName: string,
    input: Record<string, unknown> = {},
  ): Promise<string> => {
    if (!api) return startExecutionInDb(ds, outbox, workflowName, input);
    const res = await api.request({
      method: 'POST',
      path: '/v2/executions',
      headers: {
        'content-type': 'application/json',
        'x-project-id': PROJECT,
        'x-user-id': 'bench',
        'x-roles': 'member',
      },
      body: JSON.stringify({ workflow_name: workflowName, input }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 201)
      throw new Error(`POST /v2/executions: ${res.statusCode} ${text.slice(0, 300)}`);
    return String((JSON.parse(text) as { id: string }).id);
  };
  if (mode === 'inprocess' || mode === 'embedded') {
    // embedded: the product's adapters, which journal messages and jobs in the embedded database
    // (`--journal=off`: without the journal, as embedded mode was before it, to see what it costs)
    const journal =
      mode === 'embedded' && arg('journal', 'on') !== 'off' ? new MessageJournal(ds) : undefined;
    const bus = new InProcessCommandBus({ journal });
    const jobs = new InProcessJobQueue({ journal });
    // embedded: as the product, every with-items item in one decision (apps/embedded/src/index.ts)
    local = new EngineInstance(ds, bus, jobs, {
      prefetch: 64,
      executorConcurrency: 50,
      ...(mode === 'embedded' ? { itemsPerDecision: 0 } : {}),
    });
    await local.start();
    relay = local.relay;
    outbox.onCommitted(() => relay.notify());
    close = async () => {
      await local!.stop();
      await bus.close();
      await jobs.close();
    };
  } else {
    const prefix = `bench${Date.now()}`;
    if (VIA === 'api') {
      // the bundles hold their own copy of the switch, out of a preload's reach
      if (HISTORY !== 'on' && FROM === 'bundle') throw new Error(`--history=${HISTORY} needs --from=source`);
      const productEnv = {
        ...process.env,
        DATABASE_URL: db.url,
        AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
        REDIS_URL: 'redis://127.0.0.1:6379',
        QUEUE_PREFIX: `${prefix}.`,
        DB_POOL_SIZE: '10',
        LOG_LEVEL: 'warn',
      };
      // who each PostgreSQL backend serves (see `Cpu.postgresBy`): node-postgres reads PGAPPNAME
      const appName = (main: string) => `osc-${main.split('/')[1]}`;
      const startProduct = (
        main: string,
        env: Record<string, string>,
        ready: RegExp,
      ): Promise<ChildProcess> => {
        const nodeArgs = (process.env['ENGINE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
        const child = spawn(
          process.execPath,
          FROM === 'bundle'
            ? [...nodeArgs, path.join(__dirname, '../../dist', main.replace(/\/src\/main\.ts$/, '/main.js'))]
            : [
                ...nodeArgs,
                '-r',
                '@swc-node/register',
                ...(HISTORY === 'off' ? ['-r', path.join(__dirname, 'history-off.ts')] : []),
                ...(HISTORY === 'alternate' ? ['-r', path.join(__dirname, 'history-switch.ts')] : []),
                ...(GC_DIR ? ['-r', path.join(__dirname, 'gc-watch.ts')] : []),
                ...(process.env['BENCH_ALLOC_DIR'] ? ['-r', path.join(__dirname, 'alloc-profile.ts')] : []),
                path.join(__dirname, '../..', main),
              ],
          {
            env: { ...productEnv, PGAPPNAME: appName(main), ...env, BENCH_HISTORY_SWITCH: SWITCH_FILE },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
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
            WORKFLOW_ENGINE_INLINE_ACTIONS: INLINE,
            WORKFLOW_ENGINE_PREFETCH: arg('prefetch', '64'),
            WORKFLOW_EXECUTOR_CONCURRENCY: arg('executor-concurrency', '64'),
          },
          /workflow-engine running/,
        );
      }
      const port = await freePort();
      apiChild = await startProduct(
        'apps/workflow-api/src/main.ts',
        { WORKFLOW_API_PORT: String(port), WORKFLOW_API_HOST: '127.0.0.1', AUTH_MODE: 'headers' },
        /listening on/,
      );
      api = new Pool(`http://127.0.0.1:${port}`, { connections: CLIENTS });
    }
    for (let i = 0; VIA === 'db' && i < ENGINES; i++) {
      // ENGINE_NODE_ARGS: extra node flags for the engine processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`)
      const nodeArgs = (process.env['ENGINE_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
      const child = spawn(
        process.execPath,
        [
          ...nodeArgs,
          '-r',
          '@swc-node/register',
          path.join(__dirname, '../../apps/workflow-engine/test/engine-process.ts'),
        ],
        {
          // QUEUE_PREFIX: a RabbitMQ queue of this run only (other runs on the machine share the broker)
          env: {
            ...process.env,
            DATABASE_URL: db.url,
            BULL_PREFIX: prefix,
            QUEUE_PREFIX: `${prefix}.`,
            QUEUE_EXPIRES_MS: String(TEST_QUEUE_EXPIRES_MS),
            PREFETCH: arg('prefetch', '64'),
            EXECUTOR_CONCURRENCY: '64',
            DB_POOL: '10',
            EXECUTION_HISTORY: HISTORY,
          },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d) => String(d).includes('ready') && resolve());
        child.once('exit', (code) => reject(new Error(`engine exited ${code}`)));
      });
    }
    // Queues declared with x-expires (as the engines do): a killed bench leaves nothing for long.
    const bus = prefixedBus(
      new RabbitMqCommandBus({
        url: 'amqp://guest:guest@127.0.0.1:5672',
        queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
      }),
      `${prefix}.`,
    );
    const jobs = prefixedJobs(new BullMqJobQueue({ url: 'redis://127.0.0.1:6379', prefix }), `${prefix}.`);
    relay = new OutboxRelay(ds, bus, jobs, { pollIntervalMs: 100 });
    outbox.onCommitted(() => relay.notify());
    if (VIA === 'db') await relay.start();
    close = async () => {
      await api?.close();
      await relay.stop();
      for (const c of children) c.kill('SIGTERM');
      await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
      await bus.close();
      await jobs.close();
      // This run's RabbitMQ queues and BullMQ keys (the broker would otherwise keep them for good):
      // this process's and the test engines' under `<prefix>:`, the products' (`--via=api`) under
      // `osc:`, where theirs always live (only QUEUE_PREFIX sets them apart; the queues are gone).
      await purgeTestPrefix({ queuePrefix: `${prefix}.`, bullPrefix: prefix });
      if (VIA === 'api') await purgeTestPrefix({ queuePrefix: `${prefix}.`, queues: [] });
    };
  }

  /**
   * CPU seconds used so far by this process (clients and relay), the engine processes and the
   * PostgreSQL backends serving this benchmark's database (from /proc: `proc-cpu.ts`; Linux only,
   * else zeros). A backend that ended since the last look (a pool closing an idle connection) keeps
   * counting with what it had used then: without it, its whole life's CPU fell out of the difference.
   */
  type Cpu = {
    bench: number;
    engines: number;
    api: number;
    postgres: number;
    rabbitmq: number;
    redis: number;
    /**
     * PostgreSQL's CPU by who the backend serves: its `application_name` (with `--via=api` the product
     * processes connect as `osc-workflow-engine` and `osc-workflow-api`, PGAPPNAME) or, without one, its
     * `backend_type` (`autovacuum worker`, …); backends gone since the last look under `(gone)`.
     */
    postgresBy: Record<string, number>;
  };
  /**
   * The brokers' processes on this machine (RabbitMQ's `beam.smp`, `redis-server`), by name from
   * /proc: the distributed modes' messages and jobs cost CPU there too. Their whole CPU is counted,
   * so another user of the same brokers would show up in it.
   */
  const brokerPids = (comm: string): number[] => {
    try {
      return readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === comm;
          } catch {
            return false;
          }
        })
        .map(Number);
    } catch {
      return [];
    }
  };
  const brokers =
    mode === 'distributed'
      ? { rabbitmq: brokerPids('beam.smp'), redis: brokerPids('redis-server') }
      : undefined;
  const backendsSeen = new Map<number, number>();
  let backendsGone = 0;
  /**
   * VACUUM of the whole database on a connection of this process's own (see `--items-vacuum`): its
   * wall time and, distributed, its backend's CPU, in ms.
   */
  const vacuum = async (): Promise<{ wall_ms: number; cpu_ms?: number }> => {
    const runner = ds.createQueryRunner();
    try {
      await runner.connect();
      const [row] = (await runner.query('SELECT pg_backend_pid() AS "pid"')) as [{ pid: number }];
      const pid = Number(row.pid);
      const cpu0 = mode === 'distributed' ? processCpuSeconds(pid) : 0;
      const t0 = Date.now();
      await runner.query('VACUUM');
      return {
        wall_ms: Date.now() - t0,
        ...(mode === 'distributed' ? { cpu_ms: Math.round((processCpuSeconds(pid) - cpu0) * 1000) } : {}),
      };
    } finally {
      await runner.release();
    }
  };
  const cpuNow = async (): Promise<Cpu> => {
    // With `--via=api` this process's own connections only watch (completion polls, CPU readings,
    // the timeline): their backends are the benchmark's, not the service's. With `--via=db` they
    // also create the executions and relay the outbox, the service's work, and count.
    const pids: { pid: number; who: string }[] = await ds.query(
      `SELECT "pid", COALESCE(NULLIF("application_name", ''), "backend_type") AS "who" FROM pg_stat_activity WHERE "datname" = current_database()${
        VIA === 'api' ? ` AND "application_name" IS DISTINCT FROM '${BENCH_APPLICATION}'` : ''
      }`,
    );
    const backends = new Map(pids.map((r) => [Number(r.pid), processCpuSeconds(Number(r.pid))]));
    const postgresBy: Record<string, number> = {};
    for (const r of pids) postgresBy[r.who] = (postgresBy[r.who] ?? 0) + (backends.get(Number(r.pid)) ?? 0);
    for (const [pid, used] of backendsSeen) {
      // gone, or its pid taken by a newer backend
      const now = backends.get(pid);
      if (now === undefined || now < used) backendsGone += used;
    }
    backendsSeen.clear();
    for (const [pid, used] of backends) backendsSeen.set(pid, used);
    const u = process.cpuUsage();
    return {
      bench: (u.user + u.system) / 1e6,
      engines: children
        .filter((c) => c !== apiChild)
        .reduce((sum, c) => sum + processCpuSeconds(c.pid ?? 0), 0),
      api: apiChild ? processCpuSeconds(apiChild.pid ?? 0) : 0,
      postgres: backendsGone + [...backends.values()].reduce((sum, used) => sum + used, 0),
      postgresBy: { ...postgresBy, '(gone)': backendsGone },
      rabbitmq: (brokers?.rabbitmq ?? []).reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
      redis: (brokers?.redis ?? []).reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
    };
  };
  /**
   * CPU ms per execution (or per item) of each process kind between two readings; with `--via=api`
   * the workflow-api process apart (`api`) and `server` = engines + api. To `digits` decimals: 2 for
   * executions (several ms each); with-items asks for 4, since its figures per item are tenths of a
   * ms, which 2 decimals would round by up to 5 % each.
   */
  const cpuBetween = (before: Cpu, after: Cpu, executions: number, digits = 2) => {
    type Total = Exclude<keyof Cpu, 'postgresBy'>;
    const raw = (k: Total) => ((after[k] - before[k]) * 1000) / executions;
    const ms = (k: Total) => Number(raw(k).toFixed(digits));
    // PostgreSQL's CPU by process, per execution (item), where it was used
    const postgresBy = () =>
      Object.fromEntries(
        Object.keys({ ...before.postgresBy, ...after.postgresBy })
          .map((w) => [w, ((after.postgresBy[w] ?? 0) - (before.postgresBy[w] ?? 0)) * 1000] as const)
          .filter(([, used]) => used !== 0)
          .map(([w, used]) => [w, Number((used / executions).toFixed(digits))]),
      );
    return {
      bench: ms('bench'),
      engines: ms('engines'),
      ...(apiChild ? { api: ms('api'), server: Number((raw('engines') + raw('api')).toFixed(digits)) } : {}),
      postgres: ms('postgres'),
      ...(brokers ? { rabbitmq: ms('rabbitmq'), redis: ms('redis') } : {}),
      ...(apiChild ? { postgres_by: postgresBy() } : {}),
    };
  };
  /** {@link cpuBetween} `before` and now. */
  const cpuSince = async (before: Cpu, executions: number) => cpuBetween(before, await cpuNow(), executions);

  /**
   * Where an execution's time goes, from the rows' own timestamps (p50 / p95 over the executions'
   * actions, ms): start = execution created → its first task created (outbox, relay, bus, engine);
   * to_claim = action created by the engine → claimed by an executor (outbox, relay, job queue,
   * worker, claim; 0 for inline actions, which are never claimed); to_applied = claimed → the result
   * applied by the engine (run, publish, bus, engine transaction).
   */
  const hops = async (ids: string[]): Promise<Record<string, unknown>> => {
    const [row] = (await ds.query(
      `WITH a AS (SELECT EXTRACT(EPOCH FROM (a."claimed_at" - a."created_at")) * 1000 AS to_claim,
                         EXTRACT(EPOCH FROM (a."updated_at" - a."claimed_at")) * 1000 AS to_applied
                    FROM "action_executions" a WHERE a."workflow_execution_id" = ANY($1::uuid[]) AND a."claimed_at" IS NOT NULL),
            s AS (SELECT EXTRACT(EPOCH FROM (min(t."created_at") - e."created_at")) * 1000 AS start
                    FROM "workflow_executions" e JOIN "task_executions" t ON t."workflow_execution_id" = e."id"
                   WHERE e."id" = ANY($1::uuid[]) GROUP BY e."id", e."created_at")
       SELECT (SELECT count(*) FROM a)::int AS claimed_actions,
              (SELECT percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY start) FROM s) AS start,
              (SELECT percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY to_claim) FROM a) AS to_claim,
              (SELECT percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY to_applied) FROM a) AS to_applied,
              (SELECT array_agg(n ORDER BY b) FROM (SELECT width_bucket(to_claim, ARRAY[50, 200, 800, 1200]) AS b, count(*)::int AS n FROM a GROUP BY 1) h) AS to_claim_hist,
              (SELECT array_agg(b) FROM (SELECT DISTINCT width_bucket(to_claim, ARRAY[50, 200, 800, 1200]) AS b FROM a ORDER BY 1) h) AS to_claim_buckets`,
      [ids],
    )) as [Record<string, unknown>];
    const round = (v: unknown) => (Array.isArray(v) ? v.map((x) => Math.round(Number(x) * 10) / 10) : null);
    // to_claim spread over <50, 50–200, 200–800, 800–1,200, ≥1,200 ms: a poll period shows as a bump
    const bounds = ['<50', '50-200', '200-800', '800-1200', '>=1200'];
    const buckets = (row['to_claim_buckets'] as number[] | null) ?? [];
    const counts = (row['to_claim_hist'] as number[] | null) ?? [];
    const hist = Object.fromEntries(buckets.map((b, i) => [bounds[b] ?? String(b), counts[i] ?? 0]));
    return {
      claimed_actions: row['claimed_actions'],
      start: round(row['start']),
      to_claim: round(row['to_claim']),
      to_claim_histogram: hist,
      to_applied: round(row['to_applied']),
    };
  };

  const waitDone = async (id: string, timeoutSeconds = 0): Promise<string> => {
    const deadline = timeoutSeconds > 0 ? Date.now() + timeoutSeconds * 1000 : Infinity;
    for (;;) {
      const rows: { state: string }[] = await ds.query(
        `SELECT "state" FROM "workflow_executions" WHERE "id" = $1`,
        [id],
      );
      const s = rows[0]?.state;
      if (s && s !== 'RUNNING') return s;
      if (Date.now() > deadline) return `RUNNING after ${timeoutSeconds} s`;
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  /** Diagnostics (BENCH_TRACE=1): every 100 ms, items claimed and applied, outbox rows, lock waits. */
  const traceItems = (id: string, t0: number): (() => Promise<string[]>) => {
    const lines: string[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        const [r] = (await ds.query(
          `SELECT (SELECT count(*) FROM "action_executions" WHERE "workflow_execution_id" = $1 AND "claimed_at" IS NOT NULL)::int AS claimed,
                  (SELECT count(*) FROM "action_executions" WHERE "workflow_execution_id" = $1 AND "state" <> 'RUNNING')::int AS applied,
                  (SELECT count(*) FROM "action_executions" WHERE "workflow_execution_id" = $1)::int AS rows,
                  (SELECT count(*) FROM "outbox")::int AS outbox,
                  (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock')::int AS lockwait,
                  (SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state = 'active')::int AS active`,
          [id],
        )) as [Record<string, number>];
        lines.push(`${Date.now() - t0} ${JSON.stringify(r)}`);
        const act = (await ds.query(
          `SELECT pid, state, wait_event_type AS w, round(EXTRACT(EPOCH FROM (now() - xact_start)) * 1000) AS xms,
                  round(EXTRACT(EPOCH FROM (now() - query_start)) * 1000) AS qms, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS q
             FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state <> 'idle'`,
        )) as Record<string, unknown>[];
        for (const a of act) lines.push(`    ${JSON.stringify(a)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    })();
    return async () => {
      stop = true;
      await loop;
      return lines;
    };
  };

  /**
   * Latency at an offered load: C clients create executions on a fixed schedule (together RATE per
   * second, evenly spaced) for PACED_SECONDS. Latency runs from the scheduled arrival (not the actual
   * creation, so a client that falls behind does not hide the wait) to the final state.
   */
  const paced = async (): Promise<Record<string, unknown>> => {
    const total = Math.round(RATE * PACED_SECONDS);
    const cpu0 = await cpuNow();
    const t0 = Date.now() + 200;
    const arrivals: { id: string; at: number }[] = [];
    let late = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let k = c; k < total; k += CLIENTS) {
          const at = t0 + (k * 1000) / RATE;
          const wait = at - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          else if (wait < -50) late++;
          arrivals.push({ id: await startExecution(ds, outbox, 'seq10'), at });
        }
      }),
    );
    for (;;) {
      const [{ n }] = (await ds.query(
        `SELECT count(*)::int AS n FROM "workflow_executions" WHERE "state" = 'RUNNING'`,
      )) as [{ n: number }];
      if (n === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const rows: { id: string; state: string; done: number }[] = await ds.query(
      `SELECT "id", "state", EXTRACT(EPOCH FROM "updated_at") * 1000 AS done FROM "workflow_executions" WHERE "id" = ANY($1::uuid[])`,
      [arrivals.map((a) => a.id)],
    );
    const doneAt = new Map(rows.map((r) => [r.id, Number(r.done)]));
    const latencies = arrivals.map((a) => (doneAt.get(a.id) ?? a.at) - a.at);
    const lastDone = Math.max(...rows.map((r) => Number(r.done)));
    return {
      offered_executions_per_s: RATE,
      executions: total,
      failed: rows.filter((r) => r.state !== 'SUCCESS').length,
      late_arrivals: late,
      achieved_executions_per_s: Number((total / ((lastDone - t0) / 1000)).toFixed(1)),
      latency_ms: {
        p50: Math.round(pct(latencies, 50)),
        p95: Math.round(pct(latencies, 95)),
        max: Math.round(pct(latencies, 100)),
      },
      cpu_ms_per_execution: await cpuSince(cpu0, total),
      hops_ms: await hops(arrivals.map((a) => a.id)),
    };
  };

  let seq: Record<string, unknown> | undefined;
  let fan: Record<string, unknown> | undefined;
  if (ONLY !== 'items') {
    // warm-up: `--warmup` executions per client, one after the other (default 1)
    const waitOne = waitDone;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        for (let i = 0; i < WARMUP; i++) await waitOne(await startExecution(ds, outbox, 'seq10'));
      }),
    );

    /**
     * Open loop: C clients create `n` seq10 executions back to back (as POST /v2/executions would),
     * then wait until none runs; returns their ids and when the creations and the run ended.
     */
    const openLoop = async (n: number): Promise<{ ids: string[]; startSeconds: number; seconds: number }> => {
      let started = 0;
      const ids: string[] = [];
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: CLIENTS }, async () => {
          while (started < n) {
            started++;
            ids.push(await startExecution(ds, outbox, 'seq10'));
          }
        }),
      );
      const startSeconds = (Date.now() - t0) / 1000;
      // The observation's own statements run in the PostgreSQL counted as the product's: a count every
      // 20 ms (a scan of the executions, planned each time) cost ~0.4 ms of PostgreSQL CPU per
      // execution of a 200-execution run. Polled every 100 ms, the run's end is taken from the last
      // execution's final update instead, so the coarser polling does not lengthen it.
      for (;;) {
        const [{ n: running }] = (await ds.query(
          `SELECT count(*)::int AS n FROM "workflow_executions" WHERE "state" = 'RUNNING'`,
        )) as [{ n: number }];
        if (running === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const [{ last }] = (await ds.query(
        `SELECT EXTRACT(EPOCH FROM max("updated_at")) * 1000 AS last FROM "workflow_executions" WHERE "id" = ANY($1::uuid[])`,
        [ids],
      )) as [{ last: string | number }];
      return { ids, startSeconds, seconds: (Number(last) - t0) / 1000 };
    };

    if (HISTORY === 'alternate') {
      if (VIA !== 'api') throw new Error('--history=alternate needs --via=api');
      const phases: Record<string, unknown>[] = [];
      // phase -1: an open-loop warm-up, not counted (the sequential warm-up leaves the processes'
      // batching paths cold: the first open-loop phase cost up to 30 % more than the next ones)
      for (let p = -1; p < PHASES; p++) {
        const history = p < 0 ? 'on' : (p + 1) % 4 < 2 ? 'off' : 'on';
        // the product processes read the file on SIGUSR2 (history-switch.ts)
        writeFileSync(SWITCH_FILE, history);
        for (const c of children) c.kill('SIGUSR2');
        await new Promise((r) => setTimeout(r, 300));
        const c0 = await cpuNow();
        const { seconds } = await openLoop(N);
        const cpu = await cpuSince(c0, N);
        phases.push({
          ...(p < 0 ? { warmup: true } : {}),
          history,
          executions_per_s: Number((N / seconds).toFixed(1)),
          cpu_ms_per_execution: cpu,
          server_and_postgres: Number(((cpu.server ?? 0) + cpu.postgres).toFixed(2)),
        });
        process.stderr.write(
          `phase ${p < 0 ? 'warm-up' : p + 1} history ${history}: ${JSON.stringify(phases.at(-1))}\n`,
        );
      }
      rmSync(SWITCH_FILE, { force: true });
      const mean = (h: string, k: (x: Record<string, any>) => number) => {
        const xs = phases.filter((x) => x['history'] === h && !x['warmup']).map(k);
        return xs.reduce((a, b) => a + b, 0) / xs.length;
      };
      const on = mean('on', (x) => x['server_and_postgres']);
      const off = mean('off', (x) => x['server_and_postgres']);
      seq = {
        executions_per_phase: N,
        phases,
        server_and_postgres_ms: { on: Number(on.toFixed(3)), off: Number(off.toFixed(3)) },
        postgres_ms: {
          on: Number(mean('on', (x) => x['cpu_ms_per_execution'].postgres).toFixed(3)),
          off: Number(mean('off', (x) => x['cpu_ms_per_execution'].postgres).toFixed(3)),
        },
        history_adds_percent: Number((((on - off) / off) * 100).toFixed(1)),
      };
    } else {
      // Open loop: C clients create executions back to back (as POST /v2/executions would); the run ends
      // when every execution has finished. Latency = execution finish (updated_at) - creation.
      const warmupRuns: Record<string, unknown>[] = [];
      for (let w = 0; w < WARMUP_RUNS; w++) {
        const c0 = await cpuNow();
        const { seconds } = await openLoop(N);
        warmupRuns.push({
          executions_per_s: Number((N / seconds).toFixed(1)),
          cpu_ms_per_execution: await cpuSince(c0, N),
          load_average: Number((loadavg()[0] ?? 0).toFixed(2)),
        });
      }
      const cpu0 = await cpuNow();
      const { ids, startSeconds, seconds } = await openLoop(N);
      const cpuEnd = await cpuNow();
      const rows: { state: string; ms: number }[] = await ds.query(
        `SELECT "state", EXTRACT(EPOCH FROM ("updated_at" - "created_at")) * 1000 AS ms FROM "workflow_executions"
        WHERE "id" = ANY($1::uuid[])`,
        [ids],
      );
      const latencies = rows.map((r) => Number(r.ms));
      const failed = rows.filter((r) => r.state !== 'SUCCESS').length;
      seq = {
        executions: N,
        failed,
        seconds: Number(seconds.toFixed(2)),
        creation_seconds: Number(startSeconds.toFixed(2)),
        executions_per_s: Number((N / seconds).toFixed(1)),
        task_transitions_per_s: Number(((N * 10 * 2) / seconds).toFixed(0)),
        latency_ms: {
          p50: Math.round(pct(latencies, 50)),
          p95: Math.round(pct(latencies, 95)),
          max: Math.round(pct(latencies, 100)),
        },
        cpu_ms_per_execution: cpuBetween(cpu0, cpuEnd, N),
        hops_ms: await hops(ids),
        ...(WARMUP_RUNS > 0 ? { warmup_runs: warmupRuns } : {}),
      };

      if (RATE > 0) seq['paced'] = await paced();
    }

    const f0 = Date.now();
    const fid = await startExecution(ds, outbox, 'fanout');
    const fstate = await waitDone(fid);
    fan = { branches: FANOUT, state: fstate, seconds: Number(((Date.now() - f0) / 1000).toFixed(2)) };
  }
  const items: Record<string, unknown>[] = [];
  if (ONLY !== 'seq10') {
    for (const { n, warmup, round } of itemsPlan()) {
      const vacuumed = ITEMS_VACUUM ? await vacuum() : null;
      // the processes' CPU while idle (relay polls, heartbeats, timers), to tell it from the run's own
      const idle0 = await cpuNow();
      const idleT0 = Date.now();
      await new Promise((r) => setTimeout(r, ITEMS_PAUSE_MS));
      const idle1 = await cpuNow();
      const idleSeconds = (Date.now() - idleT0) / 1000;
      // BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of this process over each measured run (a diagnostic;
      // in embedded and inprocess modes this process is the engine)
      const profiler = process.env['BENCH_CPU_PROFILE'] ? await startProfile() : null;
      const gc0 = gcTotals();
      const cpu0 = await cpuNow();
      const executions = executionsPerSample(n, warmup);
      const sample0 = Date.now();
      // the sample's executions one after another; the timeline and trace are of the last one
      let iid = '';
      let istate = '';
      let trace: (() => Promise<string[]>) | null = null;
      for (let e = 0; e < executions && (e === 0 || istate === 'SUCCESS'); e++) {
        const i0 = Date.now();
        iid =
          SOURCE === 'input'
            ? await startExecution(ds, outbox, 'items_input', {
                items: Array.from({ length: n }, (_, i) => `item-${i}`),
              })
            : await startExecution(ds, outbox, 'items', { n });
        trace = process.env['BENCH_TRACE'] && e === executions - 1 ? traceItems(iid, i0) : null;
        istate = await waitDone(iid, ITEMS_TIMEOUT);
      }
      const wall = (Date.now() - sample0) / 1000;
      // per execution: the sample's wall time over its executions
      const seconds = wall / executions;
      // read right at completion: what follows (a profile written, the queries below) is this
      // process's analysis, not the run
      const cpuEnd = await cpuNow();
      const gc1 = gcTotals();
      if (profiler) {
        const dir = String(process.env['BENCH_CPU_PROFILE']);
        mkdirSync(dir, { recursive: true });
        const file = path.join(dir, `items-${items.length + 1}-${n}.cpuprofile`);
        writeFileSync(file, JSON.stringify(await profiler()));
        process.stderr.write(`cpu profile: ${file}\n`);
      }
      if (trace) process.stderr.write(`trace ${n}:\n${(await trace()).join('\n')}\n`);
      const [{ c }] = (await ds.query(
        `SELECT count(*)::int AS c FROM "action_executions" WHERE "workflow_execution_id" = $1`,
        [iid],
      )) as [{ c: number }];
      // where the run's time went, in ms from the execution's creation: its items created (the start
      // decision), claimed by executors, and their results applied by the engine (first / median / last);
      // and how many distinct claim and apply moments there were (about the claim statements and the
      // engine transactions that applied results: rows of one statement share its timestamp)
      const [timeline] = (await ds.query(
        `SELECT round(EXTRACT(EPOCH FROM (min(a."created_at") - e."created_at")) * 1000) AS created,
                round(EXTRACT(EPOCH FROM (min(a."claimed_at") - e."created_at")) * 1000) AS first_claimed,
                round(EXTRACT(EPOCH FROM (max(a."claimed_at") - e."created_at")) * 1000) AS last_claimed,
                round(EXTRACT(EPOCH FROM (min(a."updated_at") - e."created_at")) * 1000) AS first_applied,
                round(EXTRACT(EPOCH FROM (percentile_disc(0.5) WITHIN GROUP (ORDER BY a."updated_at") - e."created_at")) * 1000) AS median_applied,
                round(EXTRACT(EPOCH FROM (max(a."updated_at") - e."created_at")) * 1000) AS last_applied,
                round(EXTRACT(EPOCH FROM (e."updated_at" - e."created_at")) * 1000) AS finished,
                count(DISTINCT a."claimed_at") AS claim_moments,
                count(DISTINCT a."updated_at") AS apply_moments
           FROM "workflow_executions" e JOIN "action_executions" a ON a."workflow_execution_id" = e."id"
          WHERE e."id" = $1 GROUP BY e."id", e."created_at", e."updated_at"`,
        [iid],
      )) as [Record<string, unknown>];
      items.push({
        items: n,
        ...(warmup ? { warmup: true } : { round }),
        source: SOURCE,
        // executions of n items in this sample (see `--items-per-sample`); state, action rows and
        // timeline are the last one's
        executions,
        state: istate,
        action_executions: c,
        seconds: Number(seconds.toFixed(2)),
        items_per_s: Math.round(n / seconds),
        // CPU of this process (the engine's too in embedded mode), the engine processes and PostgreSQL, per item
        cpu_ms_per_item: cpuBetween(cpu0, cpuEnd, n * executions, 4),
        // the same less the idle rate measured over the pause before the run, over the run's length
        cpu_ms_per_item_net: (() => {
          const net = (k: 'bench' | 'engines' | 'postgres') =>
            Number(
              (
                ((cpuEnd[k] - cpu0[k] - ((idle1[k] - idle0[k]) / idleSeconds) * wall) * 1000) /
                (n * executions)
              ).toFixed(4),
            );
          return { bench: net('bench'), engines: net('engines'), postgres: net('postgres') };
        })(),
        timeline_ms: Object.fromEntries(
          Object.entries(timeline ?? {}).map(([k, v]) => [k, v === null ? null : Number(v)]),
        ),
        ...(GC_DIR
          ? {
              gc_ms: {
                minor: Math.round(gc1.minor - gc0.minor),
                minor_count: gc1.minorCount - gc0.minorCount,
                other: Math.round(gc1.other - gc0.other),
                other_count: gc1.otherCount - gc0.otherCount,
              },
            }
          : {}),
        // the VACUUM before the run (the dead rows of the runs before it), not counted above
        ...(vacuumed === null ? {} : { vacuum_before: vacuumed }),
        // peak RSS of this process so far: the engine's too in embedded and inprocess modes
        max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
      });
      process.stderr.write(
        `with-items ${n}${warmup ? ' (warm-up)' : ''}: ${istate} in ${seconds.toFixed(2)} s${
          executions > 1 ? ` (mean of ${executions})` : ''
        }\n`,
      );
    }
  }
  const itemsSummary = summariseItems(items, mode);

  // what the history holds at the end: none of it with `--history=off`, whichever processes wrote
  const historyRows = Number(
    ((await ds.query(`SELECT count(*) AS "n" FROM "execution_events"`)) as { n: string }[])[0]?.n ?? 0,
  );
  await close();
  // BENCH_KEEP_DB=1: the scratch database stays, for looking at its rows and plans afterwards
  if (process.env['BENCH_KEEP_DB']) process.stderr.write(`kept database ${db.url}\n`);
  else await db.drop();
  const speed = await machineSpeed();

  const result = {
    mode,
    engines: mode === 'distributed' ? ENGINES : 1,
    ...(mode === 'distributed' ? { prefetch: Number(arg('prefetch', '64')) } : {}),
    clients: CLIENTS,
    warmup_per_client: WARMUP,
    ...(WARMUP_RUNS > 0 ? { warmup_open_loop_runs: WARMUP_RUNS } : {}),
    ...(ONLY !== 'seq10' ? { items_warmup: ITEMS_WARMUP, items_rounds: ITEMS_ROUNDS } : {}),
    ...(mode === 'distributed'
      ? { via: VIA, from: FROM, inline_actions: VIA === 'api' ? INLINE === 'true' : true }
      : {}),
    synchronous_commit: arg('synchronous-commit', 'on'),
    execution_history: HISTORY,
    execution_history_rows: historyRows,
    machine: `${cpus().length} cores`,
    load_average: loadavg().map((l) => Number(l.toFixed(2))),
    ...speed,
    at: new Date().toISOString(),
    ...(seq ? { seq10: seq, fanout: fan } : {}),
    ...(items.length ? { with_items: items, with_items_summary: itemsSummary } : {}),
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  // `--results=<file>`: write elsewhere (trial runs that must not touch the committed figures)
  const file = arg('results', path.join(__dirname, '../results/engine.json'));
  mkdirSync(path.dirname(file), { recursive: true });
  const all = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  // keep the figures of the scenarios this run skipped
  // runs through the API have entries of their own (`distributed_via_api`, `…_no_inline`)
  const key = VIA === 'api' ? `${mode}_via_api${INLINE === 'true' ? '' : '_no_inline'}` : mode;
  all[key] = { ...((all[key] as Record<string, unknown> | undefined) ?? {}), ...result };
  writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}

main().catch(async (e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  await dropOnFailure?.().catch(() => undefined);
  process.exit(1);
});
