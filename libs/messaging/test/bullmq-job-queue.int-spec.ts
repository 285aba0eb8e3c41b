import IORedis from 'ioredis';
import { BullMqJobQueue, decodeJobId, encodeJobId } from '../src/bullmq-job-queue';
import { jobQueueContract } from './job-queue.contract';
import { describeWithServer, uniqueName } from './support';

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
