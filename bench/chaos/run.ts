/**
 * Chaos benchmark (issue #15 item 6): the product under a mixed load while its processes are
 * killed with SIGKILL and restarted; then the load stops, the product gets a bounded time to
 * settle, and the outcome is judged from the database and from the counting HTTP server that every
 * std.http action calls (see bench/chaos/README.md for what is checked and why).
 *
 *   node -r @swc-node/register bench/chaos/run.ts [--mode=distributed|embedded|both]
 *     [--duration=600]            distributed: seconds of load and kills
 *     [--kills=20]                embedded: how many times the single process is killed
 *     [--kill-every=10]           seconds between two kills
 *     [--settle=120]              longest wait (s) after the load for everything to settle
 *     [--workflow-stuck-after=30] WORKFLOW_STUCK_AFTER_SECONDS given to the product
 *     [--block-storage-stuck-after=30] BLOCK_STORAGE_STUCK_AFTER_SECONDS given to the product
 *     [--rate=2]                  workflow executions started per second
 *     [--with-items=6]            items of the with-items workflow
 *     [--cron-triggers=2]         cron triggers due every minute
 *     [--call-delay-ms=150]       how long the counting server holds each std.http call
 *     [--env=K=V,K=V]             more environment for every product process
 *
 * Distributed: two replicas of each of the six apps on the local PostgreSQL (a fresh database per
 * run), RabbitMQ and Redis (a unique QUEUE_PREFIX, purged at the end); TEST_POSTGRES_URL,
 * TEST_AMQP_URL, TEST_REDIS_URL as for the tests. Embedded: `npm start`'s process on a fresh
 * DATA_DIR under tmp/. Prints a summary table; writes bench/results/chaos-<mode>.json. Exits 1
 * when a check failed.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { type ChaosMode, type ChaosResult, DEFAULT_OPTIONS, runChaos } from './chaos';
import { summaryTable } from './summary';

const arg = (name: string, dflt: string): string =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const num = (name: string, dflt: number): number => {
  const v = Number(arg(name, String(dflt)));
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a non-negative number`);
  return v;
};

async function main(): Promise<void> {
  const modeArg = arg('mode', 'both');
  const modes: ChaosMode[] = modeArg === 'both' ? ['distributed', 'embedded'] : [modeArg as ChaosMode];
  if (!modes.every((m) => m === 'distributed' || m === 'embedded'))
    throw new Error('--mode is distributed, embedded or both');
  const productEnv = Object.fromEntries(
    arg('env', '')
      .split(',')
      .filter((kv) => kv.includes('='))
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  const log = (msg: string) =>
    void process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
  const results: ChaosResult[] = [];
  for (const mode of modes) {
    const result = await runChaos({
      ...DEFAULT_OPTIONS,
      mode,
      durationS: num('duration', DEFAULT_OPTIONS.durationS),
      kills: num('kills', DEFAULT_OPTIONS.kills),
      killEveryS: num('kill-every', DEFAULT_OPTIONS.killEveryS),
      settleS: num('settle', DEFAULT_OPTIONS.settleS),
      workflowStuckAfterS: num('workflow-stuck-after', DEFAULT_OPTIONS.workflowStuckAfterS),
      blockStorageStuckAfterS: num('block-storage-stuck-after', DEFAULT_OPTIONS.blockStorageStuckAfterS),
      rate: num('rate', DEFAULT_OPTIONS.rate),
      withItems: num('with-items', DEFAULT_OPTIONS.withItems),
      cronTriggers: num('cron-triggers', DEFAULT_OPTIONS.cronTriggers),
      callDelayMs: num('call-delay-ms', DEFAULT_OPTIONS.callDelayMs),
      productEnv,
      log,
    });
    results.push(result);
    const dir = path.join(__dirname, '..', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, `chaos-${mode}.json`),
      `${JSON.stringify({ benchmark: 'chaos', machine: { cpus: cpus().length }, ...result }, null, 2)}\n`,
    );
    for (const f of result.verdict.failures) log(`FAILED ${mode}: ${f}`);
  }
  process.stdout.write(`${summaryTable(results)}\n`);
  if (!results.every((r) => r.passed)) process.exitCode = 1;
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(2);
  });
}
