import { randomUUID } from 'node:crypto';
import { rename } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import { volumeFileName } from '@osc/block-storage-domain';
import { createSparseFile, ensureDir, growFile, removeFile, sparseCopy } from './sparse-file';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from './volume-backend.config';
import type { VolumePaths } from './volume-paths';

/**
 * The file volume driver: the bytes on disk and nothing else. Each volume is a sparse file
 * `volume-<id>` under the configured directory, each snapshot a sparse copy `snapshot-<id>`. The
 * operations around it (statuses, quota, jobs) decide when these run; the driver never reads or
 * writes the database. Failures throw and leave no partial file behind where a copy was made.
 */
@Injectable()
export class FileVolumeDriver implements VolumePaths {
  /** This process's identity as the volume service (the volumes' `service_uuid`). */
  readonly serviceUuid = randomUUID();

  constructor(@Inject(VOLUME_BACKEND_CONFIG) private readonly config: VolumeBackendConfig) {}

  /** `host@backend` */
  get backend(): string {
    return `${this.config.host}@${this.config.backendName}`;
  }

  /** `host@backend#pool` (one pool named after the back end). */
  get poolName(): string {
    return `${this.backend}#${this.config.backendName}`;
  }

  /** Does `pool` (`host@backend#pool`) belong to this back end? */
  ownsPool(pool: string | null): boolean {
    return (pool ?? '').startsWith(`${this.backend}#`);
  }

  get directory(): string {
    return this.config.directory;
  }

  volumeFile(id: string): string {
    return path.join(this.config.directory, volumeFileName(id));
  }

  snapshotFile(id: string): string {
    return path.join(this.config.directory, `snapshot-${id}`);
  }

  /** Creates the directory at start. */
  prepare(): Promise<void> {
    return ensureDir(this.config.directory);
  }

  /** An empty (sparse) volume of `bytes`. */
  createVolume(id: string, bytes: number): Promise<void> {
    return createSparseFile(this.volumeFile(id), bytes);
  }

  /** A volume whose bytes are a copy of another volume's. */
  cloneVolume(sourceId: string, id: string, bytes: number): Promise<void> {
    return sparseCopy(this.volumeFile(sourceId), this.volumeFile(id), bytes);
  }

  /** A volume whose bytes are a copy of a snapshot's. */
  createVolumeFromSnapshot(snapshotId: string, id: string, bytes: number): Promise<void> {
    return sparseCopy(this.snapshotFile(snapshotId), this.volumeFile(id), bytes);
  }

  /** Removes a volume's file (gone already is fine). */
  removeVolume(id: string): Promise<void> {
    return removeFile(this.volumeFile(id));
  }

  /** Grows a volume's file to `bytes`. */
  extendVolume(id: string, bytes: number): Promise<void> {
    return growFile(this.volumeFile(id), bytes);
  }

  /** A snapshot: a sparse copy of the volume's bytes; a failed copy leaves no snapshot file. */
  async createSnapshot(volumeId: string, snapshotId: string, bytes: number): Promise<void> {
    try {
      await sparseCopy(this.volumeFile(volumeId), this.snapshotFile(snapshotId), bytes);
    } catch (err) {
      await removeFile(this.snapshotFile(snapshotId)).catch(() => undefined);
      throw err;
    }
  }

  removeSnapshot(id: string): Promise<void> {
    return removeFile(this.snapshotFile(id));
  }

  /**
   * Revert (3.40): the snapshot's bytes are copied beside the volume file and renamed over it, so
   * the volume is never half reverted; a failed copy leaves the volume's file as it was.
   */
  async revertToSnapshot(volumeId: string, snapshotId: string, bytes: number): Promise<void> {
    const temp = `${this.volumeFile(volumeId)}.revert`;
    try {
      await sparseCopy(this.snapshotFile(snapshotId), temp, bytes);
      await rename(temp, this.volumeFile(volumeId));
    } catch (err) {
      await removeFile(temp).catch(() => undefined);
      throw err;
    }
  }
}
