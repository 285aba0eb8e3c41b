'use strict';
/*
 * The CPU half of the backup pipeline, on a worker thread (see chunk-workers.ts): SHA-256 per hash
 * block, MD5 per stored object, compression and decompression. Plain CommonJS so it loads the same
 * under the app's loader, jest and the built image. Chunks and stored objects are SharedArrayBuffers,
 * shared with the caller, never copied nor transferred; what a native library returns (compressed
 * or decompressed bytes) is copied into an ArrayBuffer of its own and transferred (chunk-workers.ts
 * says why).
 *
 * Messages: { id, op, ...args } → { id, ok: true, ...result } | { id, ok: false, message }.
 */
const { parentPort, workerData } = require('node:worker_threads');
const crypto = require('node:crypto');
const { createHash } = crypto;
const zlib = require('node:zlib');

let zstd = null;
const zstdLib = () => (zstd ??= require(workerData.zstdModule));

// One-shot digests (Node ≥ 20.12) skip a Hash object per 32 KiB block.
const hex = crypto.hash
  ? (algo, bytes) => crypto.hash(algo, bytes, 'hex')
  : (algo, bytes) => createHash(algo).update(bytes).digest('hex');
const digest = crypto.hash
  ? (algo, bytes) => crypto.hash(algo, bytes, 'buffer')
  : (algo, bytes) => createHash(algo).update(bytes).digest();

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

/** Pieces at most this long are compressed without probing first. */
const PROBE_MIN = 1024 * 1024;
const PROBE_SAMPLES = 8;
const PROBE_SAMPLE = 32 * 1024;
/** A probe must shrink below this fraction for the whole piece to be compressed. */
const PROBE_RATIO = 0.97;

async function encode(codec, bytes) {
  if (codec === 'zlib') return zlib.deflateSync(bytes, { level: 1 });
  return zstdLib().compress(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length), 1);
}

/**
 * Whether compressing `piece` is worth its CPU: eight 32 KiB samples spread over the piece are
 * compressed together; when they do not shrink by 3%, the piece (random or already compressed
 * data) would not either, and compressing 32 MiB to find that out costs more than hashing it.
 */
async function worthCompressing(codec, piece) {
  if (piece.length <= PROBE_MIN) return true;
  const sample = Buffer.allocUnsafe(PROBE_SAMPLES * PROBE_SAMPLE);
  const step = Math.floor((piece.length - PROBE_SAMPLE) / (PROBE_SAMPLES - 1));
  for (let i = 0; i < PROBE_SAMPLES; i++)
    sample.set(piece.subarray(i * step, i * step + PROBE_SAMPLE), i * PROBE_SAMPLE);
  return (await encode(codec, sample)).length < sample.length * PROBE_RATIO;
}

/**
 * The piece's stored form: compressed bytes of their own, or `raw` (BS-11.4: stored as `none`)
 * when compression would not shrink it; the caller writes a raw piece straight out of the chunk.
 */
async function compress(codec, piece) {
  // An all-zero piece (a run an incremental must record) is stored as zlib whatever the codec.
  if (codec === 'none' && isZero(piece)) codec = 'zlib';
  if ((codec === 'zlib' || codec === 'zstd') && (await worthCompressing(codec, piece))) {
    const out = await encode(codec, piece);
    if (out.length < piece.length) return { codec, bytes: own(out) };
  }
  return { codec: 'none', bytes: null };
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

const zeroDigests = new Map();
/** SHA-256 of `size` zero bytes. */
function zeroDigest(size) {
  let d = zeroDigests.get(size);
  if (!d) zeroDigests.set(size, (d = digest('sha256', Buffer.alloc(size))));
  return d;
}

/**
 * Whether each `blockSize` block of `data` has the SHA-256 `digests` lists for it (32 bytes each,
 * the last block possibly short). A zero block listed with the zero digest is compared, not hashed.
 */
function sameBlocks(data, blockSize, digests) {
  if (digests.length !== Math.ceil(data.length / blockSize) * 32) return false;
  for (let off = 0, i = 0; off < data.length; off += blockSize, i += 32) {
    const block = data.subarray(off, Math.min(off + blockSize, data.length));
    const want = digests.subarray(i, i + 32);
    if (Buffer.compare(want, zeroDigest(block.length)) === 0 && isZero(block)) continue;
    if (Buffer.compare(want, digest('sha256', block)) !== 0) return false;
  }
  return true;
}

const ops = {
  /** Digest per hash block and which blocks are all zeros (their digest is the zero block's). */
  hash({ buf, offset: base, length, blockSize, zeroHash }) {
    const data = new Uint8Array(buf, base, length);
    const hashes = [];
    const zero = new Uint8Array(Math.ceil(length / blockSize));
    for (let off = 0, i = 0; off < length; off += blockSize, i++) {
      const block = data.subarray(off, Math.min(off + blockSize, length));
      if (isZero(block)) {
        zero[i] = 1;
        hashes.push(block.length === blockSize ? zeroHash : hex('sha256', block));
      } else hashes.push(hex('sha256', block));
    }
    return { value: { buf, hashes, zero }, transfer: [] };
  },

  /**
   * MD5 and stored form of each range of the chunk (the objects to store). A raw piece has no
   * bytes of its own (no copy): the caller writes it from the chunk, which is handed back.
   */
  async pack({ buf, offset: base, length, ranges, codec }) {
    const data = new Uint8Array(buf, base, length);
    const pieces = [];
    for (const [offset, len] of ranges) {
      const piece = data.subarray(offset, offset + len);
      const packed = await compress(codec, piece);
      pieces.push({ md5: hex('md5', piece), codec: packed.codec, bytes: packed.bytes });
    }
    return { value: { buf, pieces }, transfer: pieces.flatMap((p) => (p.bytes ? [p.bytes] : [])) };
  },

  /**
   * A stored object (the first `storedLength` bytes of `stored`) back to its bytes, checked
   * against the manifest's length and either the SHA-256 of each of its blocks from the backup's
   * hash file (`digests`, 32 bytes per `blockSize` block) or its MD5: SHA-256 is the faster of the
   * two on CPUs with SHA instructions (backup-reader.ts chooses). An object that fails the block
   * check is checked by its MD5 before it is called corrupt, so a hash file that does not describe
   * it (`hashFileMismatch`) never fails a restore the manifest vouches for. With `sparseBlock`,
   * also the runs that are not zeros (the rest need not be written). `bytes` is `stored` itself
   * for a raw object; otherwise `stored` comes back as `spare`, for the caller to reuse.
   */
  async unpack({ stored, storedOffset, storedLength, codec, length, md5, digests, blockSize, sparseBlock }) {
    const data = await decompress(codec, new Uint8Array(stored, storedOffset || 0, storedLength));
    let hashFileMismatch = false;
    const blocksMatch = digests && data.length === length && sameBlocks(data, blockSize, digests);
    if (!blocksMatch) {
      if (data.length !== length || hex('md5', data) !== md5)
        return { value: { corrupt: true, spare: stored }, transfer: [] };
      hashFileMismatch = Boolean(digests);
    }
    const raw = data.buffer === stored;
    const bytes = raw ? stored : own(data);
    const runs = sparseBlock > 0 ? nonZeroRuns(data, sparseBlock) : [[0, data.length]];
    return {
      value: {
        corrupt: false,
        hashFileMismatch,
        bytes,
        bytesOffset: raw ? storedOffset || 0 : 0,
        runs,
        spare: raw ? null : stored,
      },
      transfer: raw ? [] : [bytes],
    };
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
