import { isIP } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { type NotifyPublisher, type TaskEventPayload, type WorkflowEventPayload } from '@osc/contracts';
import { amqpConnectionOptions } from '@osc/messaging';
import { pyJsonDumps } from '@osc/workflow-domain';
import { inPayloadOrder } from './events';
import { type AmqpConnectionManager, type ChannelWrapper, connect } from 'amqp-connection-manager';
import { type ChannelModel, type ConfirmChannel, connect as amqpConnect } from 'amqplib';
import { Agent, type Dispatcher, request } from 'undici';

export type NotifyEvent = WorkflowEventPayload | TaskEventPayload;

/** One kind of publisher (`type` of a `notify` entry). `publish` rejects when this delivery failed. */
export interface NotificationPublisher {
  readonly type: NotifyPublisher['type'];
  publish(event: NotifyEvent, publisher: NotifyPublisher): Promise<void>;
  close?(): Promise<void>;
}

export interface NotifyLogger {
  warn(message: string, context?: Record<string, unknown>): void;
  error(message: string, context?: Record<string, unknown>): void;
}

/** The event body as the reference sends it: Python's `json.dumps` text, keys in its order. */
export const eventBody = (event: NotifyEvent): string => pyJsonDumps(inPayloadOrder(event));

/** A delivery that failed and should not be retried (e.g. a 4xx answer or a bad URL). */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentDeliveryError';
  }
}

/** `noop`: accepts every event and does nothing (the reference's noop publisher). */
export class NoopPublisher implements NotificationPublisher {
  readonly type = 'noop' as const;
  publish(): Promise<void> {
    return Promise.resolve();
  }
}

export interface WebhookOptions {
  /** Bound of one attempt (connect, headers and body). Default 5 s. */
  attemptTimeoutMs?: number;
  /** Attempts in all, first included. Default 3. */
  attempts?: number;
  /** Wait before the second attempt; doubles after each. Default 250 ms. */
  backoffMs?: number;
  /**
   * Where webhooks may connect: @osc/actions' `EgressPolicy` fits, so webhooks obey the same denied
   * networks as std.http (IP-literal hosts checked here, names by the policy agent's lookup).
   */
  egress?: { isDenied(address: string): boolean; agent(mode: 'verify'): Dispatcher };
}

/**
 * `webhook`: POSTs the JSON event to `url` with the entry's `headers` (DSL-16.2). Success is 200 or 201
 * (the reference's rule). Network errors, timeouts, 429 and 5xx are retried with exponential backoff;
 * other statuses fail at once. Every attempt is bounded by `attemptTimeoutMs`, so a delivery takes at
 * most about attempts × timeout + the backoffs; `close()` cuts pending retries short.
 */
export class WebhookPublisher implements NotificationPublisher {
  readonly type = 'webhook' as const;
  private readonly attemptTimeoutMs: number;
  private readonly attempts: number;
  private readonly backoffMs: number;
  private readonly agent: Dispatcher;
  private readonly ownsAgent: boolean;
  private readonly egress: WebhookOptions['egress'];
  private readonly closing = new AbortController();

  constructor(options: WebhookOptions = {}) {
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? 5_000;
    this.attempts = Math.max(1, options.attempts ?? 3);
    this.backoffMs = options.backoffMs ?? 250;
    this.egress = options.egress;
    this.agent = options.egress?.agent('verify') ?? new Agent({ keepAliveTimeout: 4_000 });
    this.ownsAgent = options.egress === undefined;
  }

  async publish(event: NotifyEvent, publisher: NotifyPublisher): Promise<void> {
    const url = publisher.url;
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) {
      throw new PermanentDeliveryError(`webhook publisher needs an http(s) url, got ${JSON.stringify(url)}`);
    }
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (this.egress && isIP(host) !== 0 && this.egress.isDenied(host)) {
      throw new PermanentDeliveryError(`webhook host ${host} is in a denied network`);
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(publisher.headers ?? {})) headers[k] = String(v);
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
      headers['Content-Type'] = 'application/json';
    const body = eventBody(event);
    let lastError: Error = new Error('no attempt made');
    for (let attempt = 1; attempt <= this.attempts; attempt++) {
      if (attempt > 1) {
        try {
          await delay(this.backoffMs * 2 ** (attempt - 2), undefined, { signal: this.closing.signal });
        } catch {
          break;
        }
      }
      try {
        await this.attempt(url, headers, body);
        return;
      } catch (e) {
        lastError = e instanceof Error ? e : new Error(String(e));
        if (e instanceof PermanentDeliveryError) throw e;
      }
    }
    throw lastError;
  }

  private async attempt(url: string, headers: Record<string, string>, body: string): Promise<void> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.attemptTimeoutMs), this.closing.signal]);
    const res = await request(url, {
      method: 'POST',
      headers,
      body,
      dispatcher: this.agent,
      signal,
      headersTimeout: this.attemptTimeoutMs,
      bodyTimeout: this.attemptTimeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode === 200 || res.statusCode === 201) return;
    const message = `webhook ${url} answered ${res.statusCode}: ${text.slice(0, 200)}`;
    if (res.statusCode === 429 || res.statusCode >= 500) throw new Error(message);
    throw new PermanentDeliveryError(message);
  }

  async close(): Promise<void> {
    this.closing.abort();
    if (this.ownsAgent) await this.agent.close();
  }
}

export interface AmqpPublisherOptions {
  /** Broker URL, e.g. `amqp://guest:guest@127.0.0.1:5672`. */
  url: string;
  /** Exchange used when a `notify` entry names none; declared (topic, durable) on connect. */
  defaultExchange: string;
  /** Bound of one publish (until the broker confirms). Default 10 s. */
  publishTimeoutMs?: number;
  logger?: NotifyLogger;
}

/**
 * `amqp`: publishes the JSON event to an exchange of the configured broker — the entry's `exchange`
 * (which must exist) or the configured default — with routing key `routing_key` or else the event name,
 * persistent, with publisher confirms. The connection reconnects on its own (amqp-connection-manager).
 */
export class AmqpPublisher implements NotificationPublisher {
  readonly type = 'amqp' as const;
  private readonly connection: AmqpConnectionManager;
  private readonly channel: ChannelWrapper;
  private readonly checked = new Set<string>();
  private readonly publishTimeoutMs: number;

  constructor(private readonly options: AmqpPublisherOptions) {
    this.publishTimeoutMs = options.publishTimeoutMs ?? 10_000;
    this.connection = connect([options.url], {
      heartbeatIntervalInSeconds: 15,
      reconnectTimeInSeconds: 1,
      connectionOptions: amqpConnectionOptions(),
    });
    this.connection.on('disconnect', ({ err }: { err?: Error }) =>
      options.logger?.warn('notify: AMQP connection lost', { error: err?.message }),
    );
    this.channel = this.connection.createChannel({
      json: false,
      confirm: true,
      setup: async (ch: ConfirmChannel) => {
        await ch.assertExchange(options.defaultExchange, 'topic', { durable: true });
      },
    });
  }

  async publish(event: NotifyEvent, publisher: NotifyPublisher): Promise<void> {
    const exchange =
      typeof publisher.exchange === 'string' && publisher.exchange !== ''
        ? publisher.exchange
        : this.options.defaultExchange;
    const routingKey =
      typeof publisher.routing_key === 'string' && publisher.routing_key !== ''
        ? publisher.routing_key
        : event.event;
    if (exchange !== this.options.defaultExchange && !this.checked.has(exchange)) {
      // A publish to a missing exchange would close the channel; check first, on a throwaway channel.
      await this.checkExchange(exchange);
      this.checked.add(exchange);
    }
    await this.channel.publish(exchange, routingKey, Buffer.from(eventBody(event)), {
      persistent: true,
      contentType: 'application/json',
      type: event.event,
      headers: { event: event.event },
      timeout: this.publishTimeoutMs,
    });
  }

  /**
   * On a short-lived connection of its own: a failed check closes its channel, and on the managed
   * connection that would drop the publishing channel too.
   */
  private async checkExchange(exchange: string): Promise<void> {
    let conn: ChannelModel | undefined;
    try {
      conn = await amqpConnect(this.options.url);
      conn.on('error', () => undefined);
      const ch = await conn.createChannel();
      ch.on('error', () => undefined);
      await ch.checkExchange(exchange);
    } catch (e) {
      throw new PermanentDeliveryError(
        `AMQP exchange ${exchange} is not available: ${e instanceof Error ? e.message : String(e)}`,
      );
    } finally {
      await conn?.close().catch(() => undefined);
    }
  }

  /** Resolves when the channel is connected and the default exchange declared. */
  waitForConnect(): Promise<void> {
    return this.channel.waitForConnect();
  }

  async close(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close();
  }
}
