import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import {
  assertChunkParameters,
  assertIncrementalCompatible,
  changedRanges,
  dataObjectName,
  hashFileDocument,
  hashFileObjectName,
  manifestDocument,
  manifestObjectName,
  nonZeroRanges,
  parseManifestObjects,
  planChunks,
  unchangedSinceParent,
  type BackupCodec,
  type BackupDescription,
  type ChunkParameters,
  type ChunkRange,
  type ManifestObject,
} from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import type { BackupStore } from './stores';
import type { ChunkWorkers, PackedPiece } from './chunk-workers';

/** Where a backup's objects live: the container and the object-name prefix (its service_metadata). */
export interface BackupLocation {
  readonly container: string;
  readonly prefix: string;
}

/** Thrown when the backup left the status the operation needs (deleted, force-deleted, reset). */
export class BackupCancelledError extends Error {}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/**
 * A running job's progress report: `done` of `total` bytes; resolves false when the job must stop
 * (the backup left the status the job needs). Called at least once per chunk's worth of bytes.
 */
export type ProgressReport = (done: number, total: number) => Promise<boolean>;

/** At most `limit` holders at once; the bound on chunks in flight. */
class Gate {
  private held = 0;
  private readonly queue: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async enter(): Promise<void> {
    if (this.held < this.limit) {
      this.held++;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }
  leave(): void {
    const next = this.queue.shift();
    if (next) next();
    else this.held--;
  }
}

export interface CreateBackupOptions {
  readonly store: BackupStore;
  readonly workers: ChunkWorkers;
  readonly params: ChunkParameters;
  readonly codec: BackupCodec;
  /** Chunks read, hashed, compressed or written at once (memory ≈ twice this many chunks). */
  readonly depth: number;
  /** The file holding the bytes (volume or snapshot). */
  readonly source: string;
  /** Bytes to back up (the volume's size). */
  readonly bytes: number;
  readonly location: BackupLocation;
  readonly description: BackupDescription;
  readonly volumeMeta: string;
  /** The parent's location for an incremental backup (BS-11.6). */
  readonly parent: BackupLocation | null;
  /** Reported after each chunk is stored; false = stop (BS-11.4). */
  readonly progress: ProgressReport;
  /**
   * An incremental in which no block differs from the parent is not stored at all (a backup
   * policy's `skip_unchanged`): nothing is written and the answer says `unchanged`.
   */
  readonly dropUnchanged?: boolean;
}

/** A chunk ready to be written: its buffer, the ranges to store and their packed pieces. */
interface Prepared {
  readonly buf: ArrayBuffer;
  readonly ranges: ChunkRange[];
  readonly pieces: PackedPiece[];
}

/** A stored backup's hash file: its block size and each block's SHA-256, in volume order. */
async function readHashFile(
  store: BackupStore,
  loc: BackupLocation,
): Promise<{ chunk_size: number; sha256s: string[] }> {
  return JSON.parse((await store.read(loc.container, hashFileObjectName(loc.prefix))).toString('utf8')) as {
    chunk_size: number;
    sha256s: string[];
  };
}

/** Reads `length` bytes at `offset` into `buf`; a source shorter than the volume reads as zeros. */
async function readFully(fh: FileHandle, buf: Buffer, length: number, offset: number): Promise<void> {
  let filled = 0;
  while (filled < length) {
    const { bytesRead } = await fh.read(buf, filled, length - filled, offset + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  if (filled < length) buf.fill(0, filled, length);
}

/**
 * Writes a full or incremental backup (BS-11.4–11.6) as a pipeline: chunks are read, hashed,
 * compressed and written concurrently, at most `depth` chunks in flight, the CPU work on worker
 * threads; objects are named and listed in volume order whatever order chunks finish in. A full
 * backup stores only the runs of blocks that are not zeros (BS-11.9: restore reads the rest as
 * zeros); an incremental the runs whose digest differs from the parent's. Data objects first,
 * hash file and manifest last, so a backup without a manifest is recognisably incomplete. On
 * cancel the written objects are removed.
 */
export async function writeBackup(
  o: CreateBackupOptions,
): Promise<{ readonly objectCount: number; readonly unchanged?: true }> {
  assertChunkParameters(o.params);
  const { chunkSize, blockSize } = o.params;
  let parentHashes: string[] | null = null;
  const volumeBytes = Math.ceil(o.bytes / blockSize) * blockSize;
  let parentVolumeBytes = 0;
  if (o.parent) {
    const doc = await readHashFile(o.store, o.parent);
    assertIncrementalCompatible({
      parentBlockSize: doc.chunk_size,
      blockSize,
      parentVolumeBytes: doc.sha256s.length * blockSize,
      volumeBytes,
    });
    parentHashes = doc.sha256s;
    parentVolumeBytes = doc.sha256s.length * blockSize;
  }
  await o.store.ensureContainer(o.location.container);
  const zeroHash = sha256(Buffer.alloc(blockSize));
  const chunks = planChunks(o.bytes, chunkSize);
  const hashes: string[][] = new Array<string[]>(chunks.length);
  const objects: ManifestObject[] = [];
  const depth = Math.max(1, o.depth);
  const buffers: ArrayBuffer[] = [];
  const input = await open(o.source, 'r');

  /**
   * Read, hash, choose ranges and pack one chunk (runs concurrently with its neighbours). The
   * chunk's buffer comes back with its pieces: raw pieces are written straight out of it, and it
   * returns to the pool once they are.
   */
  const prepare = async (index: number, chunk: ChunkRange): Promise<Prepared> => {
    let buf = buffers.pop() ?? new ArrayBuffer(chunkSize);
    await readFully(input, Buffer.from(buf), chunk.length, chunk.offset);
    const h = await o.workers.hash(buf, chunk.length, blockSize, zeroHash);
    buf = h.buf;
    hashes[index] = h.hashes;
    const first = chunk.offset / blockSize;
    const ranges =
      parentHashes === null
        ? nonZeroRanges(h.zero, blockSize, chunk.length, chunkSize)
        : changedRanges(
            parentHashes.slice(first, first + h.hashes.length),
            h.hashes,
            blockSize,
            chunk.length,
            chunkSize,
          );
    if (ranges.length === 0) return { buf, ranges, pieces: [] };
    const packed = await o.workers.pack(
      buf,
      chunk.length,
      ranges.map((r) => [r.offset, r.length] as const),
      o.codec,
    );
    return { buf: packed.buf, ranges, pieces: packed.pieces };
  };

  const inFlight: Promise<Prepared>[] = [];
  // The previous chunk's progress report, awaited only after the next chunk is written: the
  // database round trip overlaps the writes, and a cancel is seen one chunk later at most.
  let report: Promise<boolean> | null = null;
  const cancelled = async (): Promise<boolean> => report !== null && !(await report);
  let done = 0;
  // A first report as the work starts: the time to its first chunk (chunk workers starting, the
  // first reads) is not a stretch without progress for the reconciler.
  report = o.progress(0, o.bytes);
  report.catch(() => undefined);
  try {
    let next = 0;
    for (let written = 0; written < chunks.length; written++) {
      // Keep `depth` chunks in preparation ahead of the one being written.
      while (next < chunks.length && next - written < depth) {
        const i = next++;
        const p = prepare(i, chunks[i] as ChunkRange);
        p.catch(() => undefined);
        inFlight[i] = p;
      }
      const chunk = chunks[written] as ChunkRange;
      const { buf, ranges, pieces } = await (inFlight[written] as Promise<Prepared>);
      delete inFlight[written];
      const data = Buffer.from(buf);
      for (const [k, r] of ranges.entries()) {
        const piece = pieces[k] as PackedPiece;
        const name = dataObjectName(o.location.prefix, objects.length + 1);
        const bytes =
          piece.bytes === null ? data.subarray(r.offset, r.offset + r.length) : Buffer.from(piece.bytes);
        await o.store.write(o.location.container, name, bytes);
        objects.push({
          name,
          offset: chunk.offset + r.offset,
          length: r.length,
          compression: piece.codec,
          md5: piece.md5,
        });
      }
      buffers.push(buf);
      done += chunk.length;
      if (await cancelled()) throw new BackupCancelledError('The backup was cancelled.');
      report = o.progress(done, o.bytes);
      report.catch(() => undefined);
    }
    if (await cancelled()) throw new BackupCancelledError('The backup was cancelled.');
  } catch (err) {
    // Let chunks still in preparation finish before the input closes under them.
    await Promise.allSettled([...inFlight.filter((p) => p !== undefined), report]);
    await input.close();
    if (err instanceof BackupCancelledError)
      await o.store.deletePrefix(o.location.container, o.location.prefix);
    throw err;
  }
  await input.close();
  if (
    parentHashes !== null &&
    o.dropUnchanged === true &&
    unchangedSinceParent(objects, volumeBytes, parentVolumeBytes)
  )
    return { objectCount: 0, unchanged: true };
  await o.store.write(
    o.location.container,
    hashFileObjectName(o.location.prefix),
    Buffer.from(hashFileDocument(o.description, blockSize, hashes.flat()), 'utf8'),
  );
  await o.store.write(
    o.location.container,
    manifestObjectName(o.location.prefix),
    Buffer.from(manifestDocument(o.description, objects, o.volumeMeta), 'utf8'),
  );
  return { objectCount: objects.length };
}

/**
 * Whether the source's blocks are exactly those of a stored backup (its hash file), read chunk by
 * chunk and given up at the first block that differs: a backup policy's full backup that would change
 * nothing (`skip_unchanged`) is known before anything is written. A backup of another block size or
 * volume size is never the same.
 */
export async function sameBlocksAs(o: {
  readonly store: BackupStore;
  readonly workers: ChunkWorkers;
  readonly params: ChunkParameters;
  readonly source: string;
  readonly bytes: number;
  readonly base: BackupLocation;
}): Promise<boolean> {
  const { chunkSize, blockSize } = o.params;
  const doc = await readHashFile(o.store, o.base);
  if (doc.chunk_size !== blockSize || doc.sha256s.length !== Math.ceil(o.bytes / blockSize)) return false;
  const zeroHash = sha256(Buffer.alloc(blockSize));
  const input = await open(o.source, 'r');
  let buf = new ArrayBuffer(chunkSize);
  try {
    for (const chunk of planChunks(o.bytes, chunkSize)) {
      await readFully(input, Buffer.from(buf), chunk.length, chunk.offset);
      const h = await o.workers.hash(buf, chunk.length, blockSize, zeroHash);
      buf = h.buf;
      const first = chunk.offset / blockSize;
      if (h.hashes.some((x, i) => x !== doc.sha256s[first + i])) return false;
    }
    return true;
  } finally {
    await input.close();
  }
}

/** Reads a backup's manifest and checks the stored data objects are exactly the listed ones (BS-11.7). */
export async function readManifest(
  store: BackupStore,
  loc: BackupLocation,
): Promise<{ objects: ManifestObject[]; volumeMeta: string | null }> {
  let text: string;
  try {
    text = (await store.read(loc.container, manifestObjectName(loc.prefix))).toString('utf8');
  } catch {
    throw new InvalidInputError(`Invalid backup: the manifest ${manifestObjectName(loc.prefix)} is missing.`);
  }
  const objects = parseManifestObjects(text);
  const stored = new Set(await store.list(loc.container, `${loc.prefix}-`));
  const listed = new Set(objects.map((x) => x.name));
  if (stored.size !== listed.size || [...listed].some((n) => !stored.has(n))) {
    throw new InvalidInputError(
      `Invalid backup: the stored objects of ${loc.prefix} do not match its manifest.`,
    );
  }
  const doc = JSON.parse(text) as { volume_meta?: unknown };
  return { objects, volumeMeta: typeof doc.volume_meta === 'string' ? doc.volume_meta : null };
}

const MIB = 1024 * 1024;
/** Bytes a restore writes between two fdatasyncs it starts. */
const SYNC_EVERY = 256 * MIB;
/** Granularity of the zero runs a restore leaves as holes. */
const SPARSE_BLOCK = 32 * 1024;

export interface RestoreOptions {
  readonly store: BackupStore;
  readonly workers: ChunkWorkers;
  /** Objects read, checked and written at once. */
  readonly depth: number;
  /** The full backup first, then each incremental up to the requested one. */
  readonly chain: readonly BackupLocation[];
  readonly target: string;
  /** Bytes of the backup (its volume size): ranges of the full backup without objects are zeros. */
  readonly bytes: number;
  /** A freshly created (sparse, all-zero) target: zero ranges are skipped (BS-11.7). */
  readonly newVolume: boolean;
  /** Reported at least once per chunk's worth of restored bytes; false = stop. */
  readonly progress: ProgressReport;
  /** Bytes between two progress reports at most. */
  readonly reportEvery: number;
}

/**
 * Writes the chain's bytes into the target (BS-11.7); returns the requested backup's volume_meta.
 * Objects are read, decompressed and checked (length, MD5) concurrently, at most `depth` at once;
 * each backup of the chain is applied whole before the next. The full backup lands on a target
 * that is all holes (a new volume, or an existing one of the backup's size truncated to nothing and
 * back), and its zero blocks are not written, so they stay holes; ranges no object covers are zeros.
 */
export async function restoreBackup(o: RestoreOptions): Promise<string | null> {
  const manifests = [];
  for (const loc of o.chain) manifests.push({ loc, ...(await readManifest(o.store, loc)) });
  const total = manifests.reduce((n, m) => n + m.objects.reduce((k, x) => k + x.length, 0), 0);
  const out = await open(o.target, 'r+');
  const pool = new BufferPool(Math.max(1, o.depth) + 1);
  let done = 0;
  let reported = 0;
  // One progress report in flight, awaited by the next one (or at the end): the database round
  // trip does not hold a slot of the pipeline, and a cancel is seen one report later at most.
  let report: Promise<boolean> | null = null;
  const progress = async (): Promise<void> => {
    if (report !== null && !(await report)) throw new BackupCancelledError('The restore was cancelled.');
    report = o.progress(done, total);
    report.catch(() => undefined);
  };
  // A first report as the work starts (see writeBackup).
  await progress();
  // Written bytes are flushed while the restore goes on (one fdatasync in flight), so the disk
  // writes back during the reads and the CPU work instead of all at the final sync.
  // A failed background sync fails the restore: the kernel reports a write-back error to one
  // fsync only, so the final one would not see it again.
  let unsynced = 0;
  let flushing: Promise<void> | null = null;
  let syncFailure: unknown = null;
  const flush = (): void => {
    if (unsynced < SYNC_EVERY || flushing !== null) return;
    unsynced = 0;
    flushing = out
      .datasync()
      .catch((err: unknown) => {
        syncFailure ??= err;
      })
      .finally(() => {
        flushing = null;
      });
  };
  try {
    let holes = o.newVolume;
    if (!o.newVolume) {
      const size = (await out.stat()).size;
      if (size === o.bytes) {
        // Every byte is replaced: drop the old blocks at once (holes read as zeros).
        await out.truncate(0);
        await out.truncate(size);
        holes = true;
      } else await zeroUncovered(out, manifests[0]?.objects ?? [], o.bytes);
    }
    for (const [i, m] of manifests.entries()) {
      const sparse = holes && i === 0;
      const gate = new Gate(Math.max(1, o.depth));
      const running = new Set<Promise<void>>();
      let failure: unknown = null;
      for (const x of m.objects) {
        await gate.enter();
        if (failure !== null) {
          gate.leave();
          break;
        }
        const job = (async () => {
          const into = pool.take(x.length);
          const stored = await o.store.read(m.loc.container, x.name, into);
          const r = await o.workers.unpack(
            own(stored, into),
            stored.length,
            x.compression,
            x.length,
            x.md5,
            sparse ? SPARSE_BLOCK : 0,
          );
          pool.give(r.spare);
          if (r.corrupt)
            throw new InvalidInputError(`Invalid backup: object ${x.name} is corrupt (checksum mismatch).`);
          const bytes = Buffer.from(r.bytes, 0, x.length);
          for (const [off, len] of r.runs) {
            for (let p = off; p < off + len; p += 8 * MIB) {
              const n = Math.min(8 * MIB, off + len - p);
              await out.write(bytes, p, n, x.offset + p);
              unsynced += n;
            }
          }
          pool.give(r.bytes);
          flush();
          done += x.length;
          if (done - reported >= o.reportEvery || done === total) {
            reported = done;
            await progress();
          }
        })()
          .catch((err: unknown) => {
            failure ??= err;
          })
          .finally(() => gate.leave());
        running.add(job);
        void job.then(() => running.delete(job));
      }
      await Promise.all(running);
      if (failure !== null) throw failure;
    }
    if (total === 0) await progress();
    if (report !== null && !(await report)) throw new BackupCancelledError('The restore was cancelled.');
    await flushing;
    if (syncFailure !== null) throw syncFailure;
    await out.sync();
  } finally {
    await Promise.allSettled([report, flushing]);
    await out.close();
  }
  return manifests[manifests.length - 1]?.volumeMeta ?? null;
}

/**
 * A Buffer's bytes from offset 0 of an ArrayBuffer of their own (to transfer to a worker): the
 * pooled buffer a store read into, or the Buffer's whole ArrayBuffer, else a copy (a small
 * Buffer may share Node's allocation pool, which must not be transferred).
 */
function own(b: Buffer, pooled: ArrayBuffer | undefined): ArrayBuffer {
  if (
    b.byteOffset === 0 &&
    (b.buffer === pooled || b.byteLength === b.buffer.byteLength) &&
    b.buffer instanceof ArrayBuffer
  )
    return b.buffer;
  const copy = new ArrayBuffer(b.byteLength);
  new Uint8Array(copy).set(b);
  return copy;
}

/**
 * Buffers a restore reads objects into, reused: a fresh 32 MiB buffer costs its page faults (the
 * kernel zeroes every page) on each object, several times a memory copy. At most `limit` kept.
 */
class BufferPool {
  private readonly free: ArrayBuffer[] = [];
  constructor(private readonly limit: number) {}
  /** A kept buffer of at least `bytes`, if any. */
  take(bytes: number): ArrayBuffer | undefined {
    const i = this.free.findIndex((b) => b.byteLength >= bytes);
    return i < 0 ? undefined : this.free.splice(i, 1)[0];
  }
  give(b: ArrayBuffer | null): void {
    if (b !== null && b.byteLength > 0 && this.free.length < this.limit) this.free.push(b);
  }
}

/**
 * On a target of another size than the backup, ranges of `[0, bytes)` the full backup does not
 * cover are zeros: clear what the target holds there (written zeros: there is no hole punching
 * here), leaving bytes past the backup's end as they are.
 */
async function zeroUncovered(
  out: FileHandle,
  objects: readonly ManifestObject[],
  bytes: number,
): Promise<void> {
  const covered = [...objects].sort((a, b) => a.offset - b.offset);
  let pos = 0;
  const gaps: ChunkRange[] = [];
  for (const x of covered) {
    if (x.offset > pos) gaps.push({ offset: pos, length: x.offset - pos });
    pos = Math.max(pos, x.offset + x.length);
  }
  if (pos < bytes) gaps.push({ offset: pos, length: bytes - pos });
  const zero = Buffer.alloc(MIB);
  const buf = Buffer.allocUnsafe(MIB);
  for (const g of gaps) {
    for (let p = g.offset; p < g.offset + g.length; p += MIB) {
      const len = Math.min(MIB, g.offset + g.length - p);
      const { bytesRead } = await out.read(buf, 0, len, p);
      if (bytesRead > 0 && !buf.subarray(0, bytesRead).equals(zero.subarray(0, bytesRead)))
        await out.write(zero, 0, len, p);
    }
  }
}
