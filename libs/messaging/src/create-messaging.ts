import { BullMqJobQueue } from './bullmq-job-queue';
import type { CommandBus } from './command-bus';
import { InProcessCommandBus } from './in-process-command-bus';
import { InProcessJobQueue } from './in-process-job-queue';
import type { JobQueue } from './job-queue';
import type { MessagingLogger } from './logger';
import { RabbitMqCommandBus } from './rabbitmq-command-bus';

export type MessagingConfig =
  | { mode: 'embedded' }
  | {
      mode: 'distributed';
      amqpUrl: string;
      redisUrl: string;
      redisPrefix?: string;
      /** Tests only: RabbitMQ queues expire after this long unused (see `RabbitMqCommandBusOptions`). */
      queueExpiresMs?: number;
      logger?: MessagingLogger;
    };

export interface Messaging {
  bus: CommandBus;
  jobs: JobQueue;
  /** Closes the bus and the job queue (waiting for running handlers). */
  close(): Promise<void>;
}

/** The command bus and job queue for a run mode: in-process (embedded) or RabbitMQ + BullMQ (distributed). */
export function createMessaging(config: MessagingConfig): Messaging {
  const bus: CommandBus =
    config.mode === 'embedded'
      ? new InProcessCommandBus()
      : new RabbitMqCommandBus({ url: config.amqpUrl, logger: config.logger, queueExpiresMs: config.queueExpiresMs });
  const jobs: JobQueue =
    config.mode === 'embedded'
      ? new InProcessJobQueue()
      : new BullMqJobQueue({ url: config.redisUrl, prefix: config.redisPrefix, logger: config.logger });
  return {
    bus,
    jobs,
    async close() {
      await Promise.all([bus.close(), jobs.close()]);
    },
  };
}
