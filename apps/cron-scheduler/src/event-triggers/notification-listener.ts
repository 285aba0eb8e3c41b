import amqp, { type AmqpConnectionManager, type ChannelWrapper } from 'amqp-connection-manager';
import { amqpConnectionOptions } from '@osc/messaging';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { DataSource } from 'typeorm';
import { eventTriggerSources } from '@osc/workflow-persistence';
import type { EventTriggerFiring } from './event-trigger-firing';
import { NOTIFICATION_PRIORITIES, parseNotification, topicOfRoutingKey } from './notification';

export interface NotificationListenerOptions {
  /** amqp://user:pass@host:port/vhost of the broker the notifying services publish to. */
  readonly amqpUrl: string;
  /** Prefix of our queue names (QUEUE_PREFIX). */
  readonly queuePrefix: string;
  /** How often the set of (exchange, topic) pairs with triggers is read again. */
  readonly syncIntervalMs: number;
  /** Declared as oslo.messaging declares notification exchanges (`amqp_durable_queues`, default false). */
  readonly exchangeDurable: boolean;
  /** Unacknowledged notifications per exchange queue. */
  readonly prefetch: number;
  /** Wait before a notification whose handling failed (database down) is delivered again. */
  readonly retryDelayMs: number;
  readonly log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Called after a notification was handled and acked (tests, metrics). */
  readonly onHandled?: (info: {
    exchange: string;
    topic: string;
    messageId: string;
    executionIds: readonly string[];
    firstTime: boolean;
  }) => void;
}

interface ExchangeState {
  readonly queue: string;
  readonly topics: Set<string>;
}

/**
 * Listens for oslo.messaging notifications for every (exchange, topic) some event trigger names, the
 * way Mistral's event engine does: per exchange one durable queue shared by all replicas (each
 * notification goes to one of them), bound with `<topic>.<priority>` for the five priorities. A
 * notification is acked only after its executions are committed; a replica dying before the ack
 * makes the broker deliver it again, and the recorded message id stops it from firing twice.
 * New triggers' topics are picked up within `syncIntervalMs`.
 */
export class NotificationListener {
  private connection?: AmqpConnectionManager;
  private wrapper?: ChannelWrapper;
  private readonly exchanges = new Map<string, ExchangeState>();
  private timer?: NodeJS.Timeout;
  private syncing?: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly db: DataSource,
    private readonly firing: EventTriggerFiring,
    private readonly options: NotificationListenerOptions,
  ) {}

  async start(): Promise<void> {
    this.connection = amqp.connect([this.options.amqpUrl], {
      heartbeatIntervalInSeconds: 5,
      reconnectTimeInSeconds: 1,
      connectionOptions: amqpConnectionOptions('event-trigger-listener'),
    });
    this.connection.on('disconnect', ({ err }) =>
      this.options.log?.('warn', `notification listener disconnected: ${err?.message ?? 'closed'}`),
    );
    this.wrapper = this.connection.createChannel({ json: false, confirm: false });
    await this.wrapper.waitForConnect();
    // A database hiccup now must not stop the listener: the next sync picks the triggers up.
    await this.sync().catch((err: Error) =>
      this.options.log?.('warn', `event trigger sources not read: ${err.message}`),
    );
    this.schedule();
  }

  /** Reads the trigger sources now and adds queues and bindings for new ones (tests call it directly). */
  sync(): Promise<void> {
    this.syncing ??= this.doSync().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.syncing?.catch(() => undefined);
    await this.wrapper?.cancelAll().catch(() => undefined);
    await Promise.allSettled([...this.inFlight]);
    await this.wrapper?.close().catch(() => undefined);
    await this.connection?.close().catch(() => undefined);
  }

  /** Name of the queue that collects `exchange`'s notifications for all replicas. */
  queueOf(exchange: string): string {
    return `${this.options.queuePrefix}event-triggers.${exchange}`;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sync()
        .catch((err: Error) => this.options.log?.('warn', `event trigger sources not read: ${err.message}`))
        .finally(() => this.schedule());
    }, this.options.syncIntervalMs);
  }

  private async doSync(): Promise<void> {
    const wrapper = this.wrapper;
    if (!wrapper) return;
    const sources = await eventTriggerSources(this.db);
    for (const { exchange, topic } of sources) {
      if (this.stopped) return;
      let state = this.exchanges.get(exchange);
      if (!state) {
        state = { queue: this.queueOf(exchange), topics: new Set() };
        this.exchanges.set(exchange, state);
        await this.addExchange(wrapper, exchange, state);
      }
      if (!state.topics.has(topic)) {
        state.topics.add(topic);
        const s = state;
        await wrapper.addSetup((ch: Channel) => this.bindTopic(ch, exchange, s.queue, topic));
      }
    }
  }

  private async bindTopic(ch: Channel, exchange: string, queue: string, topic: string): Promise<void> {
    for (const priority of NOTIFICATION_PRIORITIES)
      await ch.bindQueue(queue, exchange, `${topic}.${priority}`);
  }

  private async addExchange(wrapper: ChannelWrapper, exchange: string, state: ExchangeState): Promise<void> {
    await wrapper.addSetup(async (ch: Channel) => {
      await ch.assertExchange(exchange, 'topic', {
        durable: this.options.exchangeDurable,
        autoDelete: false,
      });
      await ch.assertQueue(state.queue, { durable: true });
      for (const topic of state.topics) await this.bindTopic(ch, exchange, state.queue, topic);
      await ch.prefetch(this.options.prefetch);
      await ch.consume(state.queue, (msg) => {
        if (msg) this.track(this.onMessage(ch, exchange, msg));
      });
    });
    this.options.log?.('info', `listening for notifications on exchange ${exchange} (queue ${state.queue})`);
  }

  private track(p: Promise<void>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async onMessage(ch: Channel, exchange: string, msg: ConsumeMessage): Promise<void> {
    const topic = topicOfRoutingKey(msg.fields.routingKey);
    const parsed = parseNotification(msg.content);
    if (topic === null || 'error' in parsed) {
      this.options.log?.(
        'warn',
        `dropped a message on ${exchange}/${msg.fields.routingKey}: ${topic === null ? 'not a notification routing key' : (parsed as { error: string }).error}`,
      );
      safely(() => ch.ack(msg));
      return;
    }
    try {
      const result = await this.firing.handle(exchange, topic, parsed);
      safely(() => ch.ack(msg));
      this.options.onHandled?.({ exchange, topic, messageId: parsed.messageId, ...result });
    } catch (err) {
      this.options.log?.(
        'error',
        `notification ${parsed.messageId} (${parsed.eventType}) not handled, will be redelivered: ${(err as Error).message}`,
      );
      await new Promise((r) => setTimeout(r, this.options.retryDelayMs));
      safely(() => ch.nack(msg, false, true));
    }
  }
}

/** Acks on a channel that closed meanwhile throw; the broker redelivers and the message id dedupes. */
const safely = (f: () => void): void => {
  try {
    f();
  } catch {
    // channel gone: the message will come again
  }
};
