import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BACKUP_OPERATIONS, encodeVolumeMeta, parseBackupCodec } from '@osc/block-storage-domain';
import {
  BackupPolicyRepository,
  BackupRepository,
  QuotaRepository,
  Settlements,
  VolumeRepository,
  type StoredBackup,
} from '@osc/block-storage-persistence';
import type { BackupJob } from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { GIB } from '../volume-backend/sparse-file';
import { VOLUME_PATHS, type VolumePaths } from '../volume-backend/volume-paths';
import { BackupCancelledError } from './backup-engine';
import { sameBlocksAs, writeBackup } from './backup-writer';
import { createLocation } from './backup-location';
import { failureReason, observeBackup, progressReport } from './backup-reporting';
import { BackupRestorer } from './backup-restorer';
import type { BackupStore } from './stores';
import { BACKUP_CONFIG, type BackupConfig } from './backup.config';

/**
 * `backup.create` (spec 7.9, BS-11.4–11.6): a full or incremental backup of the volume's (or
 * snapshot's) file into the store, then, in one transaction, the backup `available`, its quota
 * reservation committed, its parent's dependent count raised and its source released. A backup
 * no longer `creating` was cancelled; a policy's backup that would change nothing is dropped.
 */
@Injectable()
export class BackupCreateProcessor {
  private readonly log = new Logger('backup');
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly settlements = new Settlements();
  private readonly quotas = new QuotaRepository();
  private readonly policies = new BackupPolicyRepository();
  private readonly store: BackupStore;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(BACKUP_CONFIG) private readonly config: BackupConfig,
    @Inject(VOLUME_PATHS) private readonly paths: VolumePaths,
    private readonly restorer: BackupRestorer,
  ) {
    this.store = restorer.store;
  }

  async fail(b: StoredBackup, reason: string): Promise<void> {
    this.log.warn(`backup ${b.id} failed: ${reason}`);
    await this.db.transaction((em) => this.settlements.failBackupCreate(em, b, reason, this.clock.now()));
  }

  async create(data: BackupJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'creating' || b.importRecord !== null) return;
    const { container, prefix } = createLocation(this.store, b);
    let objectCount: number;
    // A policy's backup that would change nothing is dropped when the policy says so (skip_unchanged):
    // the backup the volume still equals.
    let unchangedSince: string | null = null;
    let droppingPolicy: string | null = null;
    const started = process.hrtime.bigint();
    try {
      this.store.checkContainer(container);
      // The driver and container are the backup's from the start, as Cinder records them, so a
      // failed backup shows where it was going.
      await this.backups.update(this.db, b.id, { service: this.store.driverId, container }, this.clock.now());
      const v = await this.volumes.findById(this.db, b.volumeId, null);
      if (!v) throw new InvalidInputError(`Volume ${b.volumeId} no longer exists.`);
      const parent = b.parentId === null ? null : await this.backups.findById(this.db, b.parentId, null);
      const parentLocation = parent ? this.restorer.location(parent) : null;
      if (b.parentId !== null && parentLocation === null)
        throw new InvalidInputError('The parent backup is gone or incomplete. Do a full backup.');
      const volumeMeta = encodeVolumeMeta(v);
      droppingPolicy = b.snapshotId === null ? await this.policies.skippingPolicyOf(this.db, b.id) : null;
      // The job starts at 0% (a re-run job starts over).
      if (!(await this.backups.reportProgress(this.db, b.id, 'creating', this.clock.now(), 0)))
        throw new BackupCancelledError('The backup was cancelled.');
      const source =
        b.snapshotId !== null ? this.paths.snapshotFile(b.snapshotId) : this.paths.volumeFile(b.volumeId);
      const params = { chunkSize: this.config.chunkSize, blockSize: this.config.blockSize };
      if (droppingPolicy !== null && b.parentId === null) {
        // A full: compare with the volume's newest backup first (read only, stops at a difference).
        const last = await this.backups.latestAvailable(this.db, b.projectId, b.volumeId, null);
        const base = last && this.restorer.location(last);
        if (
          last &&
          base &&
          (await sameBlocksAs({
            store: this.store,
            workers: this.restorer.workers,
            params,
            source,
            bytes: b.size * GIB,
            base,
          }))
        ) {
          await this.dropUnchanged(b, droppingPolicy, last.id);
          return;
        }
      }
      const written = await writeBackup({
        store: this.store,
        workers: this.restorer.workers,
        depth: this.config.pipelineDepth,
        params,
        codec: parseBackupCodec(this.config.compression),
        source,
        bytes: b.size * GIB,
        location: { container, prefix },
        description: {
          backupId: b.id,
          volumeId: b.volumeId,
          name: b.name,
          description: b.description,
          createdAt: String(b.createdAt),
          parentId: b.parentId,
        },
        volumeMeta,
        parent: parentLocation,
        // Each chunk reports progress (the reconciler leaves a moving backup alone); a backup no
        // longer `creating` was cancelled (force-deleted or ended by the reconciler).
        progress: progressReport(this.db, this.clock, b, 'creating', null),
        dropUnchanged: droppingPolicy !== null,
      });
      objectCount = written.objectCount;
      if (written.unchanged === true) unchangedSince = b.parentId;
    } catch (err) {
      if (err instanceof BackupCancelledError) {
        await this.db.transaction((em) => this.settlements.releaseBackupSource(em, b, this.clock.now()));
        return;
      }
      await this.store.deletePrefix(container, prefix).catch(() => undefined);
      await this.fail(b, `Backup failed: ${failureReason(err)}`);
      return;
    }
    if (unchangedSince !== null && droppingPolicy !== null) {
      await this.dropUnchanged(b, droppingPolicy, unchangedSince);
      return;
    }
    observeBackup('create', b.size * GIB, started);
    let done = false;
    await this.db.transaction(async (em) => {
      done = await this.backups.transition(em, b.id, BACKUP_OPERATIONS.created, this.clock.now(), {
        object_count: objectCount,
        service_metadata: prefix,
        container,
        service: this.store.driverId,
      });
      if (done) {
        await this.quotas.settleReservation(em, b.id, true);
        if (b.parentId !== null) await this.backups.addDependent(em, b.parentId, 1);
      }
      await this.settlements.releaseBackupSource(em, b, this.clock.now());
    });
    // Deleted (forced) while the last objects were written: nothing refers to them any more.
    if (!done && (await this.backups.findById(this.db, b.id, null)) === null)
      await this.store.deletePrefix(container, prefix);
  }

  /**
   * A policy's incremental in which nothing changed since its parent: nothing was stored, so the row
   * goes (no empty backup in the owner's list), its quota reservation is given back, the volume returns
   * to its status, and the policy's last run says why this volume has no new backup.
   */
  private async dropUnchanged(b: StoredBackup, policyId: string, since: string): Promise<void> {
    const reason = `unchanged since backup ${since}: no backup kept (skip_unchanged)`;
    await this.db.transaction(async (em) => {
      if (await this.backups.softDelete(em, b.id, ['creating'], this.clock.now())) {
        await this.quotas.settleReservation(em, b.id, false);
        await this.policies.recordDropped(em, policyId, b.id, b.volumeId, reason);
      }
      await this.settlements.releaseBackupSource(em, b, this.clock.now());
    });
    this.log.log(`backup ${b.id} of volume ${b.volumeId} by policy ${policyId}: volume ${reason}`);
  }
}
