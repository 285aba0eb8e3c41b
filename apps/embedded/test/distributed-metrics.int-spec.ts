import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dashboardExpressions, metricsOf } from '../../../tools/deploy/dashboard';
import { DistributedStack } from './distributed-stack';

/**
 * docs/metrics.md in distributed mode: after a workflow (std.echo, std.http), a one-shot cron
 * trigger, a volume and its backup, each app's /metrics shows what that work recorded, and every
 * query of the Grafana dashboard reads a metric some running app serves.
 */
const PROJECT = 'b6f0c0de5eed4bd1a2c3d4e5f6a7b8c9';
const TOKEN = { 'x-auth-token': `metrics:${PROJECT}` };
const GIB = 1024 ** 3;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`unparsed metrics line: ${line}`);
    const labels = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1]!, l[2]!]),
    );
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** Series names the page declares (`# TYPE`), samples or not: a histogram is its `_bucket`, `_sum` and `_count`. */
function declared(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap(([, name, type]) =>
    type === 'histogram'
      ? [`${name}_bucket`, `${name}_sum`, `${name}_count`]
      : type === 'summary'
        ? [name!, `${name}_sum`, `${name}_count`]
        : [name!],
  );
}

const value = (samples: Sample[], name: string, labels: Record<string, string> = {}): number =>
  samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 300));
  }
}

describe('distributed mode: /metrics after some work', () => {
  const stack = new DistributedStack();
  let target: Server;
  let targetUrl = '';

  beforeAll(async () => {
    await stack.createDatabase();
    target = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'),
    );
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/ping`;
  });
  afterAll(async () => {
    await stack.stop();
    await new Promise((resolve) => target.close(resolve));
  }, 30_000);

  it('each app serves the documented metrics with the values the work produced', async () => {
    await stack.start();
    const wf = `http://127.0.0.1:${stack.port('workflow-api')}`;
    const vol = `http://127.0.0.1:${stack.port('volume-api')}/v3/${PROJECT}`;
    const json = { ...TOKEN, 'content-type': 'application/json' };

    const definition = [
      "version: '2.0'",
      'metered_wf:',
      '  tasks:',
      '    echo:',
      '      action: std.echo output=1',
      '      on-success: [call]',
      '    call:',
      '      action: std.http',
      '      input:',
      `        url: ${targetUrl}`,
    ].join('\n');
    expect(
      (
        await fetch(`${wf}/v2/workflows`, {
          method: 'POST',
          headers: { ...TOKEN, 'content-type': 'text/plain' },
          body: definition,
        })
      ).status,
    ).toBe(201);
    const started = await fetch(`${wf}/v2/executions`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ workflow_name: 'metered_wf' }),
    });
    expect(started.status).toBe(201);
    const { id } = (await started.json()) as { id: string };
    // A one-shot cron trigger due in 2 s.
    const due = new Date(Date.now() + 2000).toISOString().replace('T', ' ').slice(0, 19);
    const cron = await fetch(`${wf}/v2/cron_triggers`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        name: 'metered_cron',
        workflow_name: 'metered_wf',
        first_execution_time: due,
        remaining_executions: 1,
      }),
    });
    expect(cron.status).toBe(201);
    const volume = await fetch(`${vol}/volumes`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ volume: { size: 1, name: 'metered' } }),
    });
    expect(volume.status).toBe(202);
    const volumeId = ((await volume.json()) as { volume: { id: string } }).volume.id;

    await until('the execution', async () => {
      const state = (
        (await (await fetch(`${wf}/v2/executions/${id}`, { headers: TOKEN })).json()) as { state: string }
      ).state;
      if (state === 'ERROR') throw new Error('the execution failed');
      return state === 'SUCCESS' ? state : undefined;
    });
    await until('the volume', async () => {
      const status = (
        (await (await fetch(`${vol}/volumes/${volumeId}`, { headers: TOKEN })).json()) as {
          volume: { status: string };
        }
      ).volume.status;
      if (status === 'error') throw new Error('the volume failed');
      return status === 'available' ? status : undefined;
    });
    const backup = await fetch(`${vol}/backups`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ backup: { volume_id: volumeId, name: 'metered' } }),
    });
    expect(backup.status).toBe(202);
    const backupId = ((await backup.json()) as { backup: { id: string } }).backup.id;
    await until('the backup', async () => {
      const status = (
        (await (await fetch(`${vol}/backups/${backupId}`, { headers: TOKEN })).json()) as {
          backup: { status: string };
        }
      ).backup.status;
      if (status === 'error') throw new Error('the backup failed');
      return status === 'available' ? status : undefined;
    });
    // The cron trigger's execution: the trigger is gone once it fired its only time.
    await until('the cron trigger to fire', async () => {
      const res = await fetch(`${wf}/v2/cron_triggers/metered_cron`, { headers: TOKEN });
      return res.status === 404 ? true : undefined;
    });

    const served = new Set<string>();
    const scrape = async (name: string) => {
      const res = await fetch(`http://127.0.0.1:${stack.port(name)}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      const text = await res.text();
      for (const n of declared(text)) served.add(n);
      return parseMetrics(text);
    };
    const engine = await until('two finished executions in the engine', async () => {
      const s = await scrape('workflow-engine');
      return value(s, 'osc_engine_transitions_total', { subject: 'execution', to: 'SUCCESS' }) >= 2
        ? s
        : undefined;
    });
    expect(
      value(engine, 'osc_engine_transitions_total', { subject: 'task', to: 'SUCCESS' }),
    ).toBeGreaterThanOrEqual(4);
    expect(
      value(engine, 'osc_action_duration_seconds_count', { action: 'std.echo', outcome: 'SUCCESS' }),
    ).toBe(2);
    expect(
      value(engine, 'osc_action_duration_seconds_count', { action: 'std.http', outcome: 'SUCCESS' }),
    ).toBe(2);
    // Per execution at least its start and the std.http result.
    expect(
      value(engine, 'osc_commands_handled_total', { queue: 'workflow.engine', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(4);
    expect(value(engine, 'osc_commands_in_flight', { queue: 'workflow.engine' })).toBe(0);
    expect(
      engine.some(
        (s) =>
          s.name === 'osc_queue_depth' &&
          s.labels['kind'] === 'command' &&
          s.labels['queue'] === 'workflow.engine',
      ),
    ).toBe(true);
    expect(engine.some((s) => s.name === 'osc_queue_depth' && s.labels['kind'] === 'job')).toBe(true);
    expect(
      engine.some((s) => s.name === 'osc_queue_oldest_age_seconds' && s.labels['kind'] === 'outbox'),
    ).toBe(true);
    // std.echo ran inline in the engine; each std.http was a job.
    expect(value(engine, 'osc_jobs_handled_total', { job: 'action.run', outcome: 'ok' })).toBe(2);

    const cronMetrics = await scrape('cron-scheduler');
    expect(value(cronMetrics, 'osc_cron_lateness_seconds_count')).toBe(1);
    expect(value(cronMetrics, 'osc_cron_firings_total', { outcome: 'started' })).toBe(1);

    const worker = await scrape('backup-worker');
    expect(value(worker, 'osc_volume_operations_total', { operation: 'volume.create', outcome: 'ok' })).toBe(
      1,
    );
    expect(value(worker, 'osc_volume_operation_duration_seconds_count', { operation: 'volume.create' })).toBe(
      1,
    );
    expect(value(worker, 'osc_backup_bytes_total', { operation: 'create' })).toBe(GIB);
    expect(value(worker, 'osc_backup_throughput_bytes_per_second_count', { operation: 'create' })).toBe(1);
    expect(worker.some((s) => s.name === 'osc_queue_oldest_age_seconds' && s.labels['kind'] === 'job')).toBe(
      true,
    );

    const wfApi = await scrape('workflow-api');
    expect(
      value(wfApi, 'http_request_duration_seconds_count', {
        app: 'workflow-api',
        route: '/v2/executions',
        method: 'POST',
        status: '201',
      }),
    ).toBe(1);
    const volApi = await scrape('volume-api');
    expect(
      value(volApi, 'http_request_duration_seconds_count', {
        app: 'volume-api',
        method: 'POST',
        status: '202',
      }),
    ).toBe(2);
    const stats = await scrape('scheduler-stats');
    expect(value(stats, 'osc_commands_handled_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);

    // The dashboard reads only what running apps serve.
    const missing = dashboardExpressions().flatMap((e) =>
      metricsOf(e)
        .filter((n) => !served.has(n))
        .map((n) => `${n} in ${e}`),
    );
    expect(missing).toEqual([]);
  }, 240_000);
});
