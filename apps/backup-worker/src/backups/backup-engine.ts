import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import {
  assertChunkParameters,
  assertIncrementalCompatible,
  changedRanges,
  dataObjectName,
  hashFileDocument,
  hashFileObjectName,
  manifestDocument,
  manifestObjectName,
  parseManifestObjects,
  planChunks,
  type BackupCodec,
  type BackupDescription,
  type ChunkParameters,
  type ChunkRange,
  type ManifestObject,
} from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import type { PosixBackupStore } from './backup-store';

const deflate = promisify(zlib.deflate);
const inflate = promisify(zlib.inflate);

/** Where a backup's objects live: the container and the object-name prefix (its service_metadata). */
export interface BackupLocation {
  readonly container: string;
  readonly prefix: string;
}

/** Thrown when the backup left the status the operation needs (deleted, force-deleted, reset). */
export class BackupCancelledError extends Error {}

const md5 = (b: Buffer): string => createHash('md5').update(b).digest('hex');
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

async function compress(codec: BackupCodec, data: Buffer): Promise<{ codec: BackupCodec; bytes: Buffer }> {
  switch (codec) {
    case 'none':
      return { codec: 'none', bytes: data };
    case 'zlib': {
      const out = await deflate(data, { level: 1 });
      // BS-11.4: store raw bytes when compression does not shrink the chunk.
      return out.length < data.length ? { codec: 'zlib', bytes: out } : { codec: 'none', bytes: data };
    }
    case 'bz2':
    case 'zstd':
      throw new InvalidInputError(`Unsupported backup compression algorithm on this worker: ${codec}`);
  }
}

async function decompress(codec: BackupCodec, data: Buffer): Promise<Buffer> {
  switch (codec) {
    case 'none':
      return data;
    case 'zlib':
      return inflate(data);
    case 'bz2':
    case 'zstd':
      throw new InvalidInputError(`Unsupported backup compression algorithm on this worker: ${codec}`);
  }
}

export interface CreateBackupOptions {
  readonly store: PosixBackupStore;
  readonly params: ChunkParameters;
  readonly codec: BackupCodec;
  /** The file holding the bytes (volume or snapshot). */
  readonly source: string;
  /** Bytes to back up (the volume's size). */
  readonly bytes: number;
  readonly location: BackupLocation;
  readonly description: BackupDescription;
  readonly volumeMeta: string;
  /** The parent's location for an incremental backup (BS-11.6). */
  readonly parent: BackupLocation | null;
  /** Re-reads the backup's status before each chunk (BS-11.4); true = stop. */
  readonly cancelled: () => Promise<boolean>;
}

/**
 * Writes a full or incremental backup (BS-11.4–11.6): data objects first, hash file and manifest
 * last, so a backup without a manifest is recognisably incomplete. All-zero chunks of a full
 * backup are not stored (BS-11.9); restore treats missing ranges as zeros. On cancel the written
 * objects are removed.
 */
export async function writeBackup(o: CreateBackupOptions): Promise<{ objectCount: number }> {
  assertChunkParameters(o.params);
  const { chunkSize, blockSize } = o.params;
  let parentHashes: string[] | null = null;
  if (o.parent) {
    const doc = JSON.parse(
      (await o.store.read(o.parent.container, hashFileObjectName(o.parent.prefix))).toString('utf8'),
    ) as { chunk_size: number; sha256s: string[] };
    assertIncrementalCompatible({
      parentBlockSize: doc.chunk_size,
      blockSize,
      parentVolumeBytes: doc.sha256s.length * blockSize,
      volumeBytes: Math.ceil(o.bytes / blockSize) * blockSize,
    });
    parentHashes = doc.sha256s;
  }
  await o.store.ensureContainer(o.location.container);
  const zeroBlock = Buffer.alloc(blockSize);
  const zeroHash = sha256(zeroBlock);
  const hashes: string[] = [];
  const objects: ManifestObject[] = [];
  const input = await open(o.source, 'r');
  const buf = Buffer.allocUnsafe(chunkSize);
  try {
    for (const chunk of planChunks(o.bytes, chunkSize)) {
      if (await o.cancelled()) throw new BackupCancelledError('The backup was cancelled.');
      let filled = 0;
      while (filled < chunk.length) {
        const { bytesRead } = await input.read(buf, filled, chunk.length - filled, chunk.offset + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      // A source shorter than the volume reads as zeros past its end.
      if (filled < chunk.length) buf.fill(0, filled, chunk.length);
      const data = buf.subarray(0, chunk.length);
      const first = hashes.length;
      let allZero = true;
      for (let off = 0; off < data.length; off += blockSize) {
        const block = data.subarray(off, Math.min(off + blockSize, data.length));
        const zero =
          block.length === blockSize
            ? block.equals(zeroBlock)
            : block.equals(zeroBlock.subarray(0, block.length));
        if (!zero) allZero = false;
        hashes.push(zero && block.length === blockSize ? zeroHash : sha256(block));
      }
      let ranges: ChunkRange[];
      if (parentHashes === null) ranges = allZero ? [] : [{ offset: 0, length: data.length }];
      else
        ranges = changedRanges(
          parentHashes.slice(first, hashes.length),
          hashes.slice(first),
          blockSize,
          data.length,
          chunkSize,
        );
      for (const r of ranges) {
        const piece = data.subarray(r.offset, r.offset + r.length);
        const packed = await compress(o.codec, piece);
        const name = dataObjectName(o.location.prefix, objects.length + 1);
        await o.store.write(o.location.container, name, packed.bytes);
        objects.push({
          name,
          offset: chunk.offset + r.offset,
          length: r.length,
          compression: packed.codec,
          md5: md5(piece),
        });
      }
    }
  } catch (err) {
    await input.close();
    if (err instanceof BackupCancelledError)
      await o.store.deletePrefix(o.location.container, o.location.prefix);
    throw err;
  }
  await input.close();
  await o.store.write(
    o.location.container,
    hashFileObjectName(o.location.prefix),
    Buffer.from(hashFileDocument(o.description, blockSize, hashes), 'utf8'),
  );
  await o.store.write(
    o.location.container,
    manifestObjectName(o.location.prefix),
    Buffer.from(manifestDocument(o.description, objects, o.volumeMeta), 'utf8'),
  );
  return { objectCount: objects.length };
}

/** Reads a backup's manifest and checks the stored data objects are exactly the listed ones (BS-11.7). */
export async function readManifest(
  store: PosixBackupStore,
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

export interface RestoreOptions {
  readonly store: PosixBackupStore;
  /** The full backup first, then each incremental up to the requested one. */
  readonly chain: readonly BackupLocation[];
  readonly target: string;
  /** Bytes of the backup (its volume size): ranges of the full backup without objects are zeros. */
  readonly bytes: number;
  /** A freshly created (sparse, all-zero) target: zero ranges are skipped (BS-11.7). */
  readonly newVolume: boolean;
  readonly cancelled: () => Promise<boolean>;
}

/** Writes the chain's bytes into the target (BS-11.7); returns the requested backup's volume_meta. */
export async function restoreBackup(o: RestoreOptions): Promise<string | null> {
  const manifests = [];
  for (const loc of o.chain) manifests.push({ loc, ...(await readManifest(o.store, loc)) });
  const out = await open(o.target, 'r+');
  const zero = Buffer.alloc(MIB);
  try {
    for (const [i, m] of manifests.entries()) {
      if (i === 0 && !o.newVolume) {
        // Ranges the full backup did not store are zeros: clear what the target holds there.
        const covered = [...m.objects].sort((a, b) => a.offset - b.offset);
        let pos = 0;
        const gaps: ChunkRange[] = [];
        for (const x of covered) {
          if (x.offset > pos) gaps.push({ offset: pos, length: x.offset - pos });
          pos = Math.max(pos, x.offset + x.length);
        }
        if (pos < o.bytes) gaps.push({ offset: pos, length: o.bytes - pos });
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
      for (const x of m.objects) {
        if (await o.cancelled()) throw new BackupCancelledError('The restore was cancelled.');
        const data = await decompress(x.compression, await o.store.read(m.loc.container, x.name));
        if (data.length !== x.length || md5(data) !== x.md5)
          throw new InvalidInputError(`Invalid backup: object ${x.name} is corrupt (checksum mismatch).`);
        for (let p = 0; p < data.length; p += MIB) {
          const piece = data.subarray(p, Math.min(p + MIB, data.length));
          if (o.newVolume && i === 0 && piece.equals(zero.subarray(0, piece.length))) continue;
          await out.write(piece, 0, piece.length, x.offset + p);
        }
        await out.datasync();
      }
    }
    await out.sync();
  } finally {
    await out.close();
  }
  return manifests[manifests.length - 1]?.volumeMeta ?? null;
}
