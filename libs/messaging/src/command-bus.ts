import type { EntityManager } from 'typeorm';
import { InvalidInputError } from '@osc/errors';

/**
 * One command on the bus. `id` identifies the command for idempotent handling (a redelivered
 * command keeps its id); `type` is the dotted message name (`engine.action-completed`).
 * `headers` carry string metadata (request id, execution id); dead-lettered messages gain
 * `x-dead-letter-reason` (`rejected` | `delivery-limit` | `poison`), `x-error` and `x-original-queue`.
 */
export interface CommandMessage<T = unknown> {
  id: string;
  type: string;
  payload: T;
  headers?: Record<string, string>;
}

/** What the bus knows about this delivery. `deliveryCount` is 1 on the first delivery. */
export interface DeliveryInfo {
  deliveryCount: number;
  redelivered: boolean;
}

export type CommandHandler = (msg: CommandMessage, info: DeliveryInfo) => Promise<void>;

export interface ConsumeOptions {
  /** Most unacknowledged messages this consumer holds at once. Default {@link DEFAULT_PREFETCH}. */
  prefetch?: number;
  /** Deliveries (first one included) before a failing message goes to `<queue>.dlq`. Default {@link DEFAULT_MAX_DELIVERIES}. */
  maxDeliveries?: number;
  /**
   * Wait before giving a message back after a retryable failure: `retryDelayMs * 2^(n-1)` after
   * delivery n, at most {@link MAX_RETRY_DELAY_MS}. The message keeps its prefetch slot meanwhile
   * (back-pressure while a dependency is down). 0 = at once. Default {@link DEFAULT_RETRY_DELAY_MS}.
   */
  retryDelayMs?: number;
}

export interface Subscription {
  /** Stops new deliveries, waits for the handlers already running to settle (and be acked), then detaches. */
  cancel(): Promise<void>;
}

/**
 * Point-to-point command delivery with manual acknowledgement.
 *
 * Contract (every adapter passes `test/command-bus.contract.ts`):
 * - Queues are durable and messages persistent; `publish` resolves once the broker has taken
 *   every message of the batch (publisher confirms), in order per queue.
 * - The handler resolving acks the message. Throwing a retryable error (see `isRetryableError`)
 *   returns it for redelivery, up to `maxDeliveries` deliveries in total; then it is dead-lettered
 *   to `<queue>.dlq`. A non-retryable error, or a message that cannot be parsed (poison), is
 *   dead-lettered at once without (another) call to the handler.
 * - A consumer that dies before acking (crash, lost connection) gets the message redelivered,
 *   to itself after reconnecting or to another consumer, with `redelivered: true`.
 * - At-least-once: handlers must be idempotent.
 */
export interface CommandBus {
  publish(queue: string, msg: CommandMessage | CommandMessage[]): Promise<void>;
  /**
   * Optional (in-process adapters): publish as part of the caller's database transaction `em`.
   * The messages become durable with its commit; the returned function, called by the
   * transaction's owner once it has committed, hands them to consumers. Not calling it (a
   * rollback) sends nothing. The outbox relay uses it when present.
   */
  publishInTransaction?(
    em: EntityManager,
    queue: string,
    msg: CommandMessage | CommandMessage[],
  ): Promise<AfterCommit>;
  consume(queue: string, handler: CommandHandler, opts?: ConsumeOptions): Promise<Subscription>;
  /** Health check for /readyz: true when the bus can currently reach its broker. */
  ping(): Promise<boolean>;
  /** Optional: messages waiting in `queue` for a consumer (unacknowledged ones not counted); for metrics. */
  messageCount?(queue: string): Promise<number>;
  close(): Promise<void>;
}

/** Called once the transaction a transactional publish or add joined has committed. */
export type AfterCommit = () => void;

export const DEFAULT_PREFETCH = 20;
export const DEFAULT_MAX_DELIVERIES = 5;
export const DEFAULT_RETRY_DELAY_MS = 250;
export const MAX_RETRY_DELAY_MS = 30_000;

/** Wait after failed delivery `deliveryCount` (1-based) before the message is given back. */
export function retryDelay(retryDelayMs: number, deliveryCount: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, retryDelayMs * 2 ** (deliveryCount - 1));
}
export const DEAD_LETTER_SUFFIX = '.dlq';

export const deadLetterQueueOf = (queue: string): string => `${queue}${DEAD_LETTER_SUFFIX}`;
export const isDeadLetterQueue = (queue: string): boolean => queue.endsWith(DEAD_LETTER_SUFFIX);

export type DeadLetterReason = 'rejected' | 'delivery-limit' | 'poison';

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

export function assertQueueName(queue: string): void {
  if (typeof queue !== 'string' || !QUEUE_NAME.test(queue)) {
    throw new InvalidInputError(
      `queue name ${JSON.stringify(queue)} is invalid: use 1-200 characters from [A-Za-z0-9._-], starting with a letter or digit`,
    );
  }
}

export function normalizeConsumeOptions(opts: ConsumeOptions | undefined): Required<ConsumeOptions> {
  const prefetch = opts?.prefetch ?? DEFAULT_PREFETCH;
  const maxDeliveries = opts?.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
  const retryDelayMs = opts?.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS;
  if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) {
    throw new InvalidInputError(`retryDelayMs must be >= 0, got ${retryDelayMs}`);
  }
  if (!Number.isInteger(prefetch) || prefetch < 1 || prefetch > 65535) {
    throw new InvalidInputError(`prefetch must be an integer from 1 to 65535, got ${prefetch}`);
  }
  if (!Number.isInteger(maxDeliveries) || maxDeliveries < 1) {
    throw new InvalidInputError(`maxDeliveries must be a positive integer, got ${maxDeliveries}`);
  }
  return { prefetch, maxDeliveries, retryDelayMs };
}

/** The wire body of a command: the headers travel separately (AMQP headers / envelope field). */
export interface CommandBody {
  id: string;
  type: string;
  payload: unknown;
}

/** Validates and serializes a message; throws `InvalidInputError` for a message no consumer could read. */
export function encodeCommand(msg: CommandMessage): string {
  if (msg === null || typeof msg !== 'object')
    throw new InvalidInputError('a command message must be an object');
  if (typeof msg.id !== 'string' || msg.id.length === 0) {
    throw new InvalidInputError('a command message needs a non-empty string id');
  }
  if (typeof msg.type !== 'string' || msg.type.length === 0) {
    throw new InvalidInputError(`command message ${msg.id} needs a non-empty string type`);
  }
  if (msg.headers !== undefined) {
    for (const [k, v] of Object.entries(msg.headers)) {
      if (typeof v !== 'string')
        throw new InvalidInputError(`header ${k} of command message ${msg.id} must be a string`);
    }
  }
  let body: string;
  try {
    body = JSON.stringify({ id: msg.id, type: msg.type, payload: msg.payload ?? null } satisfies CommandBody);
  } catch (e) {
    throw new InvalidInputError(`payload of command message ${msg.id} is not JSON-serializable`, {
      cause: e,
    });
  }
  return body;
}

/** Parses a wire body; returns undefined for poison (not JSON, or not a command envelope). */
export function decodeCommand(body: string): CommandBody | undefined {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if (typeof v['id'] !== 'string' || v['id'] === '' || typeof v['type'] !== 'string' || v['type'] === '') {
    return undefined;
  }
  if (!('payload' in v)) return undefined;
  return { id: v['id'], type: v['type'], payload: v['payload'] };
}

/** The type given to unparsable messages when they are read from a dead-letter queue. */
export const POISON_TYPE = 'messaging.poison';
