import type { FastifyReply, FastifyRequest } from 'fastify';

/** A comment line this often keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/**
 * Bytes a stream may have waiting for a client that does not read: beyond them the stream is
 * closed (the client reconnects after the `retry:` hint and resumes with `Last-Event-ID`, without
 * gap or duplicate) instead of the process buffering for it without bound.
 */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Whether the client asks for Server-Sent Events (`Accept: text/event-stream`). */
export const wantsStream = (accept: string | undefined): boolean =>
  (accept ?? '').split(',').some((a) => a.trim().startsWith('text/event-stream'));

/** One Server-Sent Event. */
export interface SseMessage {
  readonly id: string | number;
  readonly event: string;
  readonly data: unknown;
}

/** An open Server-Sent Events response. */
export interface SseResponse {
  /** Writes messages in one socket write (a batch of one read); nothing once closed. */
  send(messages: readonly SseMessage[]): void;
  close(): void;
  readonly open: boolean;
}

/**
 * Messages already formatted, by their data object: a project's state change goes out to each of
 * its streams (tens of list pages) and is serialized once.
 */
const formatted = new WeakMap<object, { id: string | number; event: string; text: string }>();

const format = (m: SseMessage): string => {
  const key = typeof m.data === 'object' && m.data !== null ? m.data : null;
  const known = key ? formatted.get(key) : undefined;
  if (known && known.id === m.id && known.event === m.event) return known.text;
  const text = `id: ${m.id}\nevent: ${m.event}\ndata: ${JSON.stringify(m.data)}\n\n`;
  if (key) formatted.set(key, { id: m.id, event: m.event, text });
  return text;
};

/**
 * Takes the reply over from Fastify and answers `200 text/event-stream` (our extension's streams,
 * docs/workflow-events.md): a `retry:` hint, then a heartbeat comment every `heartbeatMs`.
 * `onClose` runs once, when the client goes away or {@link SseResponse.close} is called, or when
 * more than `maxBufferedBytes` wait for a client that does not read.
 */
export function openSse(
  req: FastifyRequest,
  reply: FastifyReply,
  onClose: () => void,
  heartbeatMs = HEARTBEAT_MS,
  maxBufferedBytes = MAX_BUFFERED_BYTES,
): SseResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-openstack-request-id': String(req.id),
  });
  raw.write(`retry: 2000\n\n`);
  let open = true;
  const heartbeat = setInterval(() => raw.write(`: heartbeat\n\n`), heartbeatMs);
  const close = () => {
    if (!open) return;
    open = false;
    clearInterval(heartbeat);
    onClose();
    raw.end();
  };
  raw.on('close', close);
  return {
    send: (messages) => {
      if (!open || messages.length === 0) return;
      raw.write(messages.map(format).join(''));
      if (raw.writableLength > maxBufferedBytes) close();
    },
    close,
    get open() {
      return open;
    },
  };
}
