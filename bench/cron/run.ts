/**
 * Cron benchmark (issue 8): 1,000 triggers due within the same minute, fired by 3 scheduler replicas,
 * each a separate process with its own database pool, against PostgreSQL.
 *
 * Scenarios:
 *   spread — 1,000 one-shot triggers whose times are spread over one minute (whole seconds);
 *   burst  — 1,000 one-shot triggers all due at the same second.
 * Reported per scenario: lateness of each execution's creation (the commit of the firing transaction)
 * after its scheduled time, p50/p95/max; how many fired early (execution created_at before the
 * scheduled time), twice, or not at all.
 *
 *   node -r @swc-node/register bench/cron/run.ts [--n=1000] [--replicas=3] [--scenarios=spread,burst]
 */
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { OutboxWriter } from '@osc/messaging';
import { closeDataSource, createDataSource } from '@osc/persistence';
import { systemClock } from '@osc/platform';
import { CronPoller } from '../../apps/cron-scheduler/src/firing/cron-poller';
import { CronTriggerFiring } from '../../apps/cron-scheduler/src/firing/cron-trigger-firing';
import {
  createCronTestDatabase,
  firedExecutions,
  seedDueTriggers,
  seedWorkflow,
} from '../../apps/cron-scheduler/test/cron-fixture';
import { SCHEMA_PARTS } from '../../apps/cron-scheduler/src/schema';
import { messagingMigrations, outboxEntities } from '@osc/messaging';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;

/** A replica process: fire until told to stop on stdin; report each committed batch on stdout. */
async function runReplica(url: string): Promise<void> {
  const entities = [...outboxEntities, ...SCHEMA_PARTS.flatMap((p) => p.entities)];
  const migrations = [...messagingMigrations, ...SCHEMA_PARTS.flatMap((p) => p.migrations)];
  const ds = await createDataSource(
    { kind: 'postgres', url, poolSize: 4 },
    entities as never,
    migrations as never,
  );
  const firing = new CronTriggerFiring(ds, new OutboxWriter(), systemClock, {
    batchSize: Number(arg('batch', '100')),
    onFired: (fired, committedAt) => {
      process.stdout.write(
        `${JSON.stringify({ fired: fired.map((f) => [f.triggerId, f.scheduledAt.getTime()]), committedAt: committedAt.getTime() })}\n`,
      );
    },
  });
  const poller = new CronPoller(ds, firing, systemClock, { maxSleepMs: 500, busySleepMs: 20 });
  poller.start();
  process.stdout.write('ready\n');
  await new Promise<void>((resolve) => process.stdin.on('data', () => resolve()));
  await poller.stop();
  await closeDataSource(ds);
  process.exit(0);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;

async function scenario(kind: 'spread' | 'burst', n: number, replicas: number) {
  const db = await createCronTestDatabase('osc_bench_cron');
  const children: ChildProcess[] = [];
  try {
    const seed = await db.connect(4);
    const wf = await seedWorkflow(seed, 'bench');
    const events: { fired: [string, number][]; committedAt: number }[] = [];
    for (let i = 0; i < replicas; i++) {
      const child = spawn(
        process.execPath,
        ['-r', '@swc-node/register', __filename, '--replica', `--url=${db.url}`],
        {
          stdio: ['pipe', 'pipe', 'inherit'],
        },
      );
      children.push(child);
      const lines = createInterface({ input: child.stdout! });
      await new Promise<void>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`replica exited ${code}`)));
        lines.on('line', (line) => {
          if (line === 'ready') resolve();
          else if (line.startsWith('{')) events.push(JSON.parse(line));
        });
      });
    }
    // Seed far in the future, then move the whole schedule in one statement: the first trigger is due
    // at the next whole second at least 2 s ahead, trigger i at start + floor(i * 60 / n) s (spread).
    const ids = await seedDueTriggers(seed, wf, 'bench', n, new Date(Date.now() + 3600_000));
    const start = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    const times = Array.from({ length: n }, (_, i) =>
      kind === 'burst' ? start : start + Math.floor((i * 60) / n) * 1000,
    );
    await seed.query(
      `UPDATE "cron_triggers" AS c SET "next_execution_time" = u.t, "first_execution_time" = u.t
         FROM unnest($1::uuid[], $2::timestamptz[]) AS u(id, t) WHERE c."id" = u.id`,
      [ids, times.map((t) => new Date(t).toISOString())],
    );
    if (Date.now() >= start) throw new Error('seeding took longer than the lead time');
    process.stderr.write(`${kind}: ${n} triggers seeded, first due in ${start - Date.now()} ms\n`);
    const deadline = Math.max(...times) + 30_000;
    while (events.reduce((s, e) => s + e.fired.length, 0) < n && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    for (const c of children) c.stdin!.end('stop\n');
    await Promise.all(
      children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))),
    );

    const lateness: number[] = [];
    const firedCount = new Map<string, number>();
    for (const e of events) {
      for (const [id, scheduled] of e.fired) {
        lateness.push(e.committedAt - scheduled);
        firedCount.set(id, (firedCount.get(id) ?? 0) + 1);
      }
    }
    const { byTrigger, executions } = await firedExecutions(seed);
    // Never early: each execution row's created_at against its own trigger's scheduled time.
    const scheduledOf = new Map(ids.map((id, i) => [id, times[i] as number]));
    const rows: { description: string; created_at: Date }[] = await seed.query(
      `SELECT "description", "created_at" FROM "workflow_executions"`,
    );
    const earlyRows = rows.filter((r) => {
      const id = (JSON.parse(r.description) as { triggered_by: { id: string } }).triggered_by.id;
      return new Date(r.created_at).getTime() < (scheduledOf.get(id) ?? Infinity);
    }).length;
    const sorted = [...lateness].sort((a, b) => a - b);
    const result = {
      scenario: kind,
      triggers: n,
      replicas,
      window_s: kind === 'burst' ? 0 : 60,
      fired: lateness.length,
      executions,
      fired_twice:
        [...byTrigger.values()].filter((l) => l.length > 1).length +
        [...firedCount.values()].filter((c) => c > 1).length,
      not_fired: ids.filter((id) => !byTrigger.has(id)).length,
      early: earlyRows + lateness.filter((l) => l < 0).length,
      lateness_ms: {
        p50: pct(sorted, 50),
        p95: pct(sorted, 95),
        max: sorted[sorted.length - 1] ?? 0,
        min: sorted[0] ?? 0,
      },
    };
    process.stderr.write(`${JSON.stringify(result)}\n`);
    return result;
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    await db.drop();
  }
}

async function main() {
  if (process.argv.includes('--replica')) return runReplica(arg('url', ''));
  const n = Number(arg('n', '1000'));
  const replicas = Number(arg('replicas', '3'));
  const scenarios = arg('scenarios', 'spread,burst').split(',') as ('spread' | 'burst')[];
  const results = [];
  for (const s of scenarios) results.push(await scenario(s, n, replicas));
  const out = {
    benchmark: 'cron',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, loadavg: loadavg().map((l) => Math.round(l * 100) / 100) },
    target: 'never early; p95 lateness < 1000 ms',
    results,
  };
  const dir = path.join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'cron.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
