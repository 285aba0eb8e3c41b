import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { types } from 'node:util';
import {
  hashFileDigests,
  hashFileObjectName,
  type ChunkRange,
  type HashFileDigests,
  type ManifestObject,
} from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import {
  BackupCancelledError,
  readManifest,
  type BackupLocation,
  type ProgressReport,
} from './backup-engine';
import { sharedCopy, type ChunkWorkers, type ObjectCheck } from './chunk-workers';
import type { BackupStore } from './stores';
import { DIRECT_ALIGN, directReadRoom } from './volume-reader';
import { VolumeWriter } from './volume-writer';

/**
 * Holders of at most `limit` units at once, admitted in the order they asked: the bound on the
 * memory a restore's objects in flight hold. One asking for more than `limit` is let in alone.
 */
export class Gate {
  private held = 0;
  private readonly queue: { units: number; resolve: () => void }[] = [];
  constructor(private readonly limit: number) {}
  async enter(units = 1): Promise<void> {
    if (this.queue.length === 0 && this.fits(units)) {
      this.held += units;
      return;
    }
    await new Promise<void>((resolve) => this.queue.push({ units, resolve }));
  }
  leave(units = 1): void {
    this.held -= units;
    for (let next = this.queue[0]; next && this.fits(next.units); next = this.queue[0]) {
      this.queue.shift();
      this.held += next.units;
      next.resolve();
    }
  }
  private fits(units: number): boolean {
    return this.held === 0 || this.held + units <= this.limit;
  }
}

const MIB = 1024 * 1024;
/** Bytes a restore writes between two fdatasyncs it starts. */
const SYNC_EVERY = 256 * MIB;
/** Granularity of the zero runs a restore leaves as holes. */
const SPARSE_BLOCK = 32 * 1024;
/**
 * Volumes up to this size are checked against their hash files (when SHA-256 is the faster
 * check): the file is read whole, ~71 bytes per block (70 MB at 32 GiB in 32 KiB blocks).
 */
const HASH_FILE_VOLUME_LIMIT = 32 * 1024 * MIB;

/** How restored objects are checked: their MD5 (manifest) or their blocks' SHA-256 (hash file). */
export type RestoreCheck = 'md5' | 'sha256';

let faster: RestoreCheck | undefined;
/**
 * The faster of the two checks on this CPU, measured once: SHA-256 runs ~2× MD5's speed with SHA
 * instructions (1.2–1.9 GB/s against 0.75–0.81 per core, docs/issue-17-history.md, "Issue 17, stop 43") and ~0.6×
 * without them. Either is a full check of every byte.
 */
export function fasterCheck(): RestoreCheck {
  if (faster !== undefined) return faster;
  const sample = Buffer.alloc(MIB, 0x5a);
  const time = (algo: string): number => {
    let best = Infinity;
    for (let i = 0; i < 4; i++) {
      const t = process.hrtime.bigint();
      createHash(algo).update(sample).digest();
      best = Math.min(best, Number(process.hrtime.bigint() - t));
    }
    return best;
  };
  faster = time('sha256') < time('md5') ? 'sha256' : 'md5';
  return faster;
}

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
  /** How objects are checked; the faster on this CPU by default ({@link fasterCheck}). */
  readonly check?: RestoreCheck;
  /** Told what the restore notices and gets past (a hash file it cannot use). */
  readonly warn?: (message: string) => void;
}

/**
 * Writes the chain's bytes into the target (BS-11.7); returns the requested backup's volume_meta.
 * Objects are read, decompressed and checked (length, and MD5 or the SHA-256 of each block from
 * the backup's hash file) concurrently, at most `depth` at once;
 * each backup of the chain is applied whole before the next. The full backup lands on a target
 * that is all holes (a new volume, or an existing one of the backup's size truncated to nothing and
 * back), and its zero blocks are not written, so they stay holes; ranges no object covers are zeros.
 */
export async function restoreBackup(o: RestoreOptions): Promise<string | null> {
  const manifests = [];
  for (const loc of o.chain) manifests.push({ loc, ...(await readManifest(o.store, loc)) });
  const total = manifests.reduce((n, m) => n + m.objects.reduce((k, x) => k + x.length, 0), 0);
  // What a restore may hold in flight, in objects' buffers: twice the depth, as a backup holds
  // about twice its depth in chunks. An object stored raw holds one buffer (read, checked and
  // written in place), a compressed one two (the stored and the decompressed bytes), so raw objects
  // (incompressible data, `none`) go twice as many at once for the same memory: the disk sees
  // more requests in flight (a 4 GiB restore at depth 4 took 2.42–2.72 s one object per unit,
  // 1.81–1.92 s with eight raw objects in flight, docs/issue-17-history.md "Issue 17, stop 49").
  const units = 2 * Math.max(1, o.depth);
  // bytes go around the page cache where the filesystem allows (VolumeWriter)
  const writer = await VolumeWriter.open(o.target, units);
  const out = writer.handle;
  const pool = new BufferPool(units + 1);
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
    const check = o.check ?? fasterCheck();
    for (const [i, m] of manifests.entries()) {
      const sparse = holes && i === 0;
      const hashes = check === 'sha256' ? await blockDigests(o, m.loc) : null;
      let mismatches = 0;
      const gate = new Gate(units);
      const running = new Set<Promise<void>>();
      let failure: unknown = null;
      for (const x of m.objects) {
        const weight = x.compression === 'none' ? 1 : 2;
        await gate.enter(weight);
        if (failure !== null) {
          gate.leave(weight);
          break;
        }
        const job = (async () => {
          // room for a direct read of the object (PosixBackupStore.read), a page more for a
          // compressed object another writer stored a little longer than its data
          const room = directReadRoom(x.length + DIRECT_ALIGN);
          const into = pool.take(room) ?? new SharedArrayBuffer(room);
          const stored = await o.store.read(m.loc.container, x.name, into);
          const inPlace = stored.buffer === into;
          const r = await o.workers.unpack(
            inPlace ? into : sharedCopy(stored, into),
            stored.length,
            x.compression,
            x.length,
            objectCheck(x, hashes, o.bytes),
            sparse ? SPARSE_BLOCK : 0,
            inPlace ? stored.byteOffset : 0,
          );
          pool.give(r.spare);
          if (r.corrupt)
            throw new InvalidInputError(`Invalid backup: object ${x.name} is corrupt (checksum mismatch).`);
          if (r.hashFileMismatch) mismatches++;
          const bytes = Buffer.from(r.bytes, r.bytesOffset, x.length);
          for (const [off, len] of r.runs) {
            for (let p = off; p < off + len; p += 8 * MIB) {
              const n = Math.min(8 * MIB, off + len - p);
              await writer.write(bytes, p, n, x.offset + p);
              unsynced += n;
            }
          }
          // a raw object's bytes are the pooled buffer itself; a decompressed one's are the worker's own
          if (types.isSharedArrayBuffer(r.bytes)) pool.give(r.bytes);
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
          .finally(() => gate.leave(weight));
        running.add(job);
        void job.then(() => running.delete(job));
      }
      await Promise.all(running);
      if (failure !== null) throw failure;
      if (mismatches > 0)
        o.warn?.(
          `The hash file of backup ${m.loc.prefix} does not match ${mismatches} of its objects; ` +
            'their MD5s do, so they were restored (an incremental on top of it would store more than it needs).',
        );
    }
    if (total === 0) await progress();
    if (report !== null && !(await report)) throw new BackupCancelledError('The restore was cancelled.');
    await flushing;
    if (syncFailure !== null) throw syncFailure;
    await out.sync();
  } finally {
    await Promise.allSettled([report, flushing]);
    await writer.close();
  }
  return manifests[manifests.length - 1]?.volumeMeta ?? null;
}

/**
 * A backup's hash file, compact, when the restore can check objects against it: null for a
 * volume above {@link HASH_FILE_VOLUME_LIMIT}, a missing or unreadable file (told to `warn`), or one
 * with other blocks than the volume's. Objects are then checked by MD5.
 */
async function blockDigests(o: RestoreOptions, loc: BackupLocation): Promise<HashFileDigests | null> {
  if (o.bytes > HASH_FILE_VOLUME_LIMIT) return null;
  let doc: Buffer;
  try {
    doc = await o.store.read(loc.container, hashFileObjectName(loc.prefix));
  } catch {
    o.warn?.(`Backup ${loc.prefix} has no readable hash file; its objects are checked by MD5.`);
    return null;
  }
  const d = hashFileDigests(doc);
  if (d === null || d.count !== Math.ceil(o.bytes / d.blockSize)) {
    o.warn?.(
      `The hash file of backup ${loc.prefix} is not one the restore can use; its objects are checked by MD5.`,
    );
    return null;
  }
  return d;
}

/**
 * What object `x` is checked against: its blocks' digests when the hash file has them (the object
 * starts on a block and ends on one or at the volume's end), else its MD5 alone. The digests are
 * copied out, so only they travel to the worker, not the whole file's.
 */
function objectCheck(x: ManifestObject, hashes: HashFileDigests | null, bytes: number): ObjectCheck {
  if (hashes === null) return { md5: x.md5 };
  const size = hashes.blockSize;
  const end = x.offset + x.length;
  if (x.offset % size !== 0 || (x.length % size !== 0 && end !== bytes) || end > bytes) return { md5: x.md5 };
  const first = x.offset / size;
  const count = Math.ceil(x.length / size);
  return { md5: x.md5, blocks: { size, digests: hashes.digests.slice(first * 32, (first + count) * 32) } };
}

/**
 * Buffers a restore reads objects into, reused: a fresh 32 MiB buffer costs its page faults (the
 * kernel zeroes every page) on each object, several times a memory copy. At most `limit` kept.
 * Shared with the chunk workers (chunk-workers.ts).
 */
class BufferPool {
  private readonly free: SharedArrayBuffer[] = [];
  constructor(private readonly limit: number) {}
  /** A kept buffer of at least `bytes`, if any. */
  take(bytes: number): SharedArrayBuffer | undefined {
    const i = this.free.findIndex((b) => b.byteLength >= bytes);
    return i < 0 ? undefined : this.free.splice(i, 1)[0];
  }
  give(b: SharedArrayBuffer | null): void {
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
