import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { OutboxWriter } from '@osc/messaging';
import { CLOCK, type Clock, DATA_SOURCE, OUTBOX_WRITER } from '@osc/platform';
import type { CronSchedulerConfig } from '../config';
import { EventTriggerFiring } from './event-trigger-firing';
import { NotificationListener } from './notification-listener';

export const EVENT_TRIGGER_LISTENER_CONFIG = Symbol('EVENT_TRIGGER_LISTENER_CONFIG');

/** Handled message ids are kept this long (a broker redelivers unacked messages within minutes). */
const DEDUPE_RETENTION_MS = 7 * 24 * 3600_000;
const PRUNE_EVERY_MS = 3600_000;

/**
 * Runs the event triggers' notification listener when a broker is configured (always in distributed
 * mode; in embedded mode only with AMQP_URL or EVENT_TRIGGERS_AMQP_URL). Without one, event triggers
 * are stored by the API but nothing fires them.
 */
@Injectable()
export class EventTriggerListenerRunner implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('event-triggers');
  readonly firing: EventTriggerFiring;
  readonly listener: NotificationListener | null;
  private pruneTimer?: NodeJS.Timeout;

  constructor(
    @Inject(DATA_SOURCE) db: DataSource,
    @Inject(OUTBOX_WRITER) outbox: OutboxWriter,
    @Inject(CLOCK) clock: Clock,
    @Inject(EVENT_TRIGGER_LISTENER_CONFIG) config: CronSchedulerConfig,
  ) {
    const log = (level: 'info' | 'warn' | 'error', message: string) =>
      this.logger[level === 'info' ? 'log' : level](message);
    this.firing = new EventTriggerFiring(db, outbox, clock, { log });
    const et = config.eventTriggers;
    this.listener = et
      ? new NotificationListener(db, this.firing, {
          amqpUrl: et.amqpUrl,
          queuePrefix: et.queuePrefix,
          syncIntervalMs: et.syncIntervalMs,
          exchangeDurable: et.exchangeDurable,
          prefetch: 20,
          retryDelayMs: 1000,
          log,
        })
      : null;
  }

  onApplicationBootstrap(): void {
    if (!this.listener) {
      this.logger.log('no broker configured (AMQP_URL): event triggers are stored but do not fire');
      return;
    }
    // Not awaited: a broker that is down at start must not hold the app back (the connection retries).
    this.listener.start().catch((err: Error) => this.logger.error(`notification listener: ${err.message}`));
    const prune = () =>
      this.firing
        .prune(DEDUPE_RETENTION_MS)
        .catch((err: Error) => this.logger.warn(`pruning handled notifications: ${err.message}`));
    void prune();
    this.pruneTimer = setInterval(() => void prune(), PRUNE_EVERY_MS);
    this.pruneTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    await this.listener?.stop();
  }
}
