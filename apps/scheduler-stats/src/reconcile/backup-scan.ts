import type { DataSource, EntityManager } from 'typeorm';
import { BACKUP_OPERATIONS, backupRecoveryJob } from '@osc/block-storage-domain';
import {
  BackupRepository,
  type ReconcileRepository,
  Settlements,
  type StuckBackupRow,
} from '@osc/block-storage-persistence';
import type { Pass, Scan, StuckRows } from './reconcile-pass';

/**
 * Stuck backups: resumed with their recovery job, or ended — a create failed (its source released),
 * a restore ended, a delete in `error`.
 */
export class BackupScan implements Scan {
  private readonly settlements = new Settlements();
  private readonly backups = new BackupRepository();

  constructor(
    private readonly db: DataSource,
    private readonly reconcile: ReconcileRepository,
    private readonly rows: StuckRows,
  ) {}

  async run(pass: Pass): Promise<void> {
    for (const { backup } of await this.reconcile.stuckBackups(this.db, this.rows.query(pass, 'backup'))) {
      await this.rows.claim(
        pass,
        'backup',
        backup.id,
        (em) => this.reconcile.stuckBackups(em, { ...this.rows.query(pass, 'backup'), claim: backup.id }),
        (em, b) => this.resolve(pass, em, b),
      );
    }
  }

  private async resolve(pass: Pass, em: EntityManager, row: StuckBackupRow): Promise<void> {
    const b = row.backup;
    const job = backupRecoveryJob(b, `-reconcile-${pass.now.getTime()}`);
    // An import is resumable; a plain create is not (BS-8.3.6), whatever the worker's state.
    const d = this.rows.decide(
      pass,
      'backup',
      { status: b.status, since: row.since, mark: row.mark },
      { worker: this.rows.workerOf(pass, b.host), jobInputs: job !== null },
    );
    if (d.action === 'leave') return;
    if (d.action === 'resume' && job !== null)
      return this.rows.resume(pass, em, 'backup', b.id, b.status, job, d.reason);
    if (d.action !== 'end') return;
    const reason = `Ended by the reconciler: ${d.reason}.`;
    const done =
      b.status === 'creating'
        ? await this.settlements.failBackupCreate(em, b, reason, pass.now)
        : b.status === 'restoring'
          ? await this.settlements.endBackupRestore(em, b, reason, pass.now)
          : await this.backups.transition(em, b.id, BACKUP_OPERATIONS.deleteFailed, pass.now, {
              fail_reason: reason.slice(0, 1000),
            });
    if (done)
      await this.rows.ended(
        pass,
        em,
        {
          resource: 'backup',
          id: b.id,
          projectId: b.projectId,
          from: b.status,
          to: d.to,
          messageType: 'VOLUME_BACKUP',
        },
        d,
      );
  }
}
