import net from 'node:net';

/** One HTTP answer as read off the socket. */
export interface RawAnswer {
  readonly status: number | null;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Status line, headers and the whole Content-Length body arrived. */
  readonly complete: boolean;
}

export interface RawUploadResult {
  /** The answer to the over-large request, read while its body was still being sent. */
  readonly answer: RawAnswer;
  /** Sending the rest of the body after that answer failed: the server closed with bytes unread, so the kernel reset the connection. */
  readonly resetAfterAnswer: boolean;
  /** The answer to `next`, sent on the same connection after the whole body (null when the connection was gone). */
  readonly next: RawAnswer | null;
}

const parse = (buf: Buffer): RawAnswer & { length: number } => {
  const text = buf.toString('latin1');
  const split = text.indexOf('\r\n\r\n');
  const head = split >= 0 ? text.slice(0, split) : text;
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '');
  const want = Number(headers['content-length'] ?? NaN);
  const rest = split >= 0 ? text.slice(split + 4) : '';
  const complete = split >= 0 && Number.isFinite(want) && rest.length >= want;
  return {
    status: m ? Number(m[1]) : null,
    headers,
    body: complete ? rest.slice(0, want) : rest,
    complete,
    length: complete ? split + 4 + want : buf.length,
  };
};

/**
 * Sends `POST url` declaring a body of `size` bytes over a plain TCP socket: the headers and the
 * first 64 KiB, then it waits for the server's answer (a server refusing the size answers before
 * reading the body), then writes the rest of the body as a client that did not look at the answer
 * would, then sends `next` (a raw request) on the same connection and reads its answer. A server
 * that closes with unread bytes makes the kernel reset the connection: the client's writes fail
 * and, in a client that reads only after writing, the answer is lost. Every step waits on socket
 * events, never on a timer.
 */
export async function rawUpload(
  url: string,
  opts: { size: number; headers?: Record<string, string>; next?: string },
): Promise<RawUploadResult> {
  const u = new URL(url);
  const socket = net.connect({ port: Number(u.port), host: u.hostname, allowHalfOpen: true });
  let buffer = Buffer.alloc(0);
  let ended = false;
  let failed = false;
  let wake: (() => void) | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  socket.on('data', (d: Buffer) => {
    buffer = Buffer.concat([buffer, d]);
    poke();
  });
  socket.on('end', () => {
    ended = true;
    poke();
  });
  socket.on('error', () => {
    failed = true;
    ended = true;
    poke();
  });
  socket.on('close', () => {
    ended = true;
    poke();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });

  const readAnswer = async (): Promise<RawAnswer> => {
    for (;;) {
      const p = parse(buffer);
      if (p.complete || ended) {
        buffer = buffer.subarray(p.length);
        return { status: p.status, headers: p.headers, body: p.body, complete: p.complete };
      }
      await new Promise<void>((r) => (wake = r));
    }
  };
  const write = (data: Buffer | string): Promise<boolean> =>
    new Promise((resolve) => {
      if (failed || socket.destroyed) return resolve(false);
      socket.write(data, (err) => resolve(!err && !failed));
    });

  const headers = {
    host: u.host,
    'content-type': 'application/json',
    'content-length': String(opts.size),
    ...opts.headers,
  };
  const first = Math.min(64 * 1024, opts.size);
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  await write(
    `POST ${u.pathname}${u.search} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`,
  );
  await write(chunk.subarray(0, first));
  const answer = await readAnswer();
  let sent = first;
  let reset = false;
  while (sent < opts.size) {
    const n = Math.min(chunk.length, opts.size - sent);
    if (!(await write(chunk.subarray(0, n)))) {
      reset = true;
      break;
    }
    sent += n;
  }
  let next: RawAnswer | null = null;
  if (!reset && opts.next !== undefined && (await write(opts.next))) {
    next = await readAnswer();
    if (!next.complete) next = null;
  }
  reset ||= failed;
  socket.destroy();
  return { answer, resetAfterAnswer: reset, next };
}
