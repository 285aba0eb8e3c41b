import type { BackupStoreKind } from '@osc/block-storage-domain';

/**
 * What the chunk engine needs of a backup driver (BS-11.1): containers holding named objects.
 * Every object the engine writes is at most one chunk (BACKUP_CHUNK_SIZE) and a job holds at most
 * BACKUP_PIPELINE_DEPTH of them at once, so objects pass as whole buffers; a driver that must cut
 * them smaller for its server (Swift segments, S3 multipart parts) streams those pieces out of the
 * buffer it was given. Errors are thrown with a message that can be shown to the user as is.
 */
export interface BackupStore {
  /** How object names are prefixed (BS-11.3): `posix` or `object-store`. */
  readonly kind: BackupStoreKind;
  /** Cinder's driver identity string (BS-11.1), stored as the backup's `service`. */
  readonly driverId: string;
  /** The container of a backup created without one (BS-11.2). */
  defaultContainer(backupId: string): string;
  /** Throws an InvalidInputError when the name cannot be a container of this store. */
  checkContainer(container: string): void;
  ensureContainer(container: string): Promise<void>;
  write(container: string, name: string, data: Buffer): Promise<void>;
  /**
   * The object's bytes. A driver may read them into `into` when they fit (the result is then a
   * view of it, from offset 0), so a restore reuses a few buffers instead of faulting in fresh
   * memory for every object; otherwise the result is a buffer of its own.
   */
  read(container: string, name: string, into?: ArrayBufferLike): Promise<Buffer>;
  /** Names of the finished objects starting with `prefix`, sorted. */
  list(container: string, prefix: string): Promise<string[]>;
  /** Removes every object whose name starts with `prefix` (BS-11.8). */
  deletePrefix(container: string, prefix: string): Promise<void>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** A store operation the server refused or that could not reach it; the message names both. */
export class BackupStoreError extends Error {
  constructor(
    message: string,
    /** HTTP status when the server answered. */
    readonly status: number | null = null,
  ) {
    super(message);
  }
}
