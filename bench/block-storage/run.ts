/**
 * Block-storage API benchmark (issue 5): requests/s of `GET /types` and
 * `GET /volumes/detail?limit=100` with 1,000 stored volumes and 8 concurrent clients, and
 * create-to-available latency (p50/p95) of 100 volumes, in embedded and distributed modes.
 * Writes bench/results/block-storage.json.
 *
 *   node -r @swc-node/register bench/block-storage/run.ts [--modes embedded,distributed] [--seconds 10]
 *
 * BENCH_SERVER_NODE_ARGS (space-separated) goes to the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { processCpuSeconds } from '../engine/proc-cpu';

const ROOT = path.resolve(__dirname, '../..');
const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const MODES = arg('modes', 'embedded,distributed').split(',');
const SECONDS = Number(arg('seconds', '10'));
const CONCURRENCY = 8;
const STORED = 1000;
const LATENCY_VOLUMES = 100;
const PROJECT = 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0';
const HEADERS = {
  'x-project-id': PROJECT,
  'x-user-id': 'bench',
  'x-roles': 'admin,member,reader',
  'openstack-api-version': 'volume 3.71',
  'content-type': 'application/json',
};

const pct = (sorted: number[], p: number): number =>
  Math.round((sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0) * 100) / 100;

function startServer(mode: string): Promise<{ child: ChildProcess; port: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        ...(process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(' ').filter((a) => a.length > 0),
        '-r',
        '@swc-node/register',
        path.join(__dirname, 'server.ts'),
        mode,
      ],
      {
        cwd: ROOT,
        env: process.env,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout?.on('data', (d) => {
      out += String(d);
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.on('exit', (code) => reject(new Error(`bench server (${mode}) exited with ${code}`)));
  });
}

async function stopServer(child: ChildProcess): Promise<void> {
  await new Promise<void>((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function call(
  pool: Pool,
  method: 'GET' | 'POST' | 'PUT',
  p: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await pool.request({
    method,
    path: `/v3/${PROJECT}${p}`,
    headers: HEADERS,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, json: text ? JSON.parse(text) : null };
}

async function waitAvailable(pool: Pool, id: string): Promise<void> {
  for (;;) {
    const r = await call(pool, 'GET', `/volumes/${id}`);
    const status = r.json?.volume?.status;
    if (status === 'available') return;
    if (status === 'error' || r.status !== 200) throw new Error(`volume ${id}: ${r.status} ${status}`);
    await new Promise((res) => setTimeout(res, 2));
  }
}

/** Create-to-available latency of `n` volumes created one after another (ms). */
async function createLatency(pool: Pool, n: number): Promise<{ p50: number; p95: number; max: number }> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await call(pool, 'POST', '/volumes', { volume: { size: 1, name: `lat-${i}` } });
    if (r.status !== 202) throw new Error(`create: ${r.status} ${JSON.stringify(r.json)}`);
    await waitAvailable(pool, r.json.volume.id);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50), p95: pct(times, 95), max: pct(times, 100) };
}

async function seed(pool: Pool, total: number): Promise<void> {
  let next = 0;
  const ids: string[] = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        const i = next++;
        const r = await call(pool, 'POST', '/volumes', {
          volume: { size: 1, name: `seed-${i}`, metadata: { i: String(i) } },
        });
        if (r.status !== 202) throw new Error(`seed: ${r.status} ${JSON.stringify(r.json)}`);
        ids.push(r.json.volume.id);
      }
    }),
  );
  for (const id of ids) await waitAvailable(pool, id);
}

/** CPU time (user + system, ms) the process has used so far, from /proc (Linux); null elsewhere. */
function cpuMsOf(pid: number | undefined): number | null {
  return pid !== undefined && existsSync(`/proc/${pid}`) ? processCpuSeconds(pid) * 1000 : null;
}

/**
 * Requests/s with CONCURRENCY clients for SECONDS, plus the server's CPU milliseconds per request:
 * on a shared machine the rate swings with the load, the CPU cost per request much less.
 */
async function throughput(
  pool: Pool,
  p: string,
  serverPid?: number,
): Promise<{
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  errors: number;
  latencyMs: { p50: number; p99: number };
  serverCpuMsPerRequest: number | null;
}> {
  const cpuBefore = cpuMsOf(serverPid);
  const latencies: number[] = [];
  let errors = 0;
  const end = Date.now() + SECONDS * 1000;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) {
        const t0 = process.hrtime.bigint();
        const res = await pool.request({ method: 'GET', path: `/v3/${PROJECT}${p}`, headers: HEADERS });
        // Read every byte without decoding: the client's CPU stays off the server's budget.
        await res.body.arrayBuffer();
        latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (res.statusCode !== 200) errors++;
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuAfter = cpuMsOf(serverPid);
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    seconds: Math.round(seconds * 100) / 100,
    requestsPerSecond: Math.round(latencies.length / seconds),
    errors,
    latencyMs: { p50: pct(latencies, 50), p99: pct(latencies, 99) },
    serverCpuMsPerRequest:
      cpuBefore === null || cpuAfter === null
        ? null
        : Math.round(((cpuAfter - cpuBefore) / latencies.length) * 1000) / 1000,
  };
}

async function main(): Promise<void> {
  const file = path.join(ROOT, 'bench', 'results', 'block-storage.json');
  let previous: Record<string, unknown> = {};
  try {
    previous =
      (JSON.parse(readFileSync(file, 'utf8')) as { results?: Record<string, unknown> }).results ?? {};
  } catch {
    previous = {};
  }
  const results: Record<string, unknown> = { ...previous };
  for (const mode of MODES) {
    const { child, port } = await startServer(mode);
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY * 2 });
    try {
      const q = await pool.request({
        method: 'PUT',
        path: `/v3/${PROJECT}/os-quota-sets/${PROJECT}`,
        headers: HEADERS,
        body: JSON.stringify({ quota_set: { volumes: -1, gigabytes: -1 } }),
      });
      await q.body.text();
      for (let i = 0; i < 20; i++)
        await call(pool, 'POST', '/types', {
          volume_type: { name: `bench-type-${i}`, extra_specs: { volume_backend_name: 'file' } },
        });
      const latency = await createLatency(pool, LATENCY_VOLUMES);
      process.stderr.write(`[${mode}] create-to-available ${JSON.stringify(latency)}\n`);
      await seed(pool, STORED - LATENCY_VOLUMES);
      const types = await throughput(pool, '/types', child.pid);
      process.stderr.write(
        `[${mode}] GET /types ${types.requestsPerSecond}/s, server ${types.serverCpuMsPerRequest} ms CPU/request\n`,
      );
      const detail = await throughput(pool, '/volumes/detail?limit=100', child.pid);
      process.stderr.write(
        `[${mode}] GET /volumes/detail?limit=100 ${detail.requestsPerSecond}/s, server ${detail.serverCpuMsPerRequest} ms CPU/request\n`,
      );
      results[mode] = {
        loadAverage1mAtEnd: Math.round(os.loadavg()[0]! * 100) / 100,
        'create-to-available (100 volumes, one at a time)': { latencyMs: latency },
        'GET /types (21 types)': types,
        'GET /volumes/detail?limit=100 (1,000 volumes)': detail,
      };
    } finally {
      await pool.close();
      await stopServer(child);
    }
  }
  mkdirSync(path.dirname(file), { recursive: true });
  const cpus = os.cpus();
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        bench: 'block-storage',
        date: new Date().toISOString(),
        machine: {
          cpus: cpus.length,
          cpuModel: cpus[0]?.model ?? 'unknown',
          node: process.version,
          loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
        },
        setup: {
          storedVolumes: STORED,
          concurrentClients: CONCURRENCY,
          secondsPerScenario: SECONDS,
          latencyVolumes: LATENCY_VOLUMES,
        },
        target:
          'distributed: types >= 1,000 req/s, volumes detail (limit 100) >= 500 req/s, create-to-available p95 < 200 ms',
        results,
      },
      null,
      2,
    )}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
