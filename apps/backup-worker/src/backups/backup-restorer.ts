import { availableParallelism } from 'node:os';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BackupRepository, type StoredBackup } from '@osc/block-storage-persistence';
import { InvalidInputError } from '@osc/errors';
import { DATA_SOURCE } from '@osc/platform';
import { GIB } from '../volume-backend/sparse-file';
import type { BackupLocation, ProgressReport } from './backup-engine';
import { restoreBackup } from './backup-reader';
import { BACKUP_CONFIG, type BackupConfig } from './backup.config';
import { createBackupStore, type BackupStore } from './stores';
import { ChunkWorkers } from './chunk-workers';

/**
 * Reads backups back (BS-11.7): the chain from the full backup to the requested one, applied in
 * order. Used by restore jobs and by the volume back end when a volume is created from a backup
 * (3.47); it depends on nothing of the volume back end, so both can hold it.
 */
@Injectable()
export class BackupRestorer implements OnModuleDestroy {
  private readonly backups = new BackupRepository();
  private readonly log = new Logger('backup');
  /** The configured driver's store (BACKUP_DRIVER). */
  readonly store: BackupStore;
  /** The CPU half of backups and restores of this back end (hashing, compression), on worker threads. */
  readonly workers: ChunkWorkers;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(BACKUP_CONFIG) private readonly config: BackupConfig,
  ) {
    this.store = createBackupStore(config.store);
    this.workers = new ChunkWorkers(Math.max(1, Math.min(config.pipelineDepth, availableParallelism())));
  }

  async onModuleDestroy(): Promise<void> {
    await this.workers.close();
    await this.store.close();
  }

  /** Where a finished backup's objects are (null while it has none). */
  location(b: StoredBackup): BackupLocation | null {
    if (b.serviceMetadata === null) return null;
    return { container: b.container ?? this.store.defaultContainer(b.id), prefix: b.serviceMetadata };
  }

  /** The backups to apply, full first. */
  async chainOf(b: StoredBackup): Promise<BackupLocation[]> {
    const out: BackupLocation[] = [];
    let cur: StoredBackup = b;
    for (let depth = 0; depth < 10_000; depth++) {
      const loc = this.location(cur);
      if (loc === null)
        throw new InvalidInputError(`Invalid backup: backup ${cur.id} has no stored objects.`);
      out.unshift(loc);
      if (cur.parentId === null) return out;
      const parentId: string = cur.parentId;
      const parent = await this.backups.findById(this.db, parentId, null, { withDeleted: true });
      if (parent === null)
        throw new InvalidInputError(`Invalid backup: the parent backup ${parentId} is missing.`);
      cur = parent;
    }
    throw new InvalidInputError(`Invalid backup: the chain of backup ${b.id} is too long.`);
  }

  /** Writes backup `b` into `target`; returns the backed-up volume's volume_meta. */
  async restore(
    b: StoredBackup,
    target: string,
    newVolume: boolean,
    progress: ProgressReport,
  ): Promise<string | null> {
    return restoreBackup({
      store: this.store,
      workers: this.workers,
      depth: this.config.pipelineDepth,
      chain: await this.chainOf(b),
      target,
      bytes: b.size * GIB,
      newVolume,
      progress,
      reportEvery: this.config.chunkSize,
      warn: (message) => this.log.warn(`restore of backup ${b.id}: ${message}`),
    });
  }

  /** Volume create from a backup (3.47): the new sparse file gets the backup's bytes. */
  async restoreIntoNewVolume(backupId: string, target: string): Promise<void> {
    const b = await this.backups.findById(this.db, backupId, null);
    if (!b || (b.status !== 'available' && b.status !== 'restoring'))
      throw new InvalidInputError(
        `Invalid backup: backup ${backupId} is not available to create a volume from.`,
      );
    await this.restore(
      b,
      target,
      true,
      // The backup stays `available` here: nothing to report on it, only whether it still exists.
      async () => (await this.backups.findById(this.db, backupId, null)) !== null,
    );
  }
}
