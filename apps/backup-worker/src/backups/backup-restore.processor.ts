import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BACKUP_OPERATIONS, decodeVolumeMeta, VOLUME_OPERATIONS } from '@osc/block-storage-domain';
import { BackupRepository, VolumeRepository } from '@osc/block-storage-persistence';
import type { BackupRestoreJob } from '@osc/contracts';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { GIB } from '../volume-backend/sparse-file';
import { VOLUME_PATHS, type VolumePaths } from '../volume-backend/volume-paths';
import { BackupCancelledError } from './backup-engine';
import { failureReason, observeBackup, progressReport } from './backup-reporting';
import { BackupRestorer } from './backup-restorer';

/**
 * `backup.restore` (spec 7.9, BS-11.7): the backup's chain written into the volume's file, then
 * the volume `available` with the backed-up metadata and the backup `available` again, in one
 * transaction; a failure leaves the volume in error and the backup available.
 */
@Injectable()
export class BackupRestoreProcessor {
  private readonly log = new Logger('backup');
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_PATHS) private readonly paths: VolumePaths,
    private readonly restorer: BackupRestorer,
  ) {}

  async restore(data: BackupRestoreJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'restoring' || b.restoreVolumeId !== data.volumeId) return;
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'restoring-backup') {
      await this.backups.transition(this.db, b.id, BACKUP_OPERATIONS.restored, this.clock.now());
      return;
    }
    let volumeMeta: string | null = null;
    try {
      if (!(await this.backups.reportProgress(this.db, b.id, 'restoring', this.clock.now(), 0)))
        throw new BackupCancelledError('The restore was cancelled.');
      const started = process.hrtime.bigint();
      volumeMeta = await this.restorer.restore(
        b,
        this.paths.volumeFile(v.id),
        data.newVolume,
        progressReport(this.db, this.clock, b, 'restoring', v.id),
      );
      observeBackup('restore', b.size * GIB, started);
    } catch (err) {
      this.log.warn(`restoring backup ${b.id} into volume ${v.id} failed: ${failureReason(err)}`);
      await this.db.transaction(async (em) => {
        await this.volumes.transition(
          em,
          v.id,
          data.newVolume ? VOLUME_OPERATIONS.restoreIntoNewFailed : VOLUME_OPERATIONS.restoreFailed,
          this.clock.now(),
          {
            error_reason: `Restoring backup ${b.id} failed: ${failureReason(err)}`.slice(0, 1000),
          },
        );
        await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restored, this.clock.now());
      });
      return;
    }
    const set: Record<string, unknown> = {};
    // BS-11.7: the backed-up volume's user metadata and bootable flag come back with its bytes; an
    // auto-created target also takes its name and description. Unreadable volume_meta: bytes only.
    const meta = volumeMeta === null ? null : decodeVolumeMeta(volumeMeta);
    if (meta !== null) {
      if (Object.keys(meta.metadata).length > 0)
        set['metadata'] = JSON.stringify({ ...v.metadata, ...meta.metadata });
      if (meta.bootable) set['bootable'] = true;
      if (data.newVolume && v.name === `restore_backup_${b.id}`) {
        if (meta.name !== null) set['display_name'] = meta.name;
        if (meta.description !== null) set['display_description'] = meta.description;
      }
    }
    await this.db.transaction(async (em) => {
      await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.restored, this.clock.now(), set);
      await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restored, this.clock.now());
    });
  }
}
