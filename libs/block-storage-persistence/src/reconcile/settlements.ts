import { MIGRATION_JOB_METADATA_KEY, type VolumeMigrateJob } from '@osc/contracts';
import {
  BACKUP_OPERATIONS,
  MIGRATION_OPERATIONS,
  SNAPSHOT_OPERATIONS,
  VOLUME_OPERATIONS,
} from '@osc/block-storage-domain';
import { BackupRepository, type StoredBackup } from '../backups/backup.repository';
import { QuotaRepository } from '../quota.repository';
import type { Queryable } from '../sql';
import { SnapshotRepository, VolumeRepository } from '../volume.repository';

/**
 * The ways an interrupted operation is ended, each one compare-and-set plus its quota and source
 * bookkeeping, to run inside the caller's transaction. The back end's own failure paths, its
 * restart recovery and the reconciler all end work through these, so an operation ends the same
 * way whoever notices it stopped. Each returns false when the row had already left the status
 * (someone else ended it first), and then changes nothing.
 */
export class Settlements {
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();

  /** The backup's volume (or snapshot) goes back to the status it had before the backup (BS-8.1.5). */
  async releaseBackupSource(em: Queryable, b: StoredBackup, now: Date): Promise<void> {
    if (b.snapshotId !== null) {
      await this.snapshots.transition(em, b.snapshotId, SNAPSHOT_OPERATIONS.backedUp, now);
    } else {
      await this.volumes.transition(
        em,
        b.volumeId,
        b.volumePreviousStatus === 'in-use'
          ? VOLUME_OPERATIONS.backedUpInUse
          : VOLUME_OPERATIONS.backedUpAvailable,
        now,
      );
    }
  }

  /**
   * `creating` → `error` with the reason; the reservation is committed (a failed backup counts
   * until it is deleted, as in Cinder) and the source released.
   */
  async failBackupCreate(em: Queryable, b: StoredBackup, reason: string, now: Date): Promise<boolean> {
    if (
      !(await this.backups.transition(em, b.id, BACKUP_OPERATIONS.createFailed, now, {
        fail_reason: reason.slice(0, 1000),
      }))
    )
      return false;
    await this.quotas.settleReservation(em, b.id, true);
    await this.releaseBackupSource(em, b, now);
    return true;
  }

  /** An interrupted restore (BS-8.3.6): the backup `available` again, its target volume `error_restoring`. */
  async endBackupRestore(em: Queryable, b: StoredBackup, reason: string, now: Date): Promise<boolean> {
    if (!(await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restored, now))) return false;
    if (b.restoreVolumeId !== null) {
      await this.volumes.transition(em, b.restoreVolumeId, VOLUME_OPERATIONS.restoreFailed, now, {
        error_reason: reason.slice(0, 1000),
      });
    }
    return true;
  }

  /** `extending` → `error_extending`; the extend's reservation is released. */
  async failVolumeExtend(em: Queryable, volumeId: string, reason: string, now: Date): Promise<boolean> {
    if (
      !(await this.volumes.transition(em, volumeId, VOLUME_OPERATIONS.extendFailed, now, {
        error_reason: reason.slice(0, 1000),
      }))
    )
      return false;
    await this.quotas.releaseReservationsOf(em, volumeId);
    return true;
  }

  /**
   * A migration that cannot go on: the volume returns to its previous status with migration_status
   * `error`, the job leaves its admin metadata and the new type's reservation is released.
   */
  async failMigration(em: Queryable, volumeId: string, job: VolumeMigrateJob, now: Date): Promise<boolean> {
    if (
      !(await this.volumes.transitionMigration(
        em,
        volumeId,
        MIGRATION_OPERATIONS.fail,
        { from: job.holdStatus, to: job.previousStatus },
        now,
      ))
    )
      return false;
    await this.volumes.setAdminMetadataKey(em, volumeId, MIGRATION_JOB_METADATA_KEY, null);
    if (job.reservationId !== null) await this.quotas.settleReservation(em, job.reservationId, false);
    return true;
  }
}
