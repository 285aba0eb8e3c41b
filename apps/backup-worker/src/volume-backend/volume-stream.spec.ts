import {
  checkVolumeRequest,
  FrameDecoder,
  FrameEncoder,
  signVolumeRequest,
  TOKEN_TTL_SECONDS,
  VolumeStreamError,
} from './volume-stream';

const ID = '0b0f6c3e-8d1a-4c47-9d1e-5b2a9f6e7c10';
const SECRET = 'a-shared-secret-of-length';

function encode(frames: [number, Buffer][], size: number): Buffer {
  const enc = new FrameEncoder();
  return Buffer.concat([...frames.flatMap(([o, d]) => enc.frame(o, d)), enc.end(size)]);
}

function decodeAll(
  stream: Buffer,
  max: number,
  pieces: number[] = [stream.length],
): { data: [number, string][]; size: number } {
  const dec = new FrameDecoder(max);
  const data: [number, string][] = [];
  let at = 0;
  for (const n of [...pieces, stream.length]) {
    for (const p of dec.push(stream.subarray(at, Math.min(stream.length, at + n))))
      if (p.kind === 'data') data.push([p.offset, p.data.toString()]);
    at = Math.min(stream.length, at + n);
  }
  return { data, size: dec.finish() };
}

describe('volume stream frames', () => {
  const stream = encode(
    [
      [0, Buffer.from('first')],
      [4096, Buffer.from('second block')],
    ],
    8192,
  );

  it('round-trips frames and the size however the bytes are split', () => {
    const want = {
      data: [
        [0, 'first'],
        [4096, 'second block'],
      ],
      size: 8192,
    };
    expect(decodeAll(stream, 8192)).toEqual(want);
    expect(decodeAll(stream, 8192, Array(stream.length).fill(1))).toEqual(want);
    expect(decodeAll(stream, 8192, [5, 13, 2, 30])).toEqual(want);
  });

  it('refuses a stream whose bytes changed on the way', () => {
    const bad = Buffer.from(stream);
    bad[14] = (bad[14] as number) ^ 0xff; // a data byte of the first frame
    expect(() => decodeAll(bad, 8192)).toThrow(
      new VolumeStreamError('the volume stream digest does not match its data'),
    );
  });

  it('refuses a stream cut short before its end frame', () => {
    expect(() => decodeAll(stream.subarray(0, stream.length - 1), 8192)).toThrow(
      /ended before its end frame/,
    );
    expect(() => decodeAll(stream.subarray(0, 17), 8192)).toThrow(/ended before its end frame/);
  });

  it('refuses data after the end frame, frames out of order and frames past the volume', () => {
    expect(() => decodeAll(Buffer.concat([stream, Buffer.from('x')]), 8192)).toThrow(/data after the end/);
    expect(() =>
      decodeAll(
        encode(
          [
            [4096, Buffer.from('b')],
            [0, Buffer.from('a')],
          ],
          8192,
        ),
        8192,
      ),
    ).toThrow(/out of order/);
    expect(() => decodeAll(encode([[8190, Buffer.from('abc')]], 8193), 8192)).toThrow(/past 8192/);
    expect(() => decodeAll(encode([], 9000), 8192)).toThrow(/ends at 9000/);
  });

  it('never encodes an empty frame', () => {
    expect(() => new FrameEncoder().frame(0, Buffer.alloc(0))).toThrow();
  });
});

describe('volume request signatures', () => {
  const now = 1_800_000_000_000;
  const backend = 'host-a@file';

  it('accepts its own signature for the same method, back end and volume', () => {
    expect(
      checkVolumeRequest(
        SECRET,
        signVolumeRequest(SECRET, 'GET', backend, ID, now),
        'GET',
        backend,
        ID,
        now + 1000,
      ),
    ).toBeNull();
    expect(
      checkVolumeRequest(
        SECRET,
        signVolumeRequest(SECRET, 'DELETE', backend, ID, now),
        'DELETE',
        backend,
        ID,
        now,
      ),
    ).toBeNull();
  });

  it('refuses another secret, method, back end or volume', () => {
    const token = signVolumeRequest(SECRET, 'GET', backend, ID, now);
    expect(checkVolumeRequest('another-secret-entirely', token, 'GET', backend, ID, now)).toBe(
      'the signature does not match',
    );
    expect(checkVolumeRequest(SECRET, token, 'DELETE', backend, ID, now)).toBe(
      'the signature does not match',
    );
    expect(checkVolumeRequest(SECRET, token, 'GET', 'host-b@file', ID, now)).toBe(
      'the signature does not match',
    );
    expect(checkVolumeRequest(SECRET, token, 'GET', backend, ID.replace('0b0f', '1b0f'), now)).toBe(
      'the signature does not match',
    );
  });

  it('refuses expired, far-future and malformed headers', () => {
    expect(
      checkVolumeRequest(
        SECRET,
        signVolumeRequest(SECRET, 'GET', backend, ID, now),
        'GET',
        backend,
        ID,
        now + (TOKEN_TTL_SECONDS + 1) * 1000,
      ),
    ).toBe('the signature has expired');
    expect(
      checkVolumeRequest(
        SECRET,
        signVolumeRequest(SECRET, 'GET', backend, ID, now, 100_000),
        'GET',
        backend,
        ID,
        now,
      ),
    ).toBe('the signature expires too far ahead');
    expect(checkVolumeRequest(SECRET, undefined, 'GET', backend, ID, now)).toMatch(/missing or malformed/);
    expect(checkVolumeRequest(SECRET, `Bearer ${SECRET}`, 'GET', backend, ID, now)).toMatch(
      /missing or malformed/,
    );
  });
});
