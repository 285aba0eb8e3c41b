import { InvalidInputError } from '@osc/errors';

/**
 * The chunked backup format (spec section 11), pure parts: object naming, chunk planning,
 * manifest and hash-file documents, and the incremental diff. Hashing, compression and I/O are
 * the worker's; it passes digests in.
 */

export const BACKUP_CODECS = ['zlib', 'bz2', 'zstd', 'none'] as const;
export type BackupCodec = (typeof BACKUP_CODECS)[number];

const CODEC_ALIASES: Readonly<Record<string, BackupCodec>> = {
  zlib: 'zlib',
  gzip: 'zlib',
  bz2: 'bz2',
  bzip2: 'bz2',
  zstd: 'zstd',
  none: 'none',
  off: 'none',
  no: 'none',
};

/** Configured codec name → codec (BS-11.4); unknown names are a configuration error. */
export function parseBackupCodec(name: string): BackupCodec {
  const codec = CODEC_ALIASES[name.trim().toLowerCase()];
  if (codec === undefined)
    throw new InvalidInputError(`Unsupported backup compression algorithm: ${name.slice(0, 40)}`);
  return codec;
}

export type BackupStoreKind = 'posix' | 'object-store';

/** Driver identity strings (BS-11.1); exports must start with `cinder.backup.drivers.`. */
export const BACKUP_DRIVER_IDS = {
  posix: 'cinder.backup.drivers.posix.PosixBackupDriver',
  swift: 'cinder.backup.drivers.swift.SwiftBackupDriver',
  s3: 'cinder.backup.drivers.s3.S3BackupDriver',
} as const;

export interface ChunkParameters {
  readonly chunkSize: number;
  readonly blockSize: number;
}

/** Defaults (BS-11.2): object stores 50 MiB / 32 KiB; posix 61035 × 32 KiB / 32 KiB. */
export const DEFAULT_CHUNK_PARAMETERS: Readonly<Record<BackupStoreKind, ChunkParameters>> = {
  'object-store': { chunkSize: 50 * 1024 * 1024, blockSize: 32 * 1024 },
  posix: { chunkSize: 61035 * 32 * 1024, blockSize: 32 * 1024 },
};

/** The chunk size must be a positive multiple of the hash block size (else the backup fails). */
export function assertChunkParameters(p: ChunkParameters): void {
  if (
    !Number.isSafeInteger(p.blockSize) ||
    p.blockSize <= 0 ||
    !Number.isSafeInteger(p.chunkSize) ||
    p.chunkSize <= 0 ||
    p.chunkSize % p.blockSize !== 0
  ) {
    throw new InvalidInputError(
      `Invalid backup chunking: chunk size ${p.chunkSize} must be a positive multiple of the block size ${p.blockSize}.`,
    );
  }
}

const pad2 = (n: number): string => String(n).padStart(2, '0');
/** `yyyymmddHHMMSS` in UTC. */
export const backupTimestamp = (d: Date): string =>
  `${d.getUTCFullYear()}${pad2(d.getUTCMonth() + 1)}${pad2(d.getUTCDate())}${pad2(d.getUTCHours())}${pad2(d.getUTCMinutes())}${pad2(d.getUTCSeconds())}`;

/** The object-name prefix stored as the backup's `service_metadata` (BS-11.3). */
export function backupObjectPrefix(
  kind: BackupStoreKind,
  p: { volumeId: string; backupId: string; availabilityZone: string | null; at: Date },
): string {
  const ts = backupTimestamp(p.at);
  return kind === 'posix'
    ? `volume_${p.volumeId}_${ts}_backup_${p.backupId}`
    : `volume_${p.volumeId}/${ts}/az_${p.availabilityZone ?? 'None'}_backup_${p.backupId}`;
}

/** Default container (BS-11.2): posix `<id[0:2]>/<id[2:4]>/<id>`, object stores `volumebackups`. */
export const defaultBackupContainer = (kind: BackupStoreKind, backupId: string): string =>
  kind === 'posix' ? `${backupId.slice(0, 2)}/${backupId.slice(2, 4)}/${backupId}` : 'volumebackups';

/** Data object `n` (1-based), at least five digits. */
export const dataObjectName = (prefix: string, n: number): string =>
  `${prefix}-${String(n).padStart(5, '0')}`;
export const manifestObjectName = (prefix: string): string => `${prefix}_metadata`;
export const hashFileObjectName = (prefix: string): string => `${prefix}_sha256file`;

export interface ChunkRange {
  readonly offset: number;
  readonly length: number;
}

/** Splits `[0, size)` into chunk-sized ranges. */
export function planChunks(size: number, chunkSize: number): ChunkRange[] {
  const out: ChunkRange[] = [];
  for (let offset = 0; offset < size; offset += chunkSize)
    out.push({ offset, length: Math.min(chunkSize, size - offset) });
  return out;
}

/**
 * Incremental backups (BS-11.6): maximal runs of blocks whose digest differs from the parent's,
 * as byte ranges; blocks past the parent's end count as changed. Runs are split at `maxRun` bytes
 * so each object stays at most a chunk.
 */
export function changedRanges(
  parent: readonly string[],
  current: readonly string[],
  blockSize: number,
  volumeSize: number,
  maxRun: number,
): ChunkRange[] {
  const out: ChunkRange[] = [];
  let start = -1;
  const flush = (endBlock: number): void => {
    if (start < 0) return;
    const from = start * blockSize;
    const to = Math.min(endBlock * blockSize, volumeSize);
    for (let o = from; o < to; o += maxRun) out.push({ offset: o, length: Math.min(maxRun, to - o) });
    start = -1;
  };
  for (let i = 0; i < current.length; i++) {
    if (current[i] !== parent[i]) {
      if (start < 0) start = i;
    } else flush(i);
  }
  flush(current.length);
  return out;
}

/**
 * What a full backup stores of a chunk (BS-11.9): maximal runs of blocks that are not all zeros
 * (`zero[i]` is 1 for an all-zero block), as byte ranges split at `maxRun`. Zero blocks are never
 * stored; restore reads the ranges no object covers as zeros.
 */
export function nonZeroRanges(
  zero: ArrayLike<number>,
  blockSize: number,
  length: number,
  maxRun: number,
): ChunkRange[] {
  const out: ChunkRange[] = [];
  let start = -1;
  const flush = (endBlock: number): void => {
    if (start < 0) return;
    const to = Math.min(endBlock * blockSize, length);
    for (let o = start * blockSize; o < to; o += maxRun)
      out.push({ offset: o, length: Math.min(maxRun, to - o) });
    start = -1;
  };
  for (let i = 0; i < zero.length; i++) {
    if (zero[i] === 1) flush(i);
    else if (start < 0) start = i;
  }
  flush(zero.length);
  return out;
}

/** Refuses an incremental whose parent used another block size or a smaller volume (BS-11.6). */
export function assertIncrementalCompatible(p: {
  parentBlockSize: number;
  blockSize: number;
  parentVolumeBytes: number;
  volumeBytes: number;
}): void {
  if (p.parentBlockSize !== p.blockSize) {
    throw new InvalidInputError(
      'Invalid backup: the parent backup was made with another hash block size. Do a full backup.',
    );
  }
  if (p.volumeBytes > p.parentVolumeBytes) {
    throw new InvalidInputError('Invalid backup: the volume grew since the parent backup. Do a full backup.');
  }
}

export interface ManifestObject {
  readonly name: string;
  readonly offset: number;
  readonly length: number;
  readonly compression: BackupCodec;
  readonly md5: string;
}

export interface BackupDescription {
  readonly backupId: string;
  readonly volumeId: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly createdAt: string;
  readonly parentId: string | null;
}

/** JSON with keys sorted at every level and 2-space indent (BS-11.5). */
export function sortedJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) out[k] = sort((v as Record<string, unknown>)[k]);
      return out;
    }
    return v;
  };
  return JSON.stringify(sort(value), null, 2);
}

/** The manifest document (BS-11.5). `volumeMeta` is already a JSON string. */
export function manifestDocument(
  b: BackupDescription,
  objects: readonly ManifestObject[],
  volumeMeta: string,
  extraMetadata?: unknown,
): string {
  const doc: Record<string, unknown> = {
    version: '1.0.0',
    backup_id: b.backupId,
    volume_id: b.volumeId,
    backup_name: b.name,
    backup_description: b.description,
    created_at: b.createdAt,
    parent_id: b.parentId,
    objects: objects.map((o) => ({
      [o.name]: { offset: o.offset, length: o.length, compression: o.compression, md5: o.md5 },
    })),
    volume_meta: volumeMeta,
  };
  if (extraMetadata !== undefined) doc['extra_metadata'] = extraMetadata;
  return sortedJson(doc);
}

/** The hash file document (BS-11.5): one SHA-256 hex digest per block of the whole volume. */
export function hashFileDocument(
  b: BackupDescription,
  blockSize: number,
  sha256s: readonly string[],
): string {
  return sortedJson({
    version: '1.0.0',
    backup_id: b.backupId,
    volume_id: b.volumeId,
    backup_name: b.name,
    backup_description: b.description,
    created_at: b.createdAt,
    chunk_size: blockSize,
    sha256s,
  });
}

/** Reads the object list back from a manifest, validating its shape. */
export function parseManifestObjects(manifest: string): ManifestObject[] {
  let doc: unknown;
  try {
    doc = JSON.parse(manifest);
  } catch {
    throw new InvalidInputError('Invalid backup: the manifest is not JSON.');
  }
  const objects = (doc as { objects?: unknown }).objects;
  if (!Array.isArray(objects))
    throw new InvalidInputError('Invalid backup: the manifest has no object list.');
  return objects.map((entry: unknown) => {
    const pairs = typeof entry === 'object' && entry !== null ? Object.entries(entry) : [];
    const [name, meta] = pairs[0] ?? [];
    const m = meta as Partial<Record<'offset' | 'length' | 'compression' | 'md5', unknown>> | undefined;
    if (
      pairs.length !== 1 ||
      typeof name !== 'string' ||
      !m ||
      typeof m.offset !== 'number' ||
      typeof m.length !== 'number' ||
      typeof m.md5 !== 'string'
    ) {
      throw new InvalidInputError('Invalid backup: malformed manifest entry.');
    }
    return {
      name,
      offset: m.offset,
      length: m.length,
      compression: parseBackupCodec(String(m.compression ?? 'none')),
      md5: m.md5,
    };
  });
}

/** A hash file's digests, compact: 32 bytes per block, in volume order. */
export interface HashFileDigests {
  /** The hash file's `chunk_size`: bytes per hashed block. */
  readonly blockSize: number;
  /** Blocks the file covers. */
  readonly count: number;
  /** `count` SHA-256 digests, 32 bytes each. */
  readonly digests: Uint8Array;
}

const HEX_VALUE = (() => {
  const t = new Uint8Array(256).fill(255);
  for (let i = 0; i < 10; i++) t[0x30 + i] = i;
  for (let i = 0; i < 6; i++) t[0x61 + i] = t[0x41 + i] = 10 + i;
  return t;
})();
const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const SHA256S_KEY = ascii('"sha256s"');
const CHUNK_SIZE_KEY = ascii('"chunk_size"');

/** The last index of `key` in `doc`, or -1. */
function lastIndexOfBytes(doc: Uint8Array, key: Uint8Array): number {
  outer: for (let i = doc.length - key.length; i >= 0; i--) {
    for (let k = 0; k < key.length; k++) if (doc[i + k] !== key[k]) continue outer;
    return i;
  }
  return -1;
}

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The digests of a hash file document (BS-11.5, ours or Cinder's), read straight from its bytes
 * into 32 bytes per block: a restore checks objects against them without holding a string per
 * block (a 4 GiB volume's file lists 131,072). The keys are looked up last in the document: both
 * writers put `chunk_size` and `sha256s` after the user's name and description. Null when the
 * document is not of that shape; a caller then checks objects some other way (their MD5).
 */
export function hashFileDigests(doc: Uint8Array): HashFileDigests | null {
  const afterKey = (key: Uint8Array): number => {
    const at = lastIndexOfBytes(doc, key);
    if (at < 0) return -1;
    let p = at + key.length;
    while (isSpace(doc[p])) p++;
    if (doc[p] !== 0x3a /* : */) return -1;
    p++;
    while (isSpace(doc[p])) p++;
    return p;
  };
  let p = afterKey(CHUNK_SIZE_KEY);
  if (p < 0) return null;
  let blockSize = 0;
  for (; doc[p] !== undefined && doc[p]! >= 0x30 && doc[p]! <= 0x39 && blockSize < 2 ** 40; p++)
    blockSize = blockSize * 10 + doc[p]! - 0x30;
  if (blockSize <= 0 || blockSize >= 2 ** 40) return null;
  p = afterKey(SHA256S_KEY);
  if (p < 0 || doc[p] !== 0x5b /* [ */) return null;
  p++;
  // each entry takes at least 66 bytes ("…64 hex…" and a comma)
  const digests = new Uint8Array((Math.floor((doc.length - p) / 66) + 1) * 32);
  let count = 0;
  for (;;) {
    while (isSpace(doc[p])) p++;
    if (doc[p] === 0x5d /* ] */) break;
    if (doc[p] !== 0x22 || doc[p + 65] !== 0x22) return null;
    const out = count * 32;
    for (let k = 0; k < 32; k++) {
      const hi = HEX_VALUE[doc[p + 1 + 2 * k]!]!;
      const lo = HEX_VALUE[doc[p + 2 + 2 * k]!]!;
      if (hi === 255 || lo === 255) return null;
      digests[out + k] = (hi << 4) | lo;
    }
    count++;
    p += 66;
    while (isSpace(doc[p])) p++;
    if (doc[p] === 0x2c /* , */) p++;
    else if (doc[p] !== 0x5d) return null;
  }
  return { blockSize, count, digests: digests.subarray(0, count * 32) };
}
