import { createMessaging } from './create-messaging';
import { InProcessCommandBus } from './in-process-command-bus';
import { InProcessJobQueue } from './in-process-job-queue';
import { RabbitMqCommandBus } from './rabbitmq-command-bus';
import { BullMqJobQueue } from './bullmq-job-queue';
import { describeWithServer } from '../test/support';

describe('createMessaging (embedded)', () => {
  it('builds in-process adapters that answer ping until closed', async () => {
    const m = createMessaging({ mode: 'embedded' });
    expect(m.bus).toBeInstanceOf(InProcessCommandBus);
    expect(m.jobs).toBeInstanceOf(InProcessJobQueue);
    expect(await m.bus.ping()).toBe(true);
    expect(await m.jobs.ping()).toBe(true);
    await m.close();
    expect(await m.bus.ping()).toBe(false);
    expect(await m.jobs.ping()).toBe(false);
  });
});

describeWithServer(
  'createMessaging (distributed)',
  { name: 'RabbitMQ', host: '127.0.0.1', port: 5672 },
  () => {
    it('builds RabbitMQ and BullMQ adapters that reach their servers', async () => {
      const quiet = { warn: () => undefined, error: () => undefined };
      const m = createMessaging({
        mode: 'distributed',
        amqpUrl: process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672',
        redisUrl: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
        logger: quiet,
      });
      expect(m.bus).toBeInstanceOf(RabbitMqCommandBus);
      expect(m.jobs).toBeInstanceOf(BullMqJobQueue);
      const deadline = Date.now() + 10_000;
      while (!(await m.bus.ping()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(await m.bus.ping()).toBe(true);
      expect(await m.jobs.ping()).toBe(true);
      await m.close();
      expect(await m.bus.ping()).toBe(false);
    });

    it('reports a broker that does not answer as not ready', async () => {
      const quiet = { warn: () => undefined, error: () => undefined };
      const m = createMessaging({
        mode: 'distributed',
        amqpUrl: 'amqp://guest:guest@127.0.0.1:1',
        redisUrl: 'redis://127.0.0.1:1',
        logger: quiet,
      });
      await new Promise((r) => setTimeout(r, 200));
      expect(await m.bus.ping()).toBe(false);
      expect(await m.jobs.ping()).toBe(false);
      await m.close();
    });
  },
);
