import type { DataSource, EntityManager } from 'typeorm';
import {
  MIGRATION_OPERATIONS,
  isMigrationInFlight,
  migrationJobOf,
  migrationRecoveryJob,
  previousVolumeStatus,
  volumeRecoveryJob,
  type VolumeStatus,
} from '@osc/block-storage-domain';
import {
  type ReconcileRepository,
  Settlements,
  type StuckVolumeRow,
  VolumeRepository,
} from '@osc/block-storage-persistence';
import { type Pass, type Scan, type StuckRows, statusKey } from './reconcile-pass';

/**
 * Stuck volumes: resumed with their recovery job (a migration in flight with its migration job), or
 * ended — a migration failed back to where it started, an extend in `error_extending`, anything else
 * in the status the domain names (`previous`: available or in-use, as the attachments say).
 */
export class VolumeScan implements Scan {
  private readonly settlements = new Settlements();
  private readonly volumes = new VolumeRepository();

  constructor(
    private readonly db: DataSource,
    private readonly reconcile: ReconcileRepository,
    private readonly rows: StuckRows,
  ) {}

  async run(pass: Pass): Promise<void> {
    for (const { id } of await this.reconcile.stuckVolumes(this.db, this.rows.query(pass, 'volume'))) {
      await this.rows.claim(
        pass,
        'volume',
        id,
        (em) => this.reconcile.stuckVolumes(em, { ...this.rows.query(pass, 'volume'), claim: id }),
        (em, v) => this.resolve(pass, em, v),
      );
    }
  }

  private async resolve(pass: Pass, em: EntityManager, v: StuckVolumeRow): Promise<void> {
    const migration = migrationJobOf(v.adminMetadata);
    const migrating = isMigrationInFlight(v.migrationStatus);
    const job = migrating
      ? migrationRecoveryJob(v, `-reconcile-${pass.now.getTime()}`)
      : volumeRecoveryJob(v, v, `-reconcile-${pass.now.getTime()}`);
    const holderLive =
      v.status === 'backing-up' ? v.backupLive : v.status === 'restoring-backup' ? v.restoreLive : undefined;
    const d = this.rows.decide(pass, 'volume', v, {
      migrationStatus: v.migrationStatus,
      worker: this.rows.workerOf(pass, migrating ? (migration?.destination ?? null) : v.host),
      jobInputs: job !== null,
      holderLive,
    });
    const key = statusKey(v.status, v.migrationStatus);
    if (d.action === 'leave') return;
    if (d.action === 'resume' && job !== null)
      return this.rows.resume(pass, em, 'volume', v.id, key, job, d.reason);
    if (d.action !== 'end') return;
    const reason = `Ended by the reconciler: ${d.reason}.`;
    let to: string;
    let done: boolean;
    if (migrating) {
      to =
        migration?.previousStatus ??
        (v.status === 'retyping' || v.status === 'maintenance' ? previousVolumeStatus(v.attached) : v.status);
      done = migration
        ? await this.settlements.failMigration(em, v.id, migration, pass.now)
        : await this.volumes.transitionMigration(
            em,
            v.id,
            MIGRATION_OPERATIONS.fail,
            { from: v.status as VolumeStatus, to: to as VolumeStatus },
            pass.now,
          );
    } else if (v.status === 'extending') {
      to = 'error_extending';
      done = await this.settlements.failVolumeExtend(em, v.id, reason, pass.now);
    } else {
      to = d.to === 'previous' ? previousVolumeStatus(v.attached) : d.to;
      const errored = to.startsWith('error');
      done = await this.volumes.compareAndSetStatus(
        em,
        v.id,
        [v.status as VolumeStatus],
        to as VolumeStatus,
        pass.now,
        errored ? { error_reason: reason.slice(0, 1000) } : {},
      );
    }
    if (done)
      await this.rows.ended(
        pass,
        em,
        { resource: 'volume', id: v.id, projectId: v.projectId, from: key, to, messageType: 'VOLUME' },
        d,
      );
  }
}
