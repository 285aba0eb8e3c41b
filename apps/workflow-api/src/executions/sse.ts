import type { FastifyReply, FastifyRequest } from 'fastify';

/** A comment line this often keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;

/** Whether the client asks for Server-Sent Events (`Accept: text/event-stream`). */
export const wantsStream = (accept: string | undefined): boolean => (accept ?? '').split(',').some((a) => a.trim().startsWith('text/event-stream'));

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

const format = (m: SseMessage): string => `id: ${m.id}\nevent: ${m.event}\ndata: ${JSON.stringify(m.data)}\n\n`;

/**
 * Takes the reply over from Fastify and answers `200 text/event-stream` (our extension's streams,
 * docs/workflow-events.md): a `retry:` hint, then a heartbeat comment every `heartbeatMs`.
 * `onClose` runs once, when the client goes away or {@link SseResponse.close} is called.
 */
export function openSse(req: FastifyRequest, reply: FastifyReply, onClose: () => void, heartbeatMs = HEARTBEAT_MS): SseResponse {
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
      if (open && messages.length > 0) raw.write(messages.map(format).join(''));
    },
    close,
    get open() {
      return open;
    },
  };
}
