import { createHash } from 'node:crypto';
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
  planChunks,
  unchangedSinceParent,
  type BackupCodec,
  type BackupDescription,
  type ChunkParameters,
  type ChunkRange,
  type ManifestObject,
} from '@osc/block-storage-domain';
import { BackupCancelledError, type BackupLocation, type ProgressReport } from './backup-engine';
import type { ChunkWorkers, PackedPiece } from './chunk-workers';
import type { BackupStore } from './stores';
import { VolumeReader, type ChunkMemory } from './volume-reader';

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

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

/** A chunk ready to be written: its memory, the ranges to store and their packed pieces. */
interface Prepared {
  readonly mem: ChunkMemory;
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
  // shared with the chunk workers (chunk-workers.ts), reused from chunk to chunk
  const buffers: ChunkMemory[] = [];
  const input = await VolumeReader.open(o.source);

  /**
   * Read, hash, choose ranges and pack one chunk (runs concurrently with its neighbours). The
   * chunk's buffer comes back with its pieces: raw pieces are written straight out of it, and it
   * returns to the pool once they are.
   */
  const prepare = async (index: number, chunk: ChunkRange): Promise<Prepared> => {
    const mem = buffers.pop() ?? (await input.allocate(chunkSize));
    await input.read(mem, chunk.length, chunk.offset);
    const h = await o.workers.hash(mem.buf, chunk.length, blockSize, zeroHash, mem.offset);
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
    if (ranges.length === 0) return { mem, ranges, pieces: [] };
    const packed = await o.workers.pack(
      mem.buf,
      chunk.length,
      ranges.map((r) => [r.offset, r.length] as const),
      o.codec,
      mem.offset,
    );
    return { mem, ranges, pieces: packed.pieces };
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
      const { mem, ranges, pieces } = await (inFlight[written] as Promise<Prepared>);
      delete inFlight[written];
      const data = Buffer.from(mem.buf, mem.offset, chunkSize);
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
      buffers.push(mem);
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
  const input = await VolumeReader.open(o.source);
  try {
    const mem = await input.allocate(chunkSize);
    for (const chunk of planChunks(o.bytes, chunkSize)) {
      await input.read(mem, chunk.length, chunk.offset);
      const h = await o.workers.hash(mem.buf, chunk.length, blockSize, zeroHash, mem.offset);
      const first = chunk.offset / blockSize;
      if (h.hashes.some((x, i) => x !== doc.sha256s[first + i])) return false;
    }
    return true;
  } finally {
    await input.close();
  }
}
