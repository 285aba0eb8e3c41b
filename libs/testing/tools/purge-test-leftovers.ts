/**
 * Removes what earlier test and benchmark runs left on the local RabbitMQ and Redis (runs killed
 * before their teardown): queues and BullMQ keys with a test or bench prefix, except those of runs
 * still under way. `.ci/run` calls it before the tests. Never fails: problems are logged.
 *
 *   node -r @swc-node/register libs/testing/tools/purge-test-leftovers.ts [--dry-run]
 *
 * AMQP cannot list queues, so the listing comes from `rabbitmqctl list_queues` (local broker); without
 * it only Redis is swept. TEST_AMQP_URL / TEST_REDIS_URL as for the tests.
 */
import { spawnSync } from 'node:child_process';
import { type QueueInfo, parseQueueListing, sweepTestLeftovers } from '../src/messaging/leftovers';
import { testServers } from '../src/runtime/test-runtime';

const LIST_TIMEOUT_S = Number(process.env['PURGE_LIST_TIMEOUT_S'] ?? 60);
const log = (msg: string): void => void process.stdout.write(`[purge-test-leftovers] ${msg}\n`);

function listQueues(): QueueInfo[] | null {
  const r = spawnSync(
    'rabbitmqctl',
    ['-t', String(LIST_TIMEOUT_S), 'list_queues', '-q', '--no-table-headers', 'name', 'consumers'],
    {
      encoding: 'utf8',
      timeout: (LIST_TIMEOUT_S + 10) * 1000,
    },
  );
  if (r.error || r.status !== 0) {
    log(
      `cannot list RabbitMQ queues (${r.error?.message ?? `rabbitmqctl exit ${r.status}: ${(r.stderr ?? '').trim().split('\n')[0]}`}); sweeping Redis only`,
    );
    return null;
  }
  return parseQueueListing(r.stdout);
}

async function main(): Promise<void> {
  const started = Date.now();
  const queues = listQueues();
  if (queues) log(`${queues.length} queue(s) on the broker`);
  const { amqpUrl, redisUrl } = testServers();
  const dryRun = process.argv.includes('--dry-run');
  const report = await sweepTestLeftovers({ amqpUrl, redisUrl, queues, dryRun });
  log(
    `${dryRun ? 'would delete' : 'deleted'} ${report.queuesDeleted} queue(s) and ${report.keysDeleted} Redis key(s) of earlier test/bench runs; ` +
      `kept ${report.queuesKept} queue(s) of ${report.runsKept.length} run(s) still under way; ${Date.now() - started} ms`,
  );
  for (const f of report.queuesFailed.slice(0, 10)) log(`not deleted: ${f}`);
}

main()
  .catch((e: unknown) => log(`failed (ignored): ${e instanceof Error ? e.message : String(e)}`))
  .finally(() => process.exit(0));
