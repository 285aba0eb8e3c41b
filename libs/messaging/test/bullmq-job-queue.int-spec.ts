import { fork } from 'node:child_process';
import path from 'node:path';
import IORedis from 'ioredis';
import { BullMqJobQueue, decodeJobId, encodeJobId } from '../src/bullmq-job-queue';
import { jobQueueContract } from './job-queue.contract';
import type { Job } from '../src/job-queue';
import { describeWithServer, uniqueName, waitFor } from './support';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const quiet = { warn: () => undefined, error: () => undefined };

describeWithServer('BullMqJobQueue (contract)', { name: 'Redis', host: '127.0.0.1', port: 6379 }, () => {
  jest.setTimeout(60_000);
  const prefix = uniqueName('osc-test');
  let redis: IORedis;

  beforeAll(() => {
    redis = new IORedis(REDIS_URL);
  });
  afterAll(async () => {
    await redis.quit();
  });

  jobQueueContract({
    createQueue: async () => new BullMqJobQueue({ url: REDIS_URL, prefix, logger: quiet }),
    cleanup: async (queues) => {
      for (const q of queues) {
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:${q}:*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      }
    },
  });
});

describeWithServer('BullMqJobQueue worker crash', { name: 'Redis', host: '127.0.0.1', port: 6379 }, () => {
  jest.setTimeout(60_000);

  it('runs a job again when the worker process running it is killed', async () => {
    const prefix = uniqueName('osc-test');
    const queue = uniqueName('crash');
    const child = fork(path.join(__dirname, 'bullmq-worker-child.ts'), [REDIS_URL, prefix, queue], {
      execArgv: ['-r', '@swc-node/register'],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const messages: Array<{ ready?: boolean; error?: string; job?: Job }> = [];
    child.on('message', (m) => messages.push(m as (typeof messages)[number]));
    const options = { url: REDIS_URL, prefix, lockDurationMs: 1000, stalledIntervalMs: 300, logger: quiet };
    const jobs = new BullMqJobQueue(options);
    const redis = new IORedis(REDIS_URL);
    try {
      await waitFor('child worker ready', () => messages.some((m) => m.ready || m.error), 20_000);
      expect(messages.find((m) => m.error)).toBeUndefined();
      await jobs.add(queue, { id: 'run:1', name: 'action.run', data: { n: 1 }, attempts: 2 });
      await waitFor('child took the job', () => messages.some((m) => m.job), 20_000);
      expect(messages.find((m) => m.job)!.job).toEqual({
        id: 'run:1',
        name: 'action.run',
        data: { n: 1 },
        attempt: 1,
      });
      child.kill('SIGKILL');
      await exited;

      const runs: Job[] = [];
      await jobs.process(queue, async (job) => void runs.push(job));
      await waitFor('the job runs again on the survivor', () => runs.length === 1, 20_000);
      expect(runs[0]).toMatchObject({ id: 'run:1', name: 'action.run', data: { n: 1 } });
      expect(runs[0]!.attempt).toBeGreaterThanOrEqual(2);
    } finally {
      child.kill('SIGKILL');
      await jobs.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    }
  });
});

describe('BullMQ job id escaping', () => {
  it.each(['a', 'a:b', '%3A', 'x%:y', '123', '0', '::', 'k.foo'])(
    'round-trips %s without ":" or integer form',
    (id) => {
      const stored = encodeJobId(id);
      expect(stored).not.toContain(':');
      expect(`${parseInt(stored, 10)}`).not.toBe(stored);
      expect(decodeJobId(stored)).toBe(id);
    },
  );
  it('keeps distinct ids distinct', () => {
    expect(encodeJobId('a:b')).not.toBe(encodeJobId('a%3Ab'));
  });
});
