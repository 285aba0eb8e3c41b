import * as amqplib from 'amqplib';
import IORedis, { type Redis } from 'ioredis';
import { BLOCK_STORAGE_SCHEDULER_QUEUE, ENGINE_COMMAND_QUEUE } from '@osc/contracts';
import { testServers } from '../runtime/test-runtime';

/**
 * `x-expires` of the RabbitMQ queues of test and benchmark buses (`queueExpiresMs`): a queue nobody
 * consumed or declared for 30 minutes is deleted by the broker, so a run killed before its teardown
 * leaves nothing behind for long. Longer than any test file or benchmark runs.
 */
export const TEST_QUEUE_EXPIRES_MS = 30 * 60_000;

/** The product's RabbitMQ command-bus queues (without prefix); each has a `.dlq` beside it. BullMQ queues live in Redis. */
export const BUS_QUEUES: readonly string[] = [ENGINE_COMMAND_QUEUE, BLOCK_STORAGE_SCHEDULER_QUEUE];

export interface TestPrefix {
  /** The run's queue-name prefix (`QUEUE_PREFIX`), e.g. `osc_e2e_123_ab12cd34ef56.`. Never empty. */
  queuePrefix: string;
  /** The run's BullMQ key prefix; `osc` (BullMqJobQueue's default) unless the run set its own. */
  bullPrefix?: string;
  /** Command-bus queues (without prefix) the run may have declared; the product's `BUS_QUEUES` by default. */
  queues?: readonly string[];
  amqpUrl?: string;
  redisUrl?: string;
}

export interface PurgeResult {
  /** Queue names deleted (a queue that did not exist counts too: RabbitMQ deletes idempotently). */
  queues: string[];
  /** Redis keys deleted. */
  keys: number;
}

/**
 * Deletes what a test or benchmark run left on the shared servers under its prefix: the RabbitMQ
 * queues `<queuePrefix><q>` and `<queuePrefix><q>.dlq` of every bus queue, and every BullMQ key
 * `<bullPrefix>:<queuePrefix>…` in Redis (SCAN + UNLINK, never a flush: other things share Redis).
 * Call it after everything that used the prefix is closed or dead — a live consumer would declare
 * its queue again. Processes killed mid-test do not matter: this runs in the test's own teardown.
 */
export async function purgeTestPrefix(target: TestPrefix): Promise<PurgeResult> {
  const { queuePrefix } = target;
  if (!queuePrefix)
    throw new Error(
      'purgeTestPrefix needs a non-empty queue prefix (an empty one would name production queues)',
    );
  const servers = testServers();
  const names = (target.queues ?? BUS_QUEUES).flatMap((q) => [
    `${queuePrefix}${q}`,
    `${queuePrefix}${q}.dlq`,
  ]);
  await deleteQueues(target.amqpUrl ?? servers.amqpUrl, names);
  const keys = await deleteKeys(
    target.redisUrl ?? servers.redisUrl,
    `${globEscape(`${target.bullPrefix ?? 'osc'}:${queuePrefix}`)}*`,
  );
  return { queues: names, keys };
}

/** Deletes queues by name over AMQP (one channel; a failure names the queue). */
export async function deleteQueues(amqpUrl: string, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const connection = await amqplib.connect(amqpUrl, { timeout: 10_000 });
  connection.on('error', () => undefined);
  try {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    for (const name of names) {
      try {
        await channel.deleteQueue(name);
      } catch (e) {
        throw new Error(`deleting queue ${name} failed: ${(e as Error).message}`, { cause: e });
      }
    }
    await channel.close();
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Deletes every Redis key matching a SCAN glob, in batches; returns how many. */
export async function deleteKeys(
  redisUrl: string,
  match: string,
  filter: (key: string) => boolean = () => true,
): Promise<number> {
  const redis = connectRedis(redisUrl);
  try {
    return await deleteKeysWith(redis, match, filter);
  } finally {
    await redis.quit().catch(() => undefined);
  }
}

/** `dryRun`: only counts the matching keys. */
export async function deleteKeysWith(
  redis: Redis,
  match: string,
  filter: (key: string) => boolean = () => true,
  dryRun = false,
): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    cursor = next;
    const mine = keys.filter(filter);
    if (mine.length > 0) deleted += dryRun ? mine.length : await redis.unlink(...mine);
  } while (cursor !== '0');
  return deleted;
}

/** Keys matching a SCAN glob (for assertions). */
export async function scanKeys(redisUrl: string, match: string): Promise<string[]> {
  const redis = connectRedis(redisUrl);
  const found: string[] = [];
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      found.push(...keys);
    } while (cursor !== '0');
  } finally {
    await redis.quit().catch(() => undefined);
  }
  return found;
}

export function connectRedis(url: string): Redis {
  const redis = new IORedis(url, {
    maxRetriesPerRequest: 1,
    connectTimeout: 10_000,
    enableOfflineQueue: true,
  });
  redis.on('error', () => undefined); // reported through the failing command
  return redis;
}

/** Escapes Redis glob characters, so a prefix matches only itself. */
export const globEscape = (s: string): string => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
