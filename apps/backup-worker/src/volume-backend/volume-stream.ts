import { createHash, createHmac, timingSafeEqual, type Hash } from 'node:crypto';

/**
 * The data path between back-end hosts for a migration: the source back end streams a volume's
 * file to the destination over HTTP, only the blocks that hold data, and the destination checks the
 * stream's digest before it keeps the copy.
 *
 * Stream format (`application/x-osc-volume-stream`), every integer big-endian:
 * - frames of `[u64 offset][u32 length][length bytes]`, `length > 0`, offsets increasing;
 * - then one end frame `[u64 size][u32 0][32 bytes sha256 of every byte before it]`, `size` the
 *   source file's length. A stream that stops before its end frame, or whose digest differs, is refused.
 *
 * Requests (GET the stream; DELETE the source copy once the volume moved) carry
 * `Authorization: OSC-HMAC <expires>:<hex>`, an HMAC-SHA256 with the secret the back ends share
 * (`VOLUME_DATA_SECRET`) over the method, back end, volume id and expiry (unix seconds), so the
 * secret itself never travels and a token opens one volume of one back end, for one method, briefly.
 */
export const VOLUME_STREAM_CONTENT_TYPE = 'application/x-osc-volume-stream';
export const FRAME_HEADER = 12;
const DIGEST = 32;
/** Seconds a signed request stays valid. */
export const TOKEN_TTL_SECONDS = 300;

export function frameHeader(offset: number, length: number): Buffer {
  const h = Buffer.alloc(FRAME_HEADER);
  h.writeBigUInt64BE(BigInt(offset), 0);
  h.writeUInt32BE(length, 8);
  return h;
}

/** Encodes frames, hashing what it emits, and ends with the end frame. */
export class FrameEncoder {
  private readonly hash: Hash = createHash('sha256');

  frame(offset: number, data: Buffer): Buffer[] {
    if (data.length === 0) throw new Error('a frame holds at least one byte');
    const h = frameHeader(offset, data.length);
    this.hash.update(h);
    this.hash.update(data);
    return [h, data];
  }

  end(size: number): Buffer {
    const h = frameHeader(size, 0);
    this.hash.update(h);
    return Buffer.concat([h, this.hash.digest()]);
  }
}

export type DecodedPart = { kind: 'data'; offset: number; data: Buffer } | { kind: 'end'; size: number };

/** Where a stream is refused: its text says what was wrong. */
export class VolumeStreamError extends Error {}

/**
 * Incremental decoder: `push` each received chunk and write out the data parts it returns; `finish`
 * once the body ended. Offsets must increase and stay below `maxBytes`; anything after the end frame,
 * a stream cut short or a digest that differs throws VolumeStreamError.
 */
export class FrameDecoder {
  private readonly hash: Hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private nextOffset = 0;
  private ended: number | null = null;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): DecodedPart[] {
    if (this.ended !== null) {
      if (chunk.length > 0) throw new VolumeStreamError('data after the end of the volume stream');
      return [];
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    const parts: DecodedPart[] = [];
    for (;;) {
      if (this.pendingBytes < FRAME_HEADER) return parts;
      const head = this.peek(FRAME_HEADER);
      const offset = Number(head.readBigUInt64BE(0));
      const length = head.readUInt32BE(8);
      const whole = FRAME_HEADER + (length === 0 ? DIGEST : length);
      if (this.pendingBytes < whole) return parts;
      const buf = this.take(whole);
      if (length === 0) {
        this.hash.update(buf.subarray(0, FRAME_HEADER));
        const expected = this.hash.digest();
        if (!timingSafeEqual(expected, buf.subarray(FRAME_HEADER)))
          throw new VolumeStreamError('the volume stream digest does not match its data');
        if (offset < this.nextOffset || offset > this.maxBytes)
          throw new VolumeStreamError(`the volume stream ends at ${offset}, outside 0..${this.maxBytes}`);
        this.ended = offset;
        if (this.pendingBytes > 0) throw new VolumeStreamError('data after the end of the volume stream');
        parts.push({ kind: 'end', size: offset });
        return parts;
      }
      if (offset < this.nextOffset || offset + length > this.maxBytes)
        throw new VolumeStreamError(
          `a frame at ${offset} of ${length} bytes is out of order or past ${this.maxBytes}`,
        );
      this.nextOffset = offset + length;
      this.hash.update(buf);
      parts.push({ kind: 'data', offset, data: buf.subarray(FRAME_HEADER) });
    }
  }

  /** The source file's size, once the whole stream was read and checked. */
  finish(): number {
    if (this.ended === null) throw new VolumeStreamError('the volume stream ended before its end frame');
    return this.ended;
  }

  private peek(n: number): Buffer {
    const first = this.pending[0] as Buffer;
    if (first.length >= n) return first.subarray(0, n);
    return Buffer.concat(this.pending).subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.pending.length === 1 ? (this.pending[0] as Buffer) : Buffer.concat(this.pending);
    const out = Buffer.from(all.subarray(0, n));
    const rest = all.subarray(n);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return out;
  }
}

const mac = (secret: string, method: string, backend: string, volumeId: string, expires: number): string =>
  createHmac('sha256', secret).update(`${method}\n${backend}\n${volumeId}\n${expires}`).digest('hex');

export type VolumeRequestMethod = 'GET' | 'DELETE';

/** The Authorization header value for `method` on `volumeId` of `backend`, valid until `now + ttl`. */
export function signVolumeRequest(
  secret: string,
  method: VolumeRequestMethod,
  backend: string,
  volumeId: string,
  nowMs: number,
  ttlSeconds = TOKEN_TTL_SECONDS,
): string {
  const expires = Math.floor(nowMs / 1000) + ttlSeconds;
  return `OSC-HMAC ${expires}:${mac(secret, method, backend, volumeId, expires)}`;
}

/** Null when the header authorizes `method` on `volumeId` of `backend` at `nowMs`, else why not. */
export function checkVolumeRequest(
  secret: string,
  header: string | undefined,
  method: VolumeRequestMethod,
  backend: string,
  volumeId: string,
  nowMs: number,
): string | null {
  const m = /^OSC-HMAC (\d{1,12}):([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return 'missing or malformed OSC-HMAC authorization';
  const expires = Number(m[1]);
  if (expires * 1000 < nowMs) return 'the signature has expired';
  if (expires * 1000 > nowMs + (TOKEN_TTL_SECONDS + 60) * 1000) return 'the signature expires too far ahead';
  const want = Buffer.from(mac(secret, method, backend, volumeId, expires), 'hex');
  if (!timingSafeEqual(want, Buffer.from(m[2] as string, 'hex'))) return 'the signature does not match';
  return null;
}
