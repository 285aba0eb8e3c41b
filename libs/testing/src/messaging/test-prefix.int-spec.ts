import { randomBytes } from 'node:crypto';
import * as amqplib from 'amqplib';
import { ACTION_JOB_QUEUE, ENGINE_COMMAND_QUEUE } from '@osc/contracts';
import { BullMqJobQueue, RabbitMqCommandBus } from '@osc/messaging';
import { createTestRuntime, testServers } from '../runtime/test-runtime';
import { queueExists, sweepTestLeftovers } from './leftovers';
import { TEST_QUEUE_EXPIRES_MS, purgeTestPrefix, scanKeys } from './test-prefix';

const quiet = { warn: () => undefined, error: () => undefined };
const { amqpUrl, redisUrl } = testServers();

/** Queues and BullMQ keys of test runs must not outlive them (they piled up until RabbitMQ stalled). */
describe('test runs leave no queues or BullMQ keys behind (RabbitMQ, Redis, PostgreSQL)', () => {
  let admin: amqplib.ChannelModel;
  beforeAll(async () => {
    admin = await amqplib.connect(amqpUrl);
    admin.on('error', () => undefined);
  });
  afterAll(async () => {
    await admin?.close();
  });

  it('createTestRuntime (postgres): after cleanup no queue and no Redis key with the run prefix remains', async () => {
    const test = await createTestRuntime('postgres', []);
    const prefix = test.queuePrefix!;
    expect(prefix).toMatch(/^osc_e2e_\d+_[0-9a-f]{12}\.$/);
    const { bus, jobs } = test.runtime;
    try {
      // What the apps do: consume and publish commands, process and add jobs.
      const got: string[] = [];
      await bus.consume(ENGINE_COMMAND_QUEUE, async (m) => void got.push(m.id));
      await bus.publish(ENGINE_COMMAND_QUEUE, { id: 'c1', type: 't', payload: null });
      const ran: string[] = [];
      await jobs.process(ACTION_JOB_QUEUE, async (j) => void ran.push(j.id));
      await jobs.add(ACTION_JOB_QUEUE, { id: 'j1', name: 'n', data: {} });
      await waitUntil(() => got.length === 1 && ran.length === 1);
      expect(await queueExists(admin, `${prefix}${ENGINE_COMMAND_QUEUE}`)).toBe(true);
      expect(await queueExists(admin, `${prefix}${ENGINE_COMMAND_QUEUE}.dlq`)).toBe(true);
      expect((await scanKeys(redisUrl, `osc:${prefix}*`)).length).toBeGreaterThan(0);
    } finally {
      await test.cleanup();
    }
    expect(await queueExists(admin, `${prefix}${ENGINE_COMMAND_QUEUE}`)).toBe(false);
    expect(await queueExists(admin, `${prefix}${ENGINE_COMMAND_QUEUE}.dlq`)).toBe(false);
    expect(await scanKeys(redisUrl, `osc:${prefix}*`)).toEqual([]);
  }, 60_000);

  it('purgeTestPrefix deletes the queues and keys of a run whose processes were killed, and refuses an empty prefix', async () => {
    const queuePrefix = `crash${randomBytes(4).toString('hex')}.`;
    const bullPrefix = `crash${randomBytes(4).toString('hex')}`;
    const other = `crash${randomBytes(4).toString('hex')}.`;
    await leaveBehind(queuePrefix, bullPrefix);
    await leaveBehind(other, bullPrefix);
    await expect(purgeTestPrefix({ queuePrefix: '' })).rejects.toThrow(/non-empty/);
    await purgeTestPrefix({ queuePrefix, bullPrefix });
    expect(await queueExists(admin, `${queuePrefix}${ENGINE_COMMAND_QUEUE}`)).toBe(false);
    expect(await queueExists(admin, `${queuePrefix}${ENGINE_COMMAND_QUEUE}.dlq`)).toBe(false);
    expect(await scanKeys(redisUrl, `${bullPrefix}:${queuePrefix}*`)).toEqual([]);
    // Another run's queues and keys (same BullMQ prefix, other queue prefix) are untouched.
    expect(await queueExists(admin, `${other}${ENGINE_COMMAND_QUEUE}`)).toBe(true);
    expect((await scanKeys(redisUrl, `${bullPrefix}:${other}*`)).length).toBeGreaterThan(0);
    await purgeTestPrefix({ queuePrefix: other, bullPrefix });
    expect(await queueExists(admin, `${other}${ENGINE_COMMAND_QUEUE}`)).toBe(false);
    expect(await scanKeys(redisUrl, `${bullPrefix}:*`)).toEqual([]);
  }, 60_000);

  it('the CI sweep deletes the leftovers of finished runs and keeps those of a run under way', async () => {
    const dead = `crash${randomBytes(4).toString('hex')}.`;
    const deadBull = `crash${randomBytes(4).toString('hex')}`;
    await leaveBehind(dead, deadBull);
    const alive = `crash${randomBytes(4).toString('hex')}.`;
    const aliveBus = new RabbitMqCommandBus({
      url: amqpUrl,
      logger: quiet,
      queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
    });
    const unrelated = `h1-not-a-test-${randomBytes(4).toString('hex')}`;
    try {
      await aliveBus.consume(`${alive}${ENGINE_COMMAND_QUEUE}`, async () => undefined);
      await (await admin.createChannel()).assertQueue(unrelated, { durable: false, autoDelete: false });
      // The broker's listing as rabbitmqctl gives it, and the keys, restricted to this test's own:
      // test files running alongside must not lose theirs.
      const report = await sweepTestLeftovers({
        amqpUrl,
        redisUrl,
        keyMatch: `${deadBull}:*`,
        queues: [
          { name: `${dead}${ENGINE_COMMAND_QUEUE}`, consumers: 0 },
          { name: `${dead}${ENGINE_COMMAND_QUEUE}.dlq`, consumers: 0 },
          { name: `${alive}${ENGINE_COMMAND_QUEUE}`, consumers: 1 },
          { name: `${alive}${ENGINE_COMMAND_QUEUE}.dlq`, consumers: 0 },
          { name: unrelated, consumers: 0 },
        ],
      });
      expect(report.queuesDeleted).toBe(2);
      expect(report.queuesFailed).toEqual([]);
      expect(report.runsKept).toContain(alive);
      expect(report.keysDeleted).toBeGreaterThan(0);
      expect(await queueExists(admin, `${dead}${ENGINE_COMMAND_QUEUE}`)).toBe(false);
      expect(await queueExists(admin, `${dead}${ENGINE_COMMAND_QUEUE}.dlq`)).toBe(false);
      expect(await scanKeys(redisUrl, `${deadBull}:*`)).toEqual([]);
      expect(await queueExists(admin, `${alive}${ENGINE_COMMAND_QUEUE}`)).toBe(true);
      expect(await queueExists(admin, `${alive}${ENGINE_COMMAND_QUEUE}.dlq`)).toBe(true);
      expect(await queueExists(admin, unrelated)).toBe(true);
    } finally {
      await aliveBus.close();
      await purgeTestPrefix({ queuePrefix: alive });
      await purgeTestPrefix({ queuePrefix: dead, bullPrefix: deadBull });
      const ch = await admin.createChannel();
      await ch.deleteQueue(unrelated);
      await ch.close();
    }
  }, 60_000);
});

/** A run killed mid-test: its queues (with a message) and BullMQ keys stay, nothing of it is closed cleanly. */
async function leaveBehind(queuePrefix: string, bullPrefix: string): Promise<void> {
  const bus = new RabbitMqCommandBus({ url: amqpUrl, logger: quiet, queueExpiresMs: TEST_QUEUE_EXPIRES_MS });
  const jobs = new BullMqJobQueue({ url: redisUrl, prefix: bullPrefix, logger: quiet });
  try {
    await bus.publish(`${queuePrefix}${ENGINE_COMMAND_QUEUE}`, { id: 'left', type: 't', payload: null });
    await jobs.add(`${queuePrefix}${ACTION_JOB_QUEUE}`, { id: 'left', name: 'n', data: {}, delayMs: 60_000 });
  } finally {
    await bus.close();
    await jobs.close();
  }
}

async function waitUntil(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
