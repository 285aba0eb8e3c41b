/**
 * Start-up and footprint benchmark (issue #17), from the bundles (`npm run build` first: it reads
 * `dist/apps/<app>/main.js` and refuses to run without them).
 *
 * distributed — each of the six apps started alone with `node dist/apps/<app>/main.js` on real
 *   PostgreSQL, RabbitMQ and Redis on loopback: a fresh database (`osc_startup_<pid>_<time>`)
 *   migrated first with `node dist/apps/embedded/main.js migrate`, AMQP_URL, REDIS_URL, a unique
 *   QUEUE_PREFIX, AUTH_MODE=noauth and its port variable on a free port. Measured: wall
 *   time from spawn to the first 200 from its `/readyz`, and the CPU the process used until then
 *   (utime + stime of /proc/<pid>/stat), for each of `--rounds` rounds. Database, queues and keys of
 *   the run are removed at the end.
 * embedded — `node dist/apps/embedded/main.js` with DATA_DIR in a fresh temporary folder,
 *   WORKFLOW_API_PORT and VOLUME_API_PORT on free ports, AUTH_MODE=noauth:
 *   first start (empty DATA_DIR) to both APIs' `/readyz` answering 200 (wall, CPU); RSS
 *   (/proc/<pid>/status VmRSS) `--idle-seconds` after ready; RSS `--idle-seconds` after a short
 *   workload (`--workload` executions of a 10-task std.noop workflow through POST /v2/executions,
 *   8 at a time, plus `--volumes` volumes created through the Cinder API); then `--rounds` warm
 *   restarts on that DATA_DIR (wall, CPU), and RSS `--idle-seconds` after the last one.
 *
 * Options: --rounds=3  --idle-seconds=15  --workload=200  --volumes=10 (Cinder's default quota)
 *          --only=all|distributed|embedded
 *          --results=<file> (default bench/results/startup.json; the load average at the start and
 *          the end of the run is recorded beside the figures — wall times need free cores).
 *
 *   npm run build && node -r @swc-node/register bench/startup/run.ts
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { purgeTestPrefix, testServers } from '@osc/testing';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const ROUNDS = Number(arg('rounds', '3'));
const IDLE_S = Number(arg('idle-seconds', '15'));
const WORKLOAD = Number(arg('workload', '200'));
/** Volumes of the workload: Cinder's default quota allows a project 10. */
const VOLUMES = Number(arg('volumes', '10'));
const ONLY = arg('only', 'all') as 'all' | 'distributed' | 'embedded';
const ROOT = path.resolve(__dirname, '../..');
const RESULTS = arg('results', path.join(ROOT, 'bench/results/startup.json'));
const CLK_TCK = 100;

/** Each distributed app, the variable of the port its /readyz answers on. */
const APPS = [
  ['workflow-api', 'WORKFLOW_API_PORT'],
  ['workflow-engine', 'WORKFLOW_ENGINE_HEALTH_PORT'],
  ['cron-scheduler', 'CRON_SCHEDULER_HEALTH_PORT'],
  ['volume-api', 'VOLUME_API_PORT'],
  ['scheduler-stats', 'SCHEDULER_STATS_HEALTH_PORT'],
  ['backup-worker', 'BACKUP_WORKER_HEALTH_PORT'],
] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const round2 = (n: number) => Math.round(n * 100) / 100;
const load = () => loadavg().map(round2);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function bundle(app: string): string {
  const file = path.join(ROOT, 'dist/apps', app, 'main.js');
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  return file;
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat. */
function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(m?.[1]) / 1024);
}

async function ready(port: number): Promise<boolean> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

interface Started {
  child: ChildProcess;
  wallS: number;
  cpuS: number;
}

/** Spawns a bundle and waits until every port's /readyz answers 200; the process's output is kept for a failure's message. */
async function startUntilReady(
  file: string,
  env: NodeJS.ProcessEnv,
  ports: readonly number[],
  timeoutS = 180,
): Promise<Started> {
  const t0 = process.hrtime.bigint();
  const child = spawn(process.execPath, [file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-4000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited: number | null | undefined;
  child.once('exit', (code) => (exited = code));
  const pending = new Set(ports);
  while (pending.size > 0) {
    if (exited !== undefined) throw new Error(`${file} exited (${exited}) before ready: ${out}`);
    if (Number(process.hrtime.bigint() - t0) / 1e9 > timeoutS) {
      child.kill('SIGKILL');
      throw new Error(`${file} not ready after ${timeoutS} s: ${out}`);
    }
    for (const p of [...pending]) if (await ready(p)) pending.delete(p);
    if (pending.size > 0) await sleep(20);
  }
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  return { child, wallS: round2(wallS), cpuS: round2(cpuSeconds(child.pid!)) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

async function distributed(): Promise<Record<string, { wallS: number[]; cpuS: number[] }>> {
  const servers = testServers();
  const dbName = `osc_startup_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: servers.postgresUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const prefix = `oscstartup${process.pid}x${Date.now()}`;
  const base = {
    ...process.env,
    DATABASE_URL: servers.postgresUrl.replace(/\/[^/]*$/, `/${dbName}`),
    AMQP_URL: servers.amqpUrl,
    REDIS_URL: servers.redisUrl,
    QUEUE_PREFIX: `${prefix}.`,
    AUTH_MODE: 'noauth',
    LOG_LEVEL: 'warn',
  };
  const out: Record<string, { wallS: number[]; cpuS: number[] }> = {};
  try {
    await new Promise<void>((resolve, reject) => {
      const m = spawn(process.execPath, [bundle('embedded'), 'migrate'], {
        cwd: ROOT,
        env: base,
        stdio: 'inherit',
      });
      m.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`migrate exited ${code}`))));
    });
    for (let round = 0; round < ROUNDS; round++) {
      for (const [app, portVar] of APPS) {
        const port = await freePort();
        const s = await startUntilReady(bundle(app), { ...base, [portVar]: String(port) }, [port]);
        await stop(s.child);
        (out[app] ??= { wallS: [], cpuS: [] }).wallS.push(s.wallS);
        out[app].cpuS.push(s.cpuS);
        console.log(
          `distributed ${app} round ${round + 1}: ${s.wallS} s wall, ${s.cpuS} s CPU (load ${load().join(' ')})`,
        );
      }
    }
  } finally {
    // the apps keep their BullMQ keys under the default `osc:` prefix, named by the queue prefix
    await purgeTestPrefix({ queuePrefix: `${prefix}.` }).catch((err: unknown) =>
      console.error('purge failed', err),
    );
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
  return out;
}

const SEQ10 = `version: '2.0'
startup_seq10:
  tasks:
${Array.from({ length: 10 }, (_, i) => `    t${i}:\n      action: std.noop\n${i < 9 ? `      on-success: t${i + 1}\n` : ''}`).join('')}`;

/** The short workload: seq10 executions through the workflow API and volumes through the Cinder API, all waited for. */
async function workload(wfPort: number, volPort: number, alive: () => boolean): Promise<void> {
  const project = 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0';
  const call = async (
    port: number,
    method: string,
    p: string,
    body?: string,
    type = 'application/json',
  ): Promise<unknown> => {
    // Cinder's noauth answers a request without a token with the token to use (204): send one.
    const headers: Record<string, string> = {};
    if (port === volPort) headers['x-auth-token'] = `admin:${project}`;
    if (body) headers['content-type'] = type;
    // On a loaded machine a kept-alive connection may be closed by the server as the request goes
    // out (ECONNRESET); the request is sent again on a new one (a duplicate only adds work).
    let res: Response | undefined;
    for (let attempt = 1; !res; attempt++) {
      try {
        res = await fetch(`http://127.0.0.1:${port}${p}`, { method, body, headers });
      } catch (err) {
        if (attempt >= 5 || !alive()) throw err;
        await sleep(100);
      }
    }
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  await call(wfPort, 'POST', '/v2/workflows', SEQ10, 'text/plain');
  let next = 0;
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < WORKLOAD) {
        next++;
        ids.push(
          String(
            (
              (await call(
                wfPort,
                'POST',
                '/v2/executions',
                JSON.stringify({ workflow_name: 'startup_seq10' }),
              )) as { id: string }
            ).id,
          ),
        );
      }
    }),
  );
  for (let i = 0; i < VOLUMES; i++) {
    await call(
      volPort,
      'POST',
      `/v3/${project}/volumes`,
      JSON.stringify({ volume: { size: 1, name: `startup-${i}` } }),
    );
  }
  for (;;) {
    const list = (await call(
      wfPort,
      'GET',
      '/v2/executions?limit=1000&fields=id,state&workflow_name=startup_seq10',
    )) as { executions: { state: string }[] };
    const done = list.executions.filter((e) => e.state === 'SUCCESS').length;
    if (list.executions.some((e) => e.state === 'ERROR')) throw new Error('a workload execution failed');
    const vols = (await call(volPort, 'GET', `/v3/${project}/volumes/detail?limit=1000`)) as {
      volumes: { status: string }[];
    };
    if (vols.volumes.some((v) => v.status === 'error')) throw new Error('a workload volume failed');
    if (done >= ids.length && vols.volumes.filter((v) => v.status === 'available').length >= VOLUMES) return;
    await sleep(200);
  }
}

interface EmbeddedFigures {
  firstStart: { wallS: number; cpuS: number };
  rssIdleMb: number;
  rssAfterWorkloadMb: number;
  /** `--idle-seconds` after the last warm restart was ready (the data already there). */
  rssIdleAfterRestartMb: number;
  workload: { executions: number; volumes: number };
  warmRestarts: { wallS: number[]; cpuS: number[] };
}

async function embedded(): Promise<EmbeddedFigures & { idleSeconds: number }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-startup-'));
  const wfPort = await freePort();
  const volPort = await freePort();
  let running: ChildProcess | undefined;
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    WORKFLOW_API_PORT: String(wfPort),
    VOLUME_API_PORT: String(volPort),
    AUTH_MODE: 'noauth',
    LOG_LEVEL: 'warn',
  };
  try {
    const first = await startUntilReady(bundle('embedded'), env, [wfPort, volPort]);
    running = first.child;
    console.log(
      `embedded first start: ${first.wallS} s wall, ${first.cpuS} s CPU (load ${load().join(' ')})`,
    );
    await sleep(IDLE_S * 1000);
    const rssIdleMb = rssMb(first.child.pid!);
    console.log(`embedded RSS ${IDLE_S} s after ready: ${rssIdleMb} MB`);
    await workload(wfPort, volPort, () => first.child.exitCode === null && first.child.signalCode === null);
    await sleep(IDLE_S * 1000);
    const rssAfterWorkloadMb = rssMb(first.child.pid!);
    console.log(
      `embedded RSS ${IDLE_S} s after ${WORKLOAD} executions and ${VOLUMES} volumes: ${rssAfterWorkloadMb} MB`,
    );
    await stop(first.child);
    const warm = { wallS: [] as number[], cpuS: [] as number[] };
    let rssIdleAfterRestartMb = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const s = await startUntilReady(bundle('embedded'), env, [wfPort, volPort]);
      running = s.child;
      if (round === ROUNDS - 1) {
        await sleep(IDLE_S * 1000);
        rssIdleAfterRestartMb = rssMb(s.child.pid!);
        console.log(`embedded RSS ${IDLE_S} s after a warm restart: ${rssIdleAfterRestartMb} MB`);
      }
      await stop(s.child);
      warm.wallS.push(s.wallS);
      warm.cpuS.push(s.cpuS);
      console.log(
        `embedded warm restart ${round + 1}: ${s.wallS} s wall, ${s.cpuS} s CPU (load ${load().join(' ')})`,
      );
    }
    return {
      idleSeconds: IDLE_S,
      firstStart: { wallS: first.wallS, cpuS: first.cpuS },
      rssIdleMb,
      rssAfterWorkloadMb,
      rssIdleAfterRestartMb,
      workload: { executions: WORKLOAD, volumes: VOLUMES },
      warmRestarts: warm,
    };
  } finally {
    if (running) await stop(running);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** One section's figures with when and at what load (1, 5, 15 min averages) they were measured. */
async function measured<T>(run: () => Promise<T>): Promise<Record<string, unknown>> {
  const date = new Date().toISOString();
  const loadAverageAtStart = load();
  const figures = await run();
  return {
    date,
    rounds: ROUNDS,
    machine: `${cpus().length} cores`,
    loadAverageAtStart,
    loadAverageAtEnd: load(),
    ...figures,
  };
}

async function main(): Promise<void> {
  // A run of one side keeps the other side's last figures (each with its own date and load).
  const result: Record<string, unknown> = {};
  if (ONLY !== 'distributed') result.embedded = await measured(embedded);
  if (ONLY !== 'embedded') result.distributed = await measured(distributed);
  const previous = existsSync(RESULTS)
    ? (JSON.parse(readFileSync(RESULTS, 'utf8')) as Record<string, unknown>)
    : {};
  writeFileSync(RESULTS, `${JSON.stringify({ ...previous, ...result }, null, 2)}\n`);
  console.log(`written to ${RESULTS}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
