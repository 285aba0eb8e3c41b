import type { DataSource, EntityManager } from 'typeorm';
import { snapshotRecoveryJob, type SnapshotStatus } from '@osc/block-storage-domain';
import {
  type ReconcileRepository,
  SnapshotRepository,
  type StuckSnapshotRow,
} from '@osc/block-storage-persistence';
import type { Pass, Scan, StuckRows } from './reconcile-pass';

/** Stuck snapshots: resumed with their recovery job, or ended by compare-and-set in the status the domain names. */
export class SnapshotScan implements Scan {
  private readonly snapshots = new SnapshotRepository();

  constructor(
    private readonly db: DataSource,
    private readonly reconcile: ReconcileRepository,
    private readonly rows: StuckRows,
  ) {}

  async run(pass: Pass): Promise<void> {
    for (const { id } of await this.reconcile.stuckSnapshots(this.db, this.rows.query(pass, 'snapshot'))) {
      await this.rows.claim(
        pass,
        'snapshot',
        id,
        (em) => this.reconcile.stuckSnapshots(em, { ...this.rows.query(pass, 'snapshot'), claim: id }),
        (em, sn) => this.resolve(pass, em, sn),
      );
    }
  }

  private async resolve(pass: Pass, em: EntityManager, s: StuckSnapshotRow): Promise<void> {
    const job = snapshotRecoveryJob(s, `-reconcile-${pass.now.getTime()}`);
    const holderLive =
      s.status === 'backing-up' ? s.backupLive : s.status === 'restoring' ? s.revertLive : undefined;
    const d = this.rows.decide(pass, 'snapshot', s, {
      worker: this.rows.workerOf(pass, s.host),
      jobInputs: job !== null,
      holderLive,
    });
    if (d.action === 'leave') return;
    if (d.action === 'resume' && job !== null)
      return this.rows.resume(pass, em, 'snapshot', s.id, s.status, job, d.reason);
    if (d.action !== 'end') return;
    const reason = `Ended by the reconciler: ${d.reason}.`;
    const to = d.to as SnapshotStatus;
    const set = to.startsWith('error') ? { error_reason: reason.slice(0, 1000), manage_source: null } : {};
    if (await this.snapshots.compareAndSetStatus(em, s.id, [s.status as SnapshotStatus], to, pass.now, set)) {
      await this.rows.ended(
        pass,
        em,
        {
          resource: 'snapshot',
          id: s.id,
          projectId: s.projectId,
          from: s.status,
          to,
          messageType: 'VOLUME_SNAPSHOT',
        },
        d,
      );
    }
  }
}
