import * as amqplib from 'amqplib';
import type { Redis } from 'ioredis';
import { connectRedis, deleteKeysWith } from './test-prefix';

/**
 * Queue-name prefixes of test and benchmark runs, each naming one run: what `purgeTestPrefix` would
 * have deleted had the run reached its teardown. Production queues (`[QUEUE_PREFIX]workflow.engine`,
 * `block-storage.scheduler`, …) match none of them.
 * - `osc_e2e_<pid>_<12 hex>.` createTestRuntime; `osc_dist_<12 hex>.` distributed-start;
 *   `e2e-<8 hex>.` the block-storage e2e harness; `crash…<8 hex>.` the engine crash tests;
 *   `expr<8 hex>.` the engine's expression-functions test (distributed stack);
 *   `bench<13 digits>.` bench/engine; `oscstartup<pid>x<13 digits>.` bench/startup's distributed apps;
 *   `osc-test-et-<pid>-<8 hex>.` the event-trigger e2e listener;
 *   `osc_ks_wf_<pid>_<8 hex>.` the Keystone test of tools/keystone.
 * - `<words>-<8 base36>-<8 hex>` (and its `.dlq`): a whole queue name from messaging's `uniqueName`.
 */
const RUN_PREFIXES: readonly RegExp[] = [
  /^osc_e2e_(\d+)_[0-9a-f]{12}\./,
  /^osc_dist_[0-9a-f]{12}\./,
  /^e2e-[0-9a-f]{8}\./,
  /^crash[a-z]*[0-9a-f]{8}\./,
  /^expr[0-9a-f]{8}\./,
  /^bench\d{13}\./,
  /^oscstartup(\d+)x\d{13}\./,
  /^osc-test-et-(\d+)-[0-9a-f]{8}\./,
  /^osc_ks_wf_(\d+)_[0-9a-f]{8}\./,
];
const UNIQUE_NAME = /^([a-z]+(?:-[a-z]+)*-[0-9a-z]{8}-[0-9a-f]{8})(?:\.dlq)?$/;
/**
 * BullMQ key prefixes owned by one run: messaging's BullMQ tests (`osc-test-…`), the crash tests, the
 * expression-functions test and bench/engine.
 */
const RUN_BULL_PREFIX =
  /^(?:osc-test-[0-9a-z]{8}-[0-9a-f]{8}|crash[a-z]*[0-9a-f]{8}|expr[0-9a-f]{8}|bench\d{13})$/;

export interface TestRun {
  /** What identifies the run: its queue prefix, or its whole queue name, or its own BullMQ prefix. */
  readonly id: string;
  /** The process that ran it, when the name says (createTestRuntime's names do). */
  readonly pid?: number;
}

/** The test or benchmark run a RabbitMQ queue belongs to, or null for any other queue. */
export function testRunOfQueue(name: string): TestRun | null {
  for (const re of RUN_PREFIXES) {
    const m = re.exec(name);
    if (m) return m[1] ? { id: m[0], pid: Number(m[1]) } : { id: m[0] };
  }
  const u = UNIQUE_NAME.exec(name)?.[1];
  return u ? { id: u } : null;
}

/**
 * The run a Redis key belongs to, or null: a BullMQ key `<bullPrefix>:<queue>:…` whose prefix is a
 * run's own, or whose prefix is `osc` (the default) and whose queue name carries a run prefix.
 */
export function testRunOfKey(key: string): TestRun | null {
  const colon = key.indexOf(':');
  if (colon <= 0) return null;
  const bull = key.slice(0, colon);
  const own = RUN_BULL_PREFIX.test(bull);
  if (!own && bull !== 'osc') return null;
  // The queue name's run prefix names the run as its RabbitMQ queues do (crash tests, bench/engine).
  const rest = key.slice(colon + 1);
  for (const re of RUN_PREFIXES) {
    const m = re.exec(rest);
    if (m) return m[1] ? { id: m[0], pid: Number(m[1]) } : { id: m[0] };
  }
  return own ? { id: `${bull}:` } : null;
}

/** Whether a process of this machine is alive (a run whose pid is gone is over). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

export interface QueueInfo {
  readonly name: string;
  readonly consumers: number;
}

/** Parses `rabbitmqctl list_queues -q --no-table-headers name consumers` (tab-separated). */
export function parseQueueListing(text: string): QueueInfo[] {
  const out: QueueInfo[] = [];
  for (const line of text.split('\n')) {
    const [name, consumers] = line.trim().split('\t');
    if (!name || consumers === undefined || !/^\d+$/.test(consumers.trim())) continue;
    out.push({ name, consumers: Number(consumers) });
  }
  return out;
}

/**
 * Runs still under way, which the sweep must leave alone: a queue of theirs has a consumer, a BullMQ
 * worker of theirs is connected to Redis (client name `<bullPrefix>:<base64 queue name>`), or the
 * process named in their prefix lives.
 */
export function liveRuns(queues: readonly QueueInfo[], redisClientNames: readonly string[]): Set<string> {
  const live = new Set<string>();
  for (const q of queues) {
    const run = testRunOfQueue(q.name);
    if (run && (q.consumers > 0 || (run.pid !== undefined && processAlive(run.pid)))) live.add(run.id);
  }
  for (const name of redisClientNames) {
    const colon = name.indexOf(':');
    if (colon <= 0) continue;
    const queue = Buffer.from(name.slice(colon + 1), 'base64').toString('utf8');
    const run = testRunOfKey(`${name.slice(0, colon)}:${queue}:`);
    if (run) live.add(run.id);
  }
  return live;
}

export interface SweepReport {
  queuesDeleted: number;
  /** Queues the broker refused to delete, with its reason. */
  queuesFailed: string[];
  queuesKept: number;
  keysDeleted: number;
  runsKept: string[];
}

/**
 * Deletes what earlier test and benchmark runs left behind: RabbitMQ queues of `queues` (the
 * broker's listing) that belong to a run, and Redis keys that belong to a run — except those of runs
 * still under way (`liveRuns`). Keys are deleted by SCAN + UNLINK, never a flush.
 */
export async function sweepTestLeftovers(opts: {
  amqpUrl: string;
  redisUrl: string;
  queues: readonly QueueInfo[] | null;
  /** Only count what would be deleted. */
  dryRun?: boolean;
  /** SCAN glob of the keys looked at; all by default (tests narrow it to their own). */
  keyMatch?: string;
}): Promise<SweepReport> {
  const redis = connectRedis(opts.redisUrl);
  try {
    const clients = await redisClientNames(redis);
    const live = liveRuns(opts.queues ?? [], clients);
    const doomed: string[] = [];
    let kept = 0;
    for (const q of opts.queues ?? []) {
      const run = testRunOfQueue(q.name);
      if (!run) continue;
      if (live.has(run.id)) kept += 1;
      else doomed.push(q.name);
    }
    const { deleted, failed } = opts.dryRun
      ? { deleted: doomed.length, failed: [] }
      : await deleteQueuesTolerant(opts.amqpUrl, doomed);
    const keysDeleted = await deleteKeysWith(
      redis,
      opts.keyMatch ?? '*',
      (key) => {
        const run = testRunOfKey(key);
        return run !== null && !live.has(run.id) && !(run.pid !== undefined && processAlive(run.pid));
      },
      opts.dryRun,
    );
    return {
      queuesDeleted: deleted,
      queuesFailed: failed,
      queuesKept: kept,
      keysDeleted,
      runsKept: [...live],
    };
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

async function redisClientNames(redis: Redis): Promise<string[]> {
  const list = String(await redis.client('LIST'));
  return list
    .split('\n')
    .map((line) => / name=(\S*)/.exec(line)?.[1] ?? '')
    .filter(Boolean);
}

/** Deletes queues one by one; a refusal (an exclusive queue of a live connection) skips that queue only. */
async function deleteQueuesTolerant(
  amqpUrl: string,
  names: readonly string[],
): Promise<{ deleted: number; failed: string[] }> {
  if (names.length === 0) return { deleted: 0, failed: [] };
  const connection = await amqplib.connect(amqpUrl, { timeout: 10_000 });
  connection.on('error', () => undefined);
  let channel: amqplib.Channel | null = null;
  let deleted = 0;
  const failed: string[] = [];
  try {
    for (const name of names) {
      if (!channel) {
        channel = await connection.createChannel();
        channel.on('error', () => undefined);
      }
      try {
        await channel.deleteQueue(name);
        deleted += 1;
      } catch (e) {
        failed.push(`${name}: ${(e as Error).message}`);
        channel = null;
      }
    }
  } finally {
    await connection.close().catch(() => undefined);
  }
  return { deleted, failed };
}

/** Whether a queue exists (passive declare on a channel of its own: a 404 closes only that channel). */
export async function queueExists(connection: amqplib.ChannelModel, name: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    await channel.checkQueue(name);
    await channel.close();
    return true;
  } catch (e) {
    if ((e as { code?: number }).code === 404) return false;
    throw e;
  }
}
