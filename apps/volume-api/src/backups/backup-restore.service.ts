import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  BACKUP_OPERATIONS,
  parseRestoreBackup,
  refusalOf,
  VOLUME_OPERATIONS,
} from '@osc/block-storage-domain';
import { BackupRepository, VolumeRepository } from '@osc/block-storage-persistence';
import { BACKUP_RESTORE_JOB, type BackupRestoreJob } from '@osc/contracts';
import { InvalidInputError, InvalidStateError, OverLimitError, TransientError } from '@osc/errors';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendOf } from '../jobs/outbox-job';
import { PoolsService } from '../pools/pools.service';
import { VolumeCreateService } from '../volumes/volume-create.service';
import { volumeNotFound } from '../volumes/volume-lookup';
import { backupQueueJob, loadBackup, requireLiveBackupBackend } from './backup-lookup';

/** How long a restore waits for the volume it created to settle (BS-7.9.7). */
const NEW_VOLUME_WAIT_MS = 120_000;

/**
 * `POST /backups/{id}/restore` (spec 7.9): into a given volume, or into one created for it. The
 * backup and the volume move by compare-and-set and the worker's job is committed in the same
 * transaction, on the backup queue of the volume's back end.
 */
@Injectable()
export class BackupRestoreService {
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly pools: PoolsService,
    private readonly volumesService: VolumeCreateService,
  ) {}

  async restore(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseRestoreBackup(body);
    const b = await loadBackup(this.db, api, id);
    api.authorize('backup:restore', b.projectId);
    if (b.status !== 'available')
      throw new InvalidStateError(`Invalid backup: Backup status must be available, but it is ${b.status}.`);
    let volumeId = input.volumeId;
    let newVolume = false;
    if (volumeId === null) {
      const name = input.name ?? `restore_backup_${b.id}`;
      let created: Record<string, unknown>;
      try {
        created = await this.volumesService.create(api, {
          volume: {
            size: b.size,
            name,
            description: 'auto-created_from_restore_from_backup',
            availability_zone: b.availabilityZone ?? undefined,
          },
        });
      } catch (err) {
        if (err instanceof OverLimitError)
          throw new OverLimitError(err.message.replace(/^[A-Za-z]+: /, ''), 0);
        throw err;
      }
      volumeId = String((created['volume'] as Record<string, unknown>)['id']);
      newVolume = true;
      await this.waitSettled(volumeId);
    }
    const v = await this.volumes.findById(this.db, volumeId, api.isAdmin ? null : api.ctx.projectId);
    if (!v) throw volumeNotFound(volumeId);
    if (v.status !== 'available')
      throw new InvalidStateError(
        `Invalid volume: Volume to be restored to must be available, but the current status is "${v.status}".`,
      );
    if (v.size < b.size)
      throw new InvalidInputError(
        `Invalid volume: volume size ${v.size}GB is too small to restore backup of size ${b.size}GB.`,
      );
    if (v.host === null)
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} is not placed on a back end.`);
    const backend = backendOf(v.host);
    await requireLiveBackupBackend(this.pools, backend);
    const now = this.clock.now();
    await this.db.transaction(async (em) => {
      if (
        !(await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restore, now, {
          restore_volume_id: v.id,
        }))
      ) {
        throw new InvalidStateError(refusalOf(BACKUP_OPERATIONS.restore, { id: b.id, status: b.status }));
      }
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.restoreBackup, now))) {
        throw new InvalidStateError(
          refusalOf(VOLUME_OPERATIONS.restoreBackup, { id: v.id, status: v.status }),
        );
      }
      const data: BackupRestoreJob = { backupId: b.id, volumeId: v.id, newVolume };
      await this.outbox.add(em, {
        ...backupQueueJob(
          backend,
          { name: BACKUP_RESTORE_JOB, data },
          `${b.id}-${v.id}-${now.getTime()}`,
          v.id,
        ),
      });
    });
    return { restore: { backup_id: b.id, volume_id: v.id, volume_name: v.name } };
  }

  /** A volume created for a restore must leave `creating` before the restore may start (BS-7.9.7). */
  private async waitSettled(volumeId: string): Promise<void> {
    const until = Date.now() + NEW_VOLUME_WAIT_MS;
    for (;;) {
      const v = await this.volumes.findById(this.db, volumeId, null);
      if (!v) throw volumeNotFound(volumeId);
      if (v.status === 'available') return;
      if (v.status !== 'creating')
        throw new InvalidStateError(
          `Invalid volume: The volume created for the restore ended in ${v.status}.`,
        );
      if (Date.now() > until)
        throw new TransientError('The volume created for the restore did not become available in time.');
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
