import amqp, {
  type AmqpConnectionManager,
  type AmqpConnectionManagerOptions,
  type ChannelWrapper,
} from 'amqp-connection-manager';
import type { Channel, ConsumeMessage, MessageProperties } from 'amqplib';
import { InternalError, TransientError } from '@osc/errors';
import {
  type CommandBus,
  type CommandHandler,
  type CommandMessage,
  type ConsumeOptions,
  type DeadLetterReason,
  type Subscription,
  assertQueueName,
  deadLetterQueueOf,
  decodeCommand,
  encodeCommand,
  isDeadLetterQueue,
  normalizeConsumeOptions,
  POISON_TYPE,
  retryDelay,
} from './command-bus';
import { type MessagingLogger, stderrLogger } from './logger';
import { describeError, isRetryableError } from './retryable';

export interface RabbitMqCommandBusOptions {
  /** amqp://user:pass@host:port/vhost; several for a cluster (tried in turn). */
  url: string | string[];
  /** Default 5 s: a dead TCP peer is noticed within ~2 heartbeats. */
  heartbeatIntervalInSeconds?: number;
  /** Wait between reconnect attempts. Default 1 s. */
  reconnectTimeInSeconds?: number;
  /** A publish not confirmed within this time fails with `TransientError`. Default 30 s. */
  publishTimeoutMs?: number;
  /** Shown in the broker's connection list. */
  connectionName?: string;
  /**
   * Tests and benchmarks only; production never sets it. Declares every queue with `x-expires`, so
   * the broker deletes a queue unused (no consumer, no redeclaration) for this long: the queues of a
   * killed test run do not pile up. Every declarer of a queue must pass the same value (RabbitMQ
   * refuses a redeclaration with other arguments).
   */
  queueExpiresMs?: number;
  logger?: MessagingLogger;
}

interface ConsumerState {
  queue: string;
  handler: CommandHandler;
  prefetch: number;
  maxDeliveries: number;
  retryDelayMs: number;
  wrapper?: ChannelWrapper;
  /** The channel currently delivering to us and our tag on it; replaced after every reconnect. */
  current?: { channel: Channel; consumerTag: string };
  cancelled: boolean;
  inFlight: number;
  idleWaiters: Array<() => void>;
}

/**
 * Socket options for every connection to the broker, named `connectionName` in its management view.
 * Nagle's algorithm is off (amqplib leaves it on): with it, a publish waited for the broker's delayed
 * ACK of the previous segment, and a quorum queue's confirm and delivery took ~40 ms instead of
 * ~1 ms on an idle loopback.
 */
export const amqpConnectionOptions = (
  connectionName?: string,
): NonNullable<AmqpConnectionManagerOptions['connectionOptions']> => ({
  noDelay: true,
  ...(connectionName ? { clientProperties: { connection_name: connectionName } } : {}),
});

const QUORUM = { 'x-queue-type': 'quorum' } as const;

/**
 * Command bus on RabbitMQ through amqp-connection-manager (reconnect with channel recovery).
 *
 * Topology per queue `q`: a durable quorum queue `q` whose dead-letter exchange is the default
 * exchange with routing key `q.dlq`, and a durable quorum queue `q.dlq`. Quorum queues count
 * deliveries themselves (`x-delivery-count`, incremented on nack-requeue and on a consumer's
 * connection loss), so crash loops are bounded too, not only handler failures.
 *
 * Publishing goes through one confirm channel; a batch is written without waiting and then all its
 * confirms are awaited together (the broker confirms in windows), which is ~10× faster than
 * confirming message by message. Every consumer has its own channel (its own prefetch); its setup
 * runs again after a reconnect, so consumers come back by themselves. Dead-lettering republishes
 * the message to `q.dlq` with the reason in its headers, then acks; if that publish fails the
 * message is nacked without requeue and the broker's dead-letter routing takes it.
 */
export class RabbitMqCommandBus implements CommandBus {
  private readonly connection: AmqpConnectionManager;
  private readonly publisher: ChannelWrapper;
  private readonly declared = new Map<string, Promise<void>>();
  private readonly consumers = new Set<ConsumerState>();
  private readonly logger: MessagingLogger;
  private readonly reconnectDelayMs: number;
  private readonly connectTimeoutMs: number;
  private readonly extraArguments: Readonly<Record<string, number>>;
  private publisherChannel?: Channel;
  private closed = false;

  constructor(options: RabbitMqCommandBusOptions) {
    this.logger = options.logger ?? stderrLogger;
    this.reconnectDelayMs = (options.reconnectTimeInSeconds ?? 1) * 1000;
    this.connectTimeoutMs = options.publishTimeoutMs ?? 30_000;
    const expires = options.queueExpiresMs;
    if (expires !== undefined && !(Number.isInteger(expires) && expires > 0)) {
      throw new TypeError(`queueExpiresMs must be a positive integer, got ${expires}`);
    }
    this.extraArguments = expires === undefined ? {} : { 'x-expires': expires };
    const urls = Array.isArray(options.url) ? options.url : [options.url];
    this.connection = amqp.connect(urls, {
      heartbeatIntervalInSeconds: options.heartbeatIntervalInSeconds ?? 5,
      reconnectTimeInSeconds: options.reconnectTimeInSeconds ?? 1,
      connectionOptions: amqpConnectionOptions(options.connectionName),
    });
    this.connection.on('disconnect', ({ err }: { err?: Error }) => {
      if (!this.closed) this.logger.warn('amqp connection lost; reconnecting', { error: err?.message });
    });
    // Queues may have gone with the broker (or its node): declare again on the new connection.
    this.connection.on('connect', () => this.declared.clear());
    this.connection.on('connectFailed', ({ err }: { err?: Error }) => {
      if (!this.closed) this.logger.warn('amqp connect failed; retrying', { error: err?.message });
    });
    this.publisher = this.connection.createChannel({
      name: 'publisher',
      confirm: true,
      publishTimeout: options.publishTimeoutMs ?? 30_000,
      setup: async (channel: Channel) => {
        this.publisherChannel = channel;
        // Without a listener a channel error would be rethrown inside amqplib and take the connection down.
        channel.on('error', (err: Error) =>
          this.logger.warn('amqp publisher channel closed', { error: err.message }),
        );
        channel.once('close', () => this.watchPublisherChannel(channel));
      },
    });
    this.publisher.on('error', (err: Error) =>
      this.logger.error('amqp publisher channel error', { error: err.message }),
    );
  }

  async publish(queue: string, msg: CommandMessage | CommandMessage[]): Promise<void> {
    this.assertOpen();
    assertQueueName(queue);
    const list = Array.isArray(msg) ? msg : [msg];
    if (list.length === 0) return;
    const bodies = list.map((m) => Buffer.from(encodeCommand(m)));
    await this.declare(queue);
    try {
      // All sends go out back to back; the confirms of the whole batch are awaited together.
      await Promise.all(
        list.map((m, i) =>
          this.publisher.sendToQueue(queue, bodies[i], {
            persistent: true,
            contentType: 'application/json',
            messageId: m.id,
            type: m.type,
            headers: m.headers ?? {},
          }),
        ),
      );
    } catch (e) {
      throw new TransientError(`publishing to queue ${queue} was not confirmed: ${describeError(e)}`, {
        cause: e,
      });
    }
  }

  async consume(queue: string, handler: CommandHandler, opts?: ConsumeOptions): Promise<Subscription> {
    this.assertOpen();
    assertQueueName(queue);
    const { prefetch, maxDeliveries, retryDelayMs } = normalizeConsumeOptions(opts);
    const state: ConsumerState = {
      queue,
      handler,
      prefetch,
      maxDeliveries,
      retryDelayMs,
      cancelled: false,
      inFlight: 0,
      idleWaiters: [],
    };
    await this.declare(queue);
    this.consumers.add(state);
    await this.openConsumerChannel(state);
    return { cancel: () => this.cancelConsumer(state) };
  }

  /**
   * A consumer's channel wrapper. Its setup runs on every new channel (after each reconnect), so
   * the consumer comes back by itself; a channel that dies while the connection stays up (queue
   * deleted, a channel error) is replaced by a new wrapper (`watchConsumerChannel`).
   */
  private async openConsumerChannel(state: ConsumerState): Promise<void> {
    const { queue, prefetch } = state;
    const previous = state.wrapper;
    state.current = undefined;
    const wrapper = this.connection.createChannel({
      name: `consumer:${queue}`,
      confirm: false,
      setup: async (channel: Channel) => {
        if (state.cancelled) return;
        channel.on('error', (err: Error) =>
          this.logger.warn('amqp consumer channel closed', { queue, error: err.message }),
        );
        channel.once('close', () => this.watchConsumerChannel(state, channel));
        await declareTopology(channel, queue, this.extraArguments);
        await channel.prefetch(prefetch);
        const { consumerTag } = await channel.consume(
          queue,
          (m) => {
            if (m) {
              void this.onDelivery(state, channel, m);
            } else if (!state.cancelled) {
              // The broker cancelled us (queue deleted): close, and let the watcher start over.
              this.logger.warn('amqp consumer cancelled by the broker', { queue });
              channel.close().catch(() => undefined);
            }
          },
          { noAck: false },
        );
        state.current = { channel, consumerTag };
      },
    });
    wrapper.on('error', (err: Error) =>
      this.logger.error('amqp consumer channel error', { queue, error: err.message }),
    );
    state.wrapper = wrapper;
    await previous?.close().catch(() => undefined);
    await wrapper.waitForConnect();
  }

  private watchConsumerChannel(state: ConsumerState, channel: Channel): void {
    if (state.cancelled || this.closed) return;
    const timer = setTimeout(() => {
      // After a connection loss the reconnect reruns the setup and replaces `current` by itself.
      if (state.cancelled || this.closed || state.current?.channel !== channel) return;
      if (!this.connection.isConnected()) return;
      this.logger.warn('amqp consumer channel closed alone; opening a new one', { queue: state.queue });
      this.openConsumerChannel(state).catch((e: unknown) =>
        this.logger.error('reopening an amqp consumer failed', {
          queue: state.queue,
          error: describeError(e),
        }),
      );
    }, this.reconnectDelayMs);
    timer.unref();
  }

  /** A publisher channel closed while the connection stays up is never reopened by the wrapper: reconnect. */
  private watchPublisherChannel(channel: Channel): void {
    if (this.closed) return;
    const timer = setTimeout(() => {
      if (this.closed || this.publisherChannel !== channel || !this.connection.isConnected()) return;
      this.logger.warn('amqp publisher channel closed alone; reconnecting');
      this.connection.reconnect();
    }, this.reconnectDelayMs);
    timer.unref();
  }

  /** Ready messages in a queue (unacknowledged ones not counted). Declares the queue's topology. */
  async messageCount(queue: string): Promise<number> {
    assertQueueName(queue);
    await this.declare(queue);
    return this.withShortLivedChannel(async (channel) => (await channel.checkQueue(queue)).messageCount);
  }

  async ping(): Promise<boolean> {
    return !this.closed && this.connection.isConnected();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.consumers].map((c) => this.cancelConsumer(c)));
    this.closed = true;
    await this.publisher.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }

  private assertOpen(): void {
    if (this.closed) throw new TransientError('the RabbitMQ command bus is closed');
  }

  /**
   * Declares a queue's topology once per connection, on a short-lived channel of its own: a
   * declaration the broker refuses (the queue exists with other arguments) fails this call with a
   * clear error instead of killing the publisher's or a consumer's channel.
   */
  private declare(queue: string): Promise<void> {
    let done = this.declared.get(queue);
    if (!done) {
      done = this.declareOnce(queue);
      this.declared.set(queue, done);
      done.catch(() => {
        if (this.declared.get(queue) === done) this.declared.delete(queue);
      });
    }
    return done;
  }

  /** Runs broker operations that may fail on a channel of their own, so a failure kills nothing else. */
  private async withShortLivedChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T> {
    await this.waitConnected();
    const model = this.connection.connection;
    if (!model) throw new TransientError('not connected to RabbitMQ');
    const channel = await model.createChannel();
    channel.on('error', () => undefined); // reported through the rejected operation
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  private async declareOnce(queue: string): Promise<void> {
    try {
      await this.withShortLivedChannel((channel) => declareTopology(channel, queue, this.extraArguments));
    } catch (e) {
      if (e instanceof TransientError) throw e;
      if ((e as { code?: unknown }).code === 406) {
        throw new InternalError(
          `queue ${queue} exists on the broker with other arguments (expected a durable quorum queue dead-lettering to ${deadLetterQueueOf(queue)})`,
          { cause: e },
        );
      }
      throw new TransientError(`declaring queue ${queue} failed: ${describeError(e)}`, { cause: e });
    }
  }

  /** Waits for the broker connection, at most the publish timeout (then `TransientError`). */
  private async waitConnected(): Promise<void> {
    if (this.connection.isConnected() && this.publisherChannel) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.publisher.waitForConnect(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new TransientError(`RabbitMQ not reachable within ${this.connectTimeoutMs} ms`)),
            this.connectTimeoutMs,
          );
        }),
      ]);
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  private async onDelivery(state: ConsumerState, channel: Channel, m: ConsumeMessage): Promise<void> {
    const props = m.properties;
    const brokerCount = props.headers?.['x-delivery-count'];
    const deliveryCount = (typeof brokerCount === 'number' ? brokerCount : 0) + 1;
    const headers = stringHeaders(props.headers);
    const text = m.content.toString('utf8');
    const body = decodeCommand(text);
    const dlq = isDeadLetterQueue(state.queue);
    if (!body && !dlq) {
      await this.deadLetter(state, channel, m, 'poison', 'message body is not a JSON command envelope');
      return;
    }
    if (deliveryCount > state.maxDeliveries) {
      await this.deadLetter(state, channel, m, 'delivery-limit', `delivered ${deliveryCount - 1} times`);
      return;
    }
    const msg: CommandMessage = body
      ? { ...body, headers }
      : {
          id: typeof props.messageId === 'string' ? props.messageId : '',
          type: POISON_TYPE,
          payload: text,
          headers,
        };
    state.inFlight += 1;
    try {
      await state.handler(msg, { deliveryCount, redelivered: m.fields.redelivered || deliveryCount > 1 });
      settle(channel, () => channel.ack(m));
    } catch (error) {
      if (isRetryableError(error) && deliveryCount < state.maxDeliveries) {
        // Hold the message (and its prefetch slot) for the backoff, then give it back.
        const wait = retryDelay(state.retryDelayMs, deliveryCount);
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        settle(channel, () => channel.nack(m, false, true));
      } else {
        const reason: DeadLetterReason = isRetryableError(error) ? 'delivery-limit' : 'rejected';
        await this.deadLetter(state, channel, m, reason, describeError(error));
      }
    } finally {
      state.inFlight -= 1;
      if (state.inFlight === 0) for (const w of state.idleWaiters.splice(0)) w();
    }
  }

  private async deadLetter(
    state: ConsumerState,
    channel: Channel,
    m: ConsumeMessage,
    reason: DeadLetterReason,
    error: string,
  ): Promise<void> {
    if (isDeadLetterQueue(state.queue)) {
      // A dead-letter queue has no dead-letter queue: its consumer's rejection drops the message.
      settle(channel, () => channel.nack(m, false, false));
      return;
    }
    this.logger.warn('dead-lettering a command', {
      queue: state.queue,
      reason,
      error,
      messageId: m.properties.messageId,
    });
    const dlq = deadLetterQueueOf(state.queue);
    try {
      const { headers: original, ...props } = m.properties;
      await this.publisher.sendToQueue(dlq, m.content, {
        ...publishableProperties(props),
        persistent: true,
        headers: {
          ...withoutBrokerHeaders(original),
          'x-dead-letter-reason': reason,
          'x-error': error,
          'x-original-queue': state.queue,
        },
      });
      settle(channel, () => channel.ack(m));
    } catch (e) {
      this.logger.error(
        'republishing to the dead-letter queue failed; nacking to the broker dead-letter route',
        {
          queue: state.queue,
          error: describeError(e),
        },
      );
      settle(channel, () => channel.nack(m, false, false));
    }
  }

  private async cancelConsumer(state: ConsumerState): Promise<void> {
    if (!this.consumers.has(state)) return;
    state.cancelled = true;
    const current = state.current;
    if (current) {
      await current.channel.cancel(current.consumerTag).catch(() => undefined);
    }
    if (state.inFlight > 0) await new Promise<void>((resolve) => state.idleWaiters.push(resolve));
    await state.wrapper?.close().catch(() => undefined);
    this.consumers.delete(state);
  }
}

/** `extra`: further queue arguments (`x-expires` of test buses); empty in production. */
async function declareTopology(
  channel: Channel,
  queue: string,
  extra: Readonly<Record<string, number>>,
): Promise<void> {
  if (isDeadLetterQueue(queue)) {
    await channel.assertQueue(queue, { durable: true, arguments: { ...QUORUM, ...extra } });
    return;
  }
  const dlq = deadLetterQueueOf(queue);
  await channel.assertQueue(dlq, { durable: true, arguments: { ...QUORUM, ...extra } });
  await channel.assertQueue(queue, {
    durable: true,
    arguments: { ...QUORUM, ...extra, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq },
  });
}

/**
 * Acks and nacks belong to the channel the message came on. After a reconnect that channel is
 * gone, the broker has already requeued the message, and acking on it would only throw.
 */
function settle(channel: Channel, action: () => void): void {
  try {
    action();
  } catch {
    // channel closed: the broker redelivers the message
  }
}

function stringHeaders(headers: MessageProperties['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (typeof v === 'string') out[k] = v;
  }
  return out;
}

function withoutBrokerHeaders(headers: MessageProperties['headers']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (
      k !== 'x-delivery-count' &&
      k !== 'x-death' &&
      !k.startsWith('x-first-death') &&
      !k.startsWith('x-last-death')
    ) {
      out[k] = v;
    }
  }
  return out;
}

function publishableProperties(props: Omit<MessageProperties, 'headers'>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(props)) if (v !== undefined) out[k] = v;
  return out;
}
