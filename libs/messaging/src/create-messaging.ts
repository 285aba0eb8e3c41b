import type { DataSource } from 'typeorm';
import { BullMqJobQueue } from './bullmq-job-queue';
import type { CommandBus } from './command-bus';
import { InProcessCommandBus } from './in-process-command-bus';
import { InProcessJobQueue } from './in-process-job-queue';
import type { JobQueue } from './job-queue';
import { MessageJournal } from './journal/message-journal';
import type { MessagingLogger } from './logger';
import { RabbitMqCommandBus } from './rabbitmq-command-bus';

export type MessagingConfig =
  | {
      mode: 'embedded';
      /**
       * The embedded database (with `messagingMigrations` applied): the bus and queue journal every
       * message and job in it, so unfinished work survives a restart. Without it they are memory only.
       */
      journal?: DataSource;
      logger?: MessagingLogger;
    }
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
  /**
   * Brings back the messages and jobs a previous process journaled and never finished (embedded
   * mode with a journal; otherwise nothing to do). Call once, before anything is published.
   */
  restore(): Promise<{ messages: number; jobs: number }>;
  /** Closes the bus and the job queue (waiting for running handlers). */
  close(): Promise<void>;
}

/** The command bus and job queue for a run mode: in-process (embedded) or RabbitMQ + BullMQ (distributed). */
export function createMessaging(config: MessagingConfig): Messaging {
  if (config.mode === 'embedded') {
    const journal = config.journal ? new MessageJournal(config.journal, config.logger) : undefined;
    const bus = new InProcessCommandBus({ journal });
    const jobs = new InProcessJobQueue({ journal });
    return {
      bus,
      jobs,
      restore: async () => ({ messages: await bus.restore(), jobs: await jobs.restore() }),
      async close() {
        await Promise.all([bus.close(), jobs.close()]);
      },
    };
  }
  const bus = new RabbitMqCommandBus({
    url: config.amqpUrl,
    logger: config.logger,
    queueExpiresMs: config.queueExpiresMs,
  });
  const jobs = new BullMqJobQueue({
    url: config.redisUrl,
    prefix: config.redisPrefix,
    logger: config.logger,
  });
  return {
    bus,
    jobs,
    restore: async () => ({ messages: 0, jobs: 0 }),
    async close() {
      await Promise.all([bus.close(), jobs.close()]);
    },
  };
}
