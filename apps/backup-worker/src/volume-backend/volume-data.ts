import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { open } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  checkVolumeRequest,
  FrameDecoder,
  FrameEncoder,
  signVolumeRequest,
  VOLUME_STREAM_CONTENT_TYPE,
  VolumeStreamError,
} from './volume-stream';

const BLOCK = 1024 * 1024;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** The non-zero 1 MiB blocks of a file as stream frames, then the end frame. */
export async function* volumeFrames(file: string): AsyncGenerator<Buffer> {
  const fh = await open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    const enc = new FrameEncoder();
    const zero = Buffer.alloc(BLOCK);
    for (let pos = 0; pos < size; pos += BLOCK) {
      const buf = Buffer.allocUnsafe(Math.min(BLOCK, size - pos));
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      if (!chunk.equals(zero.subarray(0, bytesRead))) yield* enc.frame(pos, chunk);
    }
    yield enc.end(size);
  } finally {
    await fh.close();
  }
}

export interface VolumeDataServerOptions {
  readonly backend: string;
  readonly secret: string;
  readonly host: string;
  readonly port: number;
  /** The file of a volume of this back end. */
  fileOf(volumeId: string): string;
  /** Whether the volume is migrating away from this back end now (only then are its bytes served). */
  mayServe(volumeId: string): Promise<boolean>;
  /** Removes the volume's file if the volume is no longer on this back end; false when it still is. */
  removeMovedAway(volumeId: string): Promise<boolean>;
  now(): number;
  warn(message: string): void;
}

/**
 * The streaming HTTP endpoint of one back end: `GET /v1/backends/<backend>/volumes/<id>` answers
 * the volume's file as a volume stream (see volume-stream.ts) to a request signed with the shared
 * secret, while that volume is migrating away from this back end; `DELETE` on the same path removes
 * the file once the volume has moved to another back end (204). Errors are JSON `{ error }`.
 */
export async function startVolumeDataServer(o: VolumeDataServerOptions): Promise<Server> {
  const path = new RegExp(`^/v1/backends/([^/]+)/volumes/(${UUID})$`);
  const reply = (res: ServerResponse, status: number, error: string): void => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const m = path.exec(req.url ?? '');
    if (!m) return reply(res, 404, 'not found');
    const method = req.method;
    if (method !== 'GET' && method !== 'DELETE') return reply(res, 405, 'only GET and DELETE');
    const backend = decodeURIComponent(m[1] as string);
    const id = m[2] as string;
    if (backend !== o.backend) return reply(res, 404, `back end ${backend} is not served here`);
    const refused = checkVolumeRequest(o.secret, req.headers.authorization, method, backend, id, o.now());
    if (refused) return reply(res, 401, refused);
    if (method === 'DELETE') {
      if (!(await o.removeMovedAway(id))) return reply(res, 409, `volume ${id} is still on ${backend}`);
      res.writeHead(204).end();
      return;
    }
    if (!(await o.mayServe(id))) return reply(res, 409, `volume ${id} is not migrating away from ${backend}`);
    let frames: AsyncGenerator<Buffer>;
    try {
      frames = volumeFrames(o.fileOf(id));
      const first = await frames.next();
      res.writeHead(200, { 'content-type': VOLUME_STREAM_CONTENT_TYPE });
      if (!first.done) res.write(first.value);
    } catch (err) {
      return reply(
        res,
        (err as NodeJS.ErrnoException).code === 'ENOENT' ? 404 : 500,
        `volume ${id}: ${String(err)}`,
      );
    }
    await pipeline(Readable.from(frames), res);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      o.warn(`volume data request ${req.url ?? ''} failed: ${String(err)}`);
      if (!res.headersSent) reply(res, 500, 'internal error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/**
 * Reads a volume from another back end's data endpoint into `dest` (created, `bytes` long at least),
 * writing only the frames received so holes stay holes. Throws unless the whole stream arrived with
 * a matching digest; the caller removes `dest` then.
 */
export async function fetchRemoteVolume(opts: {
  baseUrl: string;
  backend: string;
  volumeId: string;
  secret: string;
  dest: string;
  bytes: number;
  now: number;
  timeoutMs: number;
}): Promise<number> {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/v1/backends/${encodeURIComponent(opts.backend)}/volumes/${opts.volumeId}`;
  const res = await fetch(url, {
    headers: { authorization: signVolumeRequest(opts.secret, 'GET', opts.backend, opts.volumeId, opts.now) },
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  if (res.status !== 200 || !res.body)
    throw new VolumeStreamError(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  if (!(res.headers.get('content-type') ?? '').startsWith(VOLUME_STREAM_CONTENT_TYPE))
    throw new VolumeStreamError(`${url} answered ${res.headers.get('content-type')}, not a volume stream`);
  const out = await open(opts.dest, 'w', 0o600);
  try {
    await out.truncate(opts.bytes);
    const decoder = new FrameDecoder(opts.bytes);
    for await (const chunk of Readable.fromWeb(res.body as never) as AsyncIterable<Buffer>) {
      for (const part of decoder.push(chunk))
        if (part.kind === 'data') await out.write(part.data, 0, part.data.length, part.offset);
    }
    const size = decoder.finish();
    await out.sync();
    return size;
  } finally {
    await out.close();
  }
}

/** Asks the source back end to remove its copy of a volume that has moved away from it. */
export async function removeRemoteVolume(opts: {
  baseUrl: string;
  backend: string;
  volumeId: string;
  secret: string;
  now: number;
  timeoutMs: number;
}): Promise<void> {
  const url = `${opts.baseUrl.replace(/\/+$/, '')}/v1/backends/${encodeURIComponent(opts.backend)}/volumes/${opts.volumeId}`;
  const res = await fetch(url, {
    method: 'DELETE',
    headers: {
      authorization: signVolumeRequest(opts.secret, 'DELETE', opts.backend, opts.volumeId, opts.now),
    },
    signal: AbortSignal.timeout(opts.timeoutMs),
  });
  if (res.status !== 204)
    throw new VolumeStreamError(`${url} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
}
