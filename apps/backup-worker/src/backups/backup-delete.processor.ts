import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BACKUP_OPERATIONS, backupQuotaDeltas } from '@osc/block-storage-domain';
import { BackupRepository, QuotaRepository, Settlements } from '@osc/block-storage-persistence';
import type { BackupJob } from '@osc/contracts';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { createLocation } from './backup-location';
import { failureReason } from './backup-reporting';
import { BackupRestorer } from './backup-restorer';
import type { BackupStore } from './stores';

/**
 * `backup.delete` (spec 7.9): the backup's objects removed from the store (or what a cancelled
 * create left), then, in one transaction, the row deleted, its quota given back (an open
 * reservation counted first) and its parent's dependent count lowered.
 */
@Injectable()
export class BackupDeleteProcessor {
  private readonly log = new Logger('backup');
  private readonly backups = new BackupRepository();
  private readonly settlements = new Settlements();
  private readonly quotas = new QuotaRepository();
  private readonly store: BackupStore;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly restorer: BackupRestorer,
  ) {
    this.store = restorer.store;
  }

  private valid(container: string): boolean {
    try {
      this.store.checkContainer(container);
      return true;
    } catch {
      return false;
    }
  }

  async remove(data: BackupJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'deleting') return;
    const loc = this.restorer.location(b);
    try {
      if (loc !== null) await this.store.deletePrefix(loc.container, loc.prefix);
      else if (b.importRecord === null) {
        // Never finished: remove whatever a cancelled create left.
        const { container, prefix } = createLocation(this.store, b);
        // A container this store refuses held nothing: the create failed before writing.
        if (this.valid(container)) await this.store.deletePrefix(container, prefix);
      }
    } catch (err) {
      this.log.warn(`deleting backup ${b.id} failed: ${failureReason(err)}`);
      await this.backups.transition(this.db, b.id, BACKUP_OPERATIONS.deleteFailed, this.clock.now(), {
        fail_reason: failureReason(err),
      });
      return;
    }
    await this.db.transaction(async (em) => {
      const removed = await this.backups.softDelete(em, b.id, ['deleting'], this.clock.now());
      if (!removed) return;
      // A reservation still open (force-deleted while creating or importing) is counted first,
      // so the release below gives back exactly what the backup took.
      await this.quotas.settleReservation(em, b.id, true);
      await this.quotas.apply(em, b.projectId, backupQuotaDeltas(b.size, -1), 'in_use', false);
      if (b.parentId !== null) await this.backups.addDependent(em, b.parentId, -1);
      if (loc === null && b.importRecord === null)
        await this.settlements.releaseBackupSource(em, b, this.clock.now());
    });
  }
}
