import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  BACKUP_DRIVER_IDS,
  backupQuotaDeltas,
  backupSummaryView,
  exportRecordView,
  parseImportRecord,
} from '@osc/block-storage-domain';
import { BackupRepository, QuotaRepository, type StoredBackup } from '@osc/block-storage-persistence';
import { BACKUP_IMPORT_JOB } from '@osc/contracts';
import { InvalidInputError, InvalidStateError, TransientError } from '@osc/errors';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { PoolsService } from '../pools/pools.service';
import { BACKUP_ROW_DRIVER, backupQueueJob, liveBackupBackends, loadBackup } from './backup-lookup';

/**
 * An import names the driver that exported it. Every driver of this product (posix, swift, s3)
 * writes the same chunked format, so a record of any of them is handed to a worker, which reads
 * the objects in its own store (copied there beforehand when the drivers differ) or ends the
 * import in `error` when they are not there.
 */
const importableFrom = (service: string): boolean =>
  Object.values(BACKUP_DRIVER_IDS).some((id) => id.startsWith(service));

/**
 * Backup records (spec 7.9): `GET /backups/{id}/export_record` and `POST /backups/import_record`.
 * An import reserves its quota, inserts the row and commits the worker's job in one transaction,
 * on the backup queue of a live back end; the worker reads the objects and settles the quota.
 */
@Injectable()
export class BackupRecordsService {
  private readonly backups = new BackupRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly pools: PoolsService,
  ) {}

  async exportRecord(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    const b = await loadBackup(this.db, api, id);
    api.authorize('backup:export-import', b.projectId);
    if (b.status !== 'available')
      throw new InvalidStateError(`Invalid backup: Backup status must be available and not ${b.status}.`);
    return exportRecordView(b.service ?? BACKUP_ROW_DRIVER, b);
  }

  async importRecord(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('backup:backup-import');
    const input = parseImportRecord(body);
    const live = await liveBackupBackends(this.pools);
    const backend = live.sort()[0];
    if (backend === undefined || !importableFrom(input.backupService))
      throw new TransientError(`Service ${input.backupService.slice(0, 100)} could not be found.`);
    const existing = await this.backups.findById(this.db, input.id, null, { withDeleted: true });
    if (existing && !existing.deleted)
      throw new InvalidInputError(`Invalid backup: Backup ${input.id} already exists.`);
    const now = this.clock.now();
    const backup: StoredBackup = {
      id: input.id,
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      volumeId: '00000000-0000-0000-0000-000000000000',
      snapshotId: null,
      parentId: null,
      name: null,
      description: null,
      status: 'creating',
      failReason: null,
      size: input.size,
      objectCount: 0,
      availabilityZone: null,
      container: null,
      host: backend,
      service: BACKUP_ROW_DRIVER,
      serviceMetadata: null,
      numDependentBackups: 0,
      metadata: {},
      encryptionKeyId: null,
      restoreVolumeId: null,
      dataTimestamp: now,
      createdAt: now,
      updatedAt: null,
      volumePreviousStatus: null,
      importRecord: input.record,
      deleted: false,
    };
    await this.db.transaction(async (em) => {
      if (existing) await this.backups.purgeDeleted(em, input.id);
      await this.quotas.reserve(em, {
        id: input.id,
        projectId: api.ctx.projectId,
        volumeId: input.id,
        operation: 'backup',
        newSize: null,
        deltas: backupQuotaDeltas(input.size),
        now,
      });
      await this.backups.insert(em, backup);
      await this.outbox.add(
        em,
        backupQueueJob(
          backend,
          { name: BACKUP_IMPORT_JOB, data: { backupId: input.id } },
          `${input.id}-${now.getTime()}`,
          input.id,
        ),
      );
    });
    return { backup: backupSummaryView(api.view, backup) };
  }
}
