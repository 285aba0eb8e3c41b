'use strict';
/*
 * The CPU half of the backup pipeline, on a worker thread (see chunk-workers.ts): SHA-256 per hash
 * block, MD5 per stored object, compression and decompression. Plain CommonJS so it loads the same
 * under the app's loader, jest and the built image. Buffers arrive and leave transferred, never
 * copied, except compressed output a native library owns.
 *
 * Messages: { id, op, ...args } → { id, ok: true, ...result } | { id, ok: false, message }.
 */
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const zlib = require('node:zlib');

let zstd = null;
const zstdLib = () => (zstd ??= require(workerData.zstdModule));

const hex = (algo, bytes) => createHash(algo).update(bytes).digest('hex');

const ZERO = Buffer.alloc(1024 * 1024);

/** Whether every byte is zero: memcmp against a zero buffer, a MiB at a time. */
function isZero(bytes) {
  for (let off = 0; off < bytes.length; off += ZERO.length) {
    const n = Math.min(ZERO.length, bytes.length - off);
    if (!Buffer.from(bytes.buffer, bytes.byteOffset + off, n).equals(ZERO.subarray(0, n))) return false;
  }
  return true;
}

/** A copy in an ArrayBuffer of its own, so it can be transferred. */
function own(bytes) {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return out.buffer;
}

async function compress(codec, piece) {
  // An all-zero piece (a run an incremental must record) is stored as zlib whatever the codec.
  if (codec === 'none' && isZero(piece)) codec = 'zlib';
  if (codec === 'zlib') {
    const out = zlib.deflateSync(piece, { level: 1 });
    if (out.length < piece.length) return { codec: 'zlib', bytes: own(out) };
  } else if (codec === 'zstd') {
    const out = await zstdLib().compress(Buffer.from(piece.buffer, piece.byteOffset, piece.length), 1);
    if (out.length < piece.length) return { codec: 'zstd', bytes: own(out) };
  }
  // BS-11.4: raw bytes when compression does not shrink the piece.
  return { codec: 'none', bytes: own(piece) };
}

async function decompress(codec, data) {
  switch (codec) {
    case 'none':
      return data;
    case 'zlib':
      return zlib.inflateSync(data);
    case 'zstd':
      return zstdLib().decompress(Buffer.from(data.buffer, data.byteOffset, data.length));
    default:
      throw new Error(`Unsupported backup compression algorithm on this worker: ${codec}`);
  }
}

/** Maximal runs of non-zero `block`-sized pieces of `bytes`, as [offset, length] pairs. */
function nonZeroRuns(bytes, block) {
  const runs = [];
  let start = -1;
  for (let off = 0; off < bytes.length; off += block) {
    const zero = isZero(bytes.subarray(off, Math.min(off + block, bytes.length)));
    if (!zero && start < 0) start = off;
    if (zero && start >= 0) {
      runs.push([start, off - start]);
      start = -1;
    }
  }
  if (start >= 0) runs.push([start, bytes.length - start]);
  return runs;
}

const ops = {
  /** Digest per hash block and which blocks are all zeros (their digest is the zero block's). */
  hash({ buf, length, blockSize, zeroHash }) {
    const data = new Uint8Array(buf, 0, length);
    const hashes = [];
    const zero = new Uint8Array(Math.ceil(length / blockSize));
    for (let off = 0, i = 0; off < length; off += blockSize, i++) {
      const block = data.subarray(off, Math.min(off + blockSize, length));
      if (isZero(block)) {
        zero[i] = 1;
        hashes.push(block.length === blockSize ? zeroHash : hex('sha256', block));
      } else hashes.push(hex('sha256', block));
    }
    return { value: { buf, hashes, zero }, transfer: [buf, zero.buffer] };
  },

  /** MD5 and compressed bytes of each range of the chunk (the objects to store). */
  async pack({ buf, length, ranges, codec }) {
    const data = new Uint8Array(buf, 0, length);
    const pieces = [];
    for (const [offset, len] of ranges) {
      const piece = data.subarray(offset, offset + len);
      const packed = await compress(codec, piece);
      pieces.push({ md5: hex('md5', piece), codec: packed.codec, bytes: packed.bytes });
    }
    return { value: { buf, pieces }, transfer: [buf, ...pieces.map((p) => p.bytes)] };
  },

  /**
   * A stored object back to its bytes, checked against the manifest's length and MD5; with
   * `sparseBlock`, also the runs that are not zeros (the rest need not be written).
   */
  async unpack({ stored, codec, length, md5, sparseBlock }) {
    const data = await decompress(codec, new Uint8Array(stored));
    if (data.length !== length || hex('md5', data) !== md5) return { value: { corrupt: true }, transfer: [] };
    const bytes = data.buffer === stored ? stored : own(data);
    const runs = sparseBlock > 0 ? nonZeroRuns(data, sparseBlock) : [[0, data.length]];
    return { value: { corrupt: false, bytes, runs }, transfer: [bytes] };
  },
};

parentPort.on('message', (m) => {
  Promise.resolve()
    .then(() => ops[m.op](m))
    .then(
      (r) => parentPort.postMessage({ id: m.id, ok: true, ...r.value }, r.transfer),
      (err) => parentPort.postMessage({ id: m.id, ok: false, message: String((err && err.message) || err) }),
    );
});
