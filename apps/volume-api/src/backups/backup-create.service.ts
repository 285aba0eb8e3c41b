import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { backupSummaryView, parseCreateBackup, VOLUME_OPERATIONS } from '@osc/block-storage-domain';
import {
  BackupRepository,
  SnapshotRepository,
  startBackup,
  VolumeRepository,
  type StoredBackup,
} from '@osc/block-storage-persistence';
import { InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendOf } from '../jobs/outbox-job';
import { PoolsService } from '../pools/pools.service';
import { volumeNotFound } from '../volumes/volume-lookup';
import { BACKUP_ROW_DRIVER, requireLiveBackupBackend } from './backup-lookup';

/**
 * `POST /backups` (spec 7.9): a full or incremental backup of a volume (or of one of its
 * snapshots). The volume moves by compare-and-set, the quota is reserved and the worker's job is
 * committed in one transaction (startBackup), on the backup queue of the back end that holds the
 * bytes; the worker settles the reservation exactly once.
 */
@Injectable()
export class BackupCreateService {
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly pools: PoolsService,
  ) {}

  async create(api: ApiRequest, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('backup:create');
    const input = parseCreateBackup(body, api.mv);
    const scope = api.isAdmin ? null : api.ctx.projectId;
    const v = await this.volumes.findById(this.db, input.volumeId, scope);
    if (!v) throw volumeNotFound(input.volumeId);
    const operation = input.force ? VOLUME_OPERATIONS.forceBackup : VOLUME_OPERATIONS.backup;
    if (!['available', 'in-use'].includes(v.status)) {
      throw new InvalidStateError(
        `Invalid volume: Volume to be backed up must be available or in-use, but the current status is "${v.status}".`,
      );
    }
    if (v.status === 'in-use' && !input.force) {
      throw new InvalidStateError('Invalid volume: Backing up an in-use volume must use the force flag.');
    }
    let dataTimestamp: Date | string = this.clock.now();
    if (input.snapshotId !== null) {
      const s = await this.snapshots.findById(this.db, input.snapshotId, scope);
      if (!s)
        throw new NotFoundError(
          'Snapshot',
          input.snapshotId,
          `Snapshot ${input.snapshotId} could not be found.`,
        );
      if (s.volumeId !== v.id)
        throw new InvalidInputError(
          `Invalid input received: Snapshot ${s.id} does not belong to volume ${v.id}.`,
        );
      if (s.status !== 'available')
        throw new InvalidStateError(
          `Invalid snapshot: Snapshot to be backed up must be available, but the current status is "${s.status}".`,
        );
      dataTimestamp = new Date(`${String(s.createdAt)}Z`);
    }
    if (v.host === null)
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} is not placed on a back end.`);
    const backend = backendOf(v.host);
    await requireLiveBackupBackend(this.pools, backend);
    let parentId: string | null = null;
    if (input.incremental) {
      const parent = await this.backups.latestAvailable(
        this.db,
        api.ctx.projectId,
        v.id,
        input.snapshotId !== null ? dataTimestamp : null,
      );
      if (!parent)
        throw new InvalidInputError('Invalid backup: No backups available to do an incremental backup.');
      parentId = parent.id;
    }
    const now = this.clock.now();
    const id = randomUUID();
    const backup: StoredBackup = {
      id,
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      volumeId: v.id,
      snapshotId: input.snapshotId,
      parentId,
      name: input.name,
      description: input.description,
      status: 'creating',
      failReason: null,
      size: v.size,
      objectCount: 0,
      availabilityZone: input.availabilityZone ?? v.availabilityZone,
      container: input.container,
      host: backend,
      service: BACKUP_ROW_DRIVER,
      serviceMetadata: null,
      numDependentBackups: 0,
      metadata: input.metadata,
      encryptionKeyId: v.encrypted ? v.encryptionKeyId : null,
      restoreVolumeId: null,
      dataTimestamp,
      createdAt: now,
      updatedAt: null,
      volumePreviousStatus: input.snapshotId !== null ? 'available' : v.status,
      importRecord: null,
      deleted: false,
    };
    await this.db.transaction(async (em) => {
      const job = await startBackup(em, { ...backup, host: backend }, { operation, status: v.status }, now);
      await this.outbox.add(em, job);
    });
    return { backup: backupSummaryView(api.view, backup) };
  }
}
