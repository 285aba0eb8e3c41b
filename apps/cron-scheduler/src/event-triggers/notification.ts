import { createHash } from 'node:crypto';

/**
 * One oslo.messaging notification as it arrives from RabbitMQ: the body is the 2.0 envelope
 * `{"oslo.version": "2.0", "oslo.message": "<JSON text>"}` (or, from old publishers, the message
 * itself); the message holds `message_id`, `publisher_id`, `event_type`, `priority`, `payload`,
 * `timestamp` and the request context flattened into `_context_<key>` entries.
 */
export interface Notification {
  /** Stable across redeliveries: the notifier's `message_id` (else `_unique_id`, else a body hash). */
  readonly messageId: string;
  readonly eventType: string;
  readonly publisherId: string | null;
  readonly timestamp: string | null;
  readonly payload: unknown;
  readonly context: Readonly<Record<string, unknown>>;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The notification in an AMQP body, or a reason why it is not one (the caller drops such messages). */
export function parseNotification(body: Buffer): Notification | { error: string } {
  let outer: unknown;
  try {
    outer = JSON.parse(body.toString('utf8'));
  } catch {
    return { error: 'body is not JSON' };
  }
  if (!isMap(outer)) return { error: 'body is not a JSON object' };
  let message: unknown = outer;
  if (typeof outer['oslo.message'] === 'string') {
    try {
      message = JSON.parse(outer['oslo.message']);
    } catch {
      return { error: 'oslo.message is not JSON' };
    }
  }
  if (!isMap(message)) return { error: 'message is not a JSON object' };
  const eventType = message['event_type'];
  if (typeof eventType !== 'string' || eventType === '') return { error: 'message has no event_type' };
  const context: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(message))
    if (k.startsWith('_context_')) context[k.slice('_context_'.length)] = v;
  const id = message['message_id'] ?? message['_unique_id'];
  return {
    messageId:
      typeof id === 'string' && id !== '' ? id : `sha256:${createHash('sha256').update(body).digest('hex')}`,
    eventType,
    publisherId: typeof message['publisher_id'] === 'string' ? message['publisher_id'] : null,
    timestamp: typeof message['timestamp'] === 'string' ? message['timestamp'] : null,
    payload: message['payload'] ?? null,
    context,
  };
}

/**
 * What an execution started by an event receives as `params.event_params`: Mistral's default
 * conversion of a notification (no event definitions file): publisher, project and user of the
 * notification's context, and its timestamp.
 */
export const eventParams = (n: Notification): Record<string, unknown> => ({
  service: n.publisherId,
  project_id: n.context['project_id'] ?? null,
  user_id: n.context['user_id'] ?? null,
  timestamp: n.timestamp,
});

/** The notification priorities Mistral's listener consumes: routing keys `<topic>.<priority>`. */
export const NOTIFICATION_PRIORITIES = ['audit', 'critical', 'debug', 'error', 'info'] as const;

/** The topic of a routing key `<topic>.<priority>` (null for any other key). */
export function topicOfRoutingKey(routingKey: string): string | null {
  const dot = routingKey.lastIndexOf('.');
  if (dot <= 0) return null;
  const priority = routingKey.slice(dot + 1);
  return (NOTIFICATION_PRIORITIES as readonly string[]).includes(priority) ? routingKey.slice(0, dot) : null;
}
