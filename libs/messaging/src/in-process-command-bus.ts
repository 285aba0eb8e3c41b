import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { TransientError } from '@osc/errors';
import {
  type AfterCommit,
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
import { FifoQueue } from './fifo-queue';
import type { JournalEntry, MessageJournal } from './journal/message-journal';
import { describeError, isRetryableError } from './retryable';

interface Envelope {
  body: string;
  headers: Record<string, string>;
  /** Deliveries so far. */
  deliveries: number;
  /** Its `message_journal` row (durable mode). */
  journalId?: string;
}

export interface InProcessCommandBusOptions {
  /**
   * Durable mode (embedded product): every message is journaled in the database before it can be
   * delivered and forgotten once acked or dropped; `restore()` brings back what a previous process
   * left unfinished. Without it messages live in memory only.
   */
  journal?: MessageJournal;
}

interface Delivery {
  envelope: Envelope;
}

interface Consumer {
  queue: string;
  handler: CommandHandler;
  prefetch: number;
  maxDeliveries: number;
  retryDelayMs: number;
  /** One entry per delivery (not per envelope: an abandoned delivery of a message redelivered here must not ack it). */
  inFlight: Set<Delivery>;
  cancelled: boolean;
  /** Resolvers waiting for `inFlight` to become empty. */
  idleWaiters: Array<() => void>;
}

interface QueueState {
  ready: FifoQueue<Envelope>;
  consumers: Consumer[];
  next: number;
  dispatchScheduled: boolean;
}

/**
 * The command bus of embedded mode: queues live in this process's memory, with the same
 * semantics as the RabbitMQ adapter (manual ack, prefetch, bounded redelivery, dead-letter queue,
 * poison detection). Messages are serialized on publish, so handlers never share objects with
 * publishers.
 *
 * With a journal (`options.journal`, the embedded product) every message is also stored in the
 * database until it is acked, dead-lettered messages included, and `restore()` redelivers after a
 * restart what was left (`redelivered: true`, the delivery count continued: a message that was
 * perhaps being handled when the process died counts that delivery). Without one, nothing
 * survives a restart.
 */
export class InProcessCommandBus implements CommandBus {
  private readonly queues = new Map<string, QueueState>();
  private readonly journal?: MessageJournal;
  private closed = false;

  constructor(options: InProcessCommandBusOptions = {}) {
    this.journal = options.journal;
  }

  async publish(queue: string, msg: CommandMessage | CommandMessage[]): Promise<void> {
    this.assertOpen();
    assertQueueName(queue);
    const envelopes = this.envelopes(msg);
    if (this.journal) await this.journal.insert(envelopes.map((e) => journalEntry(queue, e)));
    this.enqueue(queue, envelopes);
  }

  /** Journals the messages with `em` (durable mode); they are enqueued when the returned function runs after the commit. */
  async publishInTransaction(
    em: EntityManager,
    queue: string,
    msg: CommandMessage | CommandMessage[],
  ): Promise<AfterCommit> {
    this.assertOpen();
    assertQueueName(queue);
    const envelopes = this.envelopes(msg);
    if (this.journal)
      await this.journal.insertIn(
        em,
        envelopes.map((e) => journalEntry(queue, e)),
      );
    return () => this.enqueue(queue, envelopes);
  }

  /**
   * Durable mode: enqueues, in publish order, the messages a previous process journaled and never
   * finished, each as a redelivery. Call once, before the first publish.
   */
  async restore(): Promise<number> {
    if (!this.journal) return 0;
    const entries = (await this.journal.load()).filter((e) => e.kind === 'bus');
    for (const e of entries) {
      const headers = (e.meta ?? {}) as Record<string, string>;
      // Perhaps delivered when the process died: that delivery counts (as a broker counts a consumer's crash).
      this.enqueue(e.queue, [{ body: e.body, headers, deliveries: e.deliveries + 1, journalId: e.id }]);
    }
    return entries.length;
  }

  private envelopes(msg: CommandMessage | CommandMessage[]): Envelope[] {
    const list = Array.isArray(msg) ? msg : [msg];
    return list.map((m) => ({
      body: encodeCommand(m),
      headers: { ...m.headers },
      deliveries: 0,
      journalId: this.journal ? randomUUID() : undefined,
    }));
  }

  /**
   * Puts raw bytes on a queue, bypassing validation: the way a foreign or broken producer would.
   * Used to test poison handling; not part of the `CommandBus` port.
   */
  async publishRaw(queue: string, body: string, headers: Record<string, string> = {}): Promise<void> {
    this.assertOpen();
    assertQueueName(queue);
    const envelope: Envelope = {
      body,
      headers: { ...headers },
      deliveries: 0,
      journalId: this.journal ? randomUUID() : undefined,
    };
    if (this.journal) await this.journal.insert([journalEntry(queue, envelope)]);
    this.enqueue(queue, [envelope]);
  }

  async consume(queue: string, handler: CommandHandler, opts?: ConsumeOptions): Promise<Subscription> {
    this.assertOpen();
    assertQueueName(queue);
    const { prefetch, maxDeliveries, retryDelayMs } = normalizeConsumeOptions(opts);
    const state = this.queue(queue);
    const consumer: Consumer = {
      queue,
      handler,
      prefetch,
      maxDeliveries,
      retryDelayMs,
      inFlight: new Set(),
      cancelled: false,
      idleWaiters: [],
    };
    state.consumers.push(consumer);
    this.scheduleDispatch(queue);
    return { cancel: () => this.cancelConsumer(consumer) };
  }

  /** Messages waiting for a consumer (not counting those being handled). */
  async messageCount(queue: string): Promise<number> {
    return this.queues.get(queue)?.ready.length ?? 0;
  }

  /**
   * Returns every unacknowledged message to the front of its queue, as a broker does when the
   * consumers' connection drops; the consumers stay subscribed (as after a reconnect) and results
   * of the abandoned handler calls are ignored. Models a crash for tests.
   */
  simulateConnectionLoss(): void {
    for (const [name, state] of this.queues) {
      const returned: Envelope[] = [];
      for (const c of state.consumers) {
        for (const d of c.inFlight) returned.push(d.envelope);
        c.inFlight.clear();
        this.notifyIdle(c);
      }
      if (returned.length > 0) {
        state.ready.unshiftAll(returned);
        this.scheduleDispatch(name);
      }
    }
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    const consumers = [...this.queues.values()].flatMap((q) => q.consumers);
    await Promise.all(consumers.map((c) => this.cancelConsumer(c)));
    this.closed = true;
    await this.journal?.flush();
  }

  private assertOpen(): void {
    if (this.closed) throw new TransientError('the in-process command bus is closed');
  }

  private queue(name: string): QueueState {
    let state = this.queues.get(name);
    if (!state) {
      state = { ready: new FifoQueue(), consumers: [], next: 0, dispatchScheduled: false };
      this.queues.set(name, state);
    }
    return state;
  }

  private enqueue(queue: string, envelopes: Envelope[]): void {
    const state = this.queue(queue);
    for (const e of envelopes) state.ready.push(e);
    this.scheduleDispatch(queue);
  }

  /** Deliveries happen asynchronously (never inside `publish`), as with a broker. */
  private scheduleDispatch(queue: string): void {
    const state = this.queue(queue);
    if (state.dispatchScheduled) return;
    state.dispatchScheduled = true;
    setImmediate(() => {
      state.dispatchScheduled = false;
      this.dispatch(queue, state);
    });
  }

  private dispatch(queue: string, state: QueueState): void {
    while (state.ready.length > 0) {
      const consumer = this.pickConsumer(state);
      const envelope = consumer && state.ready.shift();
      if (!consumer || !envelope) return;
      this.deliver(consumer, envelope);
    }
  }

  /** Round robin over consumers that have room under their prefetch. */
  private pickConsumer(state: QueueState): Consumer | undefined {
    const n = state.consumers.length;
    for (let i = 0; i < n; i++) {
      const c = state.consumers[(state.next + i) % n];
      if (c && !c.cancelled && c.inFlight.size < c.prefetch) {
        state.next = (state.next + i + 1) % n;
        return c;
      }
    }
    return undefined;
  }

  private deliver(consumer: Consumer, envelope: Envelope): void {
    envelope.deliveries += 1;
    const body = decodeCommand(envelope.body);
    const dlq = isDeadLetterQueue(consumer.queue);
    if (!body && !dlq) {
      this.deadLetter(consumer.queue, envelope, 'poison', 'message body is not a JSON command envelope');
      return;
    }
    if (envelope.deliveries > consumer.maxDeliveries) {
      this.deadLetter(
        consumer.queue,
        envelope,
        'delivery-limit',
        `delivered ${envelope.deliveries - 1} times`,
      );
      return;
    }
    const msg: CommandMessage = body
      ? { ...body, headers: { ...envelope.headers } }
      : {
          id: envelope.headers['x-message-id'] ?? '',
          type: POISON_TYPE,
          payload: envelope.body,
          headers: { ...envelope.headers },
        };
    const delivery: Delivery = { envelope };
    consumer.inFlight.add(delivery);
    const info = { deliveryCount: envelope.deliveries, redelivered: envelope.deliveries > 1 };
    let run: Promise<void>;
    try {
      run = Promise.resolve(consumer.handler(msg, info));
    } catch (e) {
      run = Promise.reject(e);
    }
    run.then(
      () => this.settle(consumer, delivery, undefined, false),
      (error: unknown) => this.settle(consumer, delivery, error, true),
    );
  }

  private settle(consumer: Consumer, delivery: Delivery, error: unknown, failed: boolean): void {
    // A message whose delivery was abandoned (connection loss) is no longer ours to ack or nack.
    if (!consumer.inFlight.has(delivery)) return;
    const { envelope } = delivery;
    if (failed && isRetryableError(error) && envelope.deliveries < consumer.maxDeliveries) {
      const wait = retryDelay(consumer.retryDelayMs, envelope.deliveries);
      // The message keeps its place among the consumer's unacked ones until it is given back.
      const giveBack = () => {
        if (!consumer.inFlight.delete(delivery)) return;
        if (envelope.journalId)
          this.journal?.change(envelope.journalId, {
            queue: consumer.queue,
            meta: envelope.headers,
            deliveries: envelope.deliveries,
            readyAt: null,
          });
        this.queue(consumer.queue).ready.push(envelope);
        this.notifyIdle(consumer);
        this.scheduleDispatch(consumer.queue);
      };
      if (wait > 0) setTimeout(giveBack, wait);
      else giveBack();
      return;
    }
    consumer.inFlight.delete(delivery);
    if (failed) {
      const reason: DeadLetterReason = isRetryableError(error) ? 'delivery-limit' : 'rejected';
      this.deadLetter(consumer.queue, envelope, reason, describeError(error));
    } else if (envelope.journalId) {
      this.journal?.remove(envelope.journalId);
    }
    this.notifyIdle(consumer);
    this.scheduleDispatch(consumer.queue);
  }

  private deadLetter(queue: string, envelope: Envelope, reason: DeadLetterReason, error: string): void {
    // A dead-letter queue has no dead-letter queue of its own: what its consumer rejects is dropped,
    // as RabbitMQ drops a message nacked on a queue without a dead-letter exchange.
    if (isDeadLetterQueue(queue)) {
      if (envelope.journalId) this.journal?.remove(envelope.journalId);
      return;
    }
    const dead: Envelope = {
      body: envelope.body,
      headers: {
        ...envelope.headers,
        'x-dead-letter-reason': reason,
        'x-error': error,
        'x-original-queue': queue,
      },
      deliveries: 0,
      journalId: envelope.journalId,
    };
    // The journal row moves with the message: dead letters persist until a consumer of the DLQ acks them.
    if (dead.journalId)
      this.journal?.change(dead.journalId, {
        queue: deadLetterQueueOf(queue),
        meta: dead.headers,
        deliveries: 0,
        readyAt: null,
      });
    this.enqueue(deadLetterQueueOf(queue), [dead]);
  }

  private notifyIdle(consumer: Consumer): void {
    if (consumer.inFlight.size > 0) return;
    const waiters = consumer.idleWaiters.splice(0);
    for (const w of waiters) w();
  }

  private async cancelConsumer(consumer: Consumer): Promise<void> {
    if (!consumer.cancelled) {
      consumer.cancelled = true;
      const state = this.queue(consumer.queue);
      state.consumers = state.consumers.filter((c) => c !== consumer);
      state.next = 0;
    }
    if (consumer.inFlight.size > 0) {
      await new Promise<void>((resolve) => consumer.idleWaiters.push(resolve));
    }
  }
}

function journalEntry(queue: string, e: Envelope): JournalEntry {
  return {
    id: e.journalId as string,
    kind: 'bus',
    queue,
    body: e.body,
    meta: e.headers,
    deliveries: e.deliveries,
    readyAt: null,
  };
}
