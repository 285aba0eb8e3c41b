import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { volumeQuotaDeltas, SNAPSHOT_OPERATIONS, VOLUME_OPERATIONS } from '@osc/block-storage-domain';
import {
  QuotaRepository,
  Settlements,
  SnapshotRepository,
  VolumeRepository,
} from '@osc/block-storage-persistence';
import {
  BLOCK_STORAGE_SCHEDULER_QUEUE,
  MAX_SCHEDULE_ATTEMPTS,
  SCHEDULE_VOLUME_COMMAND,
  type SnapshotJob,
  type VolumeCreateJob,
  type VolumeDeleteJob,
  type VolumeExtendJob,
  type VolumeRevertJob,
} from '@osc/contracts';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { BackupRestorer } from '../backups/backup-restorer';
import { FileVolumeDriver } from './file-volume-driver';
import { PoolReporter } from './pool-reporter';
import { removeSnapshotRow } from './snapshot-removal';
import { GIB } from './sparse-file';

/**
 * The volume and snapshot lifecycle jobs of this back end: create, delete, extend, revert, and
 * snapshot create and delete. Each checks the row is still in the status the job expects (a
 * redelivered job does nothing, BS-8.6.1), has the driver change the bytes, then settles status
 * and quota in one transaction.
 */
@Injectable()
export class VolumeOperations {
  private readonly log = new Logger('volume-backend');
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly settlements = new Settlements();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly driver: FileVolumeDriver,
    private readonly reporter: PoolReporter,
    private readonly restorer: BackupRestorer,
  ) {}

  async createVolume(data: VolumeCreateJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'creating' || v.host !== data.pool) return;
    const bytes = v.size * GIB;
    try {
      const source = data.schedule.source;
      if (source.kind === 'volume') await this.driver.cloneVolume(source.id, v.id, bytes);
      else if (source.kind === 'snapshot') await this.driver.createVolumeFromSnapshot(source.id, v.id, bytes);
      else {
        await this.driver.createVolume(v.id, bytes);
        if (source.kind === 'backup')
          await this.restorer.restoreIntoNewVolume(source.id, this.driver.volumeFile(v.id));
      }
    } catch (err) {
      await this.driver.removeVolume(v.id).catch(() => undefined);
      await this.failCreate(data, err);
      return;
    }
    const done = await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.created, this.clock.now(), {
      service_uuid: this.driver.serviceUuid,
      shared_targets: false,
      provider_id: null,
    });
    if (!done) {
      // Lost the race: keep the file if another run of this job made the volume available here.
      const now = await this.volumes.findById(this.db, v.id, null);
      if (!now || now.host !== data.pool) await this.driver.removeVolume(v.id);
    }
    this.reporter.changed();
  }

  /** BS-10.5: re-schedule elsewhere while attempts remain, else `error` with the reason. */
  private async failCreate(data: VolumeCreateJob, err: unknown): Promise<void> {
    const reason = err instanceof Error ? err.message : String(err);
    this.log.warn(`creating volume ${data.volumeId} on ${data.pool} failed: ${reason}`);
    const attempt = data.schedule.attempt;
    await this.db.transaction(async (em) => {
      if (attempt < MAX_SCHEDULE_ATTEMPTS) {
        const reset = await this.volumes.transition(
          em,
          data.volumeId,
          VOLUME_OPERATIONS.reschedule,
          this.clock.now(),
          { host: null },
        );
        if (!reset) return;
        const schedule = {
          ...data.schedule,
          attempt: attempt + 1,
          excludedPools: [...data.schedule.excludedPools, data.pool],
        };
        await this.outbox.add(em, {
          destination: 'bus',
          queue: BLOCK_STORAGE_SCHEDULER_QUEUE,
          message: {
            id: `schedule-${data.volumeId}-${attempt + 1}`,
            type: SCHEDULE_VOLUME_COMMAND,
            payload: schedule,
          },
          partitionKey: data.volumeId,
        });
      } else {
        await this.volumes.transition(em, data.volumeId, VOLUME_OPERATIONS.createFailed, this.clock.now(), {
          error_reason: `Volume creation failed after ${attempt} attempts: ${reason}`.slice(0, 1000),
        });
      }
    });
  }

  async deleteVolume(data: VolumeDeleteJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'deleting') return;
    try {
      for (const s of await this.volumes.snapshotsOf(this.db, v.id)) {
        if (s.status === 'deleting') await this.deleteSnapshot({ snapshotId: s.id });
      }
      await this.driver.removeVolume(v.id);
    } catch (err) {
      this.log.warn(`deleting volume ${v.id} failed: ${String(err)}`);
      await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.deleteFailed, this.clock.now());
      return;
    }
    await this.db.transaction(async (em) => {
      const removed = await this.volumes.softDelete(em, v.id, ['deleting'], this.clock.now());
      if (removed && removed.consumesQuota) {
        await this.quotas.apply(
          em,
          removed.projectId,
          volumeQuotaDeltas(removed.size, v.volumeTypeName, -1),
          'in_use',
          false,
        );
      }
    });
    this.reporter.changed();
  }

  /**
   * Grows the file, then moves the volume out of `extending` and commits its reservation in one
   * transaction. Reservations recorded before reservation rows existed are settled from the sizes.
   */
  async extendVolume(data: VolumeExtendJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'extending') return;
    try {
      await this.driver.extendVolume(v.id, data.newSize * GIB);
    } catch (err) {
      this.log.warn(`extending volume ${v.id} failed: ${String(err)}`);
      await this.failExtend(v.id, `Extending the volume failed: ${String(err)}`);
      return;
    }
    const extended = v.attachments.some((a) => a.attachStatus === 'attached')
      ? VOLUME_OPERATIONS.extendedInUse
      : VOLUME_OPERATIONS.extendedAvailable;
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, extended, this.clock.now(), { size: data.newSize })))
        return;
      const reservation = (await this.quotas.reservationsOf(em, v.id)).find(
        (r) => r.operation === 'extend' && r.newSize === data.newSize,
      );
      if (reservation) await this.quotas.settleReservation(em, reservation.id, true);
      else {
        const deltas = volumeQuotaDeltas(data.newSize - v.size, v.volumeTypeName).filter((d) =>
          d.resource.startsWith('gigabytes'),
        );
        await this.quotas.settleReserved(em, v.projectId, deltas, true);
      }
      // Any other reservation of this volume belongs to an extend that can no longer finish.
      await this.quotas.releaseReservationsOf(em, v.id);
    });
    this.reporter.changed();
  }

  /** `extending` → `error_extending` with the reason, and the volume's reserved quota released, in one transaction. */
  async failExtend(volumeId: string, reason: string): Promise<void> {
    await this.db.transaction((em) =>
      this.settlements.failVolumeExtend(em, volumeId, reason, this.clock.now()),
    );
  }

  /**
   * Revert (3.40): the driver puts the snapshot's bytes in place whole; then volume `reverting` →
   * available and snapshot `restoring` → available in one transaction. A failed copy leaves the
   * volume in error and the snapshot available, as Cinder does.
   */
  async revertVolume(data: VolumeRevertJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!v || v.status !== 'reverting' || !s || s.status !== 'restoring') return;
    let failure: unknown = null;
    try {
      await this.driver.revertToSnapshot(v.id, s.id, v.size * GIB);
    } catch (err) {
      failure = err;
      this.log.warn(`reverting volume ${v.id} to snapshot ${s.id} failed: ${String(err)}`);
    }
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      await this.volumes.transition(
        em,
        v.id,
        failure === null ? VOLUME_OPERATIONS.reverted : VOLUME_OPERATIONS.revertFailed,
        now,
        failure === null
          ? {}
          : { error_reason: `Reverting to snapshot ${s.id} failed: ${String(failure)}`.slice(0, 1000) },
      );
      await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.reverted, now);
    });
  }

  async createSnapshot(data: SnapshotJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    // A managed snapshot adopts a file instead (VolumeManage.manageSnapshot).
    if (!s || s.status !== 'creating' || (s.manageSource ?? null) !== null) return;
    try {
      await this.driver.createSnapshot(s.volumeId, s.id, s.size * GIB);
    } catch (err) {
      this.log.warn(`creating snapshot ${s.id} failed: ${String(err)}`);
      await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.createFailed, this.clock.now(), {
        error_reason: String(err).slice(0, 1000),
      });
      return;
    }
    if (
      !(await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.created, this.clock.now(), {
        progress: '100%',
      }))
    ) {
      await this.driver.removeSnapshot(s.id);
    }
  }

  async deleteSnapshot(data: SnapshotJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!s || s.status !== 'deleting') return;
    try {
      await this.driver.removeSnapshot(s.id);
    } catch (err) {
      this.log.warn(`deleting snapshot ${s.id} failed: ${String(err)}`);
      await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.deleteFailed, this.clock.now());
      return;
    }
    await removeSnapshotRow(this.db, this.clock, s, 'deleting');
  }
}
