import type { DataSource } from 'typeorm';
import { BACKUP_DRIVER_IDS } from '@osc/block-storage-domain';
import { BackupRepository, type StoredBackup } from '@osc/block-storage-persistence';
import type { BackupJobPayloads, JobOf } from '@osc/contracts';
import { NotFoundError, TransientError } from '@osc/errors';
import type { OutboxItem } from '@osc/messaging';
import type { ApiRequest } from '../http/api-request';
import { backupJob } from '../jobs/outbox-job';
import type { PoolsService } from '../pools/pools.service';

export const backupNotFound = (id: string): NotFoundError =>
  new NotFoundError('Backup', id, `Backup ${id} could not be found.`);

/**
 * The service a backup row carries until its worker records its own driver (BS-11.1): the API does
 * not know which driver (BACKUP_DRIVER) the back-end hosts run.
 */
export const BACKUP_ROW_DRIVER = BACKUP_DRIVER_IDS.posix;

const backups = new BackupRepository();

/** The backup `id` as the request may see it (every project for an admin); 404 otherwise. */
export async function loadBackup(db: DataSource, api: ApiRequest, id: string): Promise<StoredBackup> {
  const b = await backups.findById(db, id, api.isAdmin ? null : api.ctx.projectId);
  if (!b) throw backupNotFound(id);
  return b;
}

/** Back ends with a live worker (fresh pool stats); a backup needs one (BS-7.9.4: else 503). */
export async function liveBackupBackends(pools: PoolsService): Promise<string[]> {
  return [...new Set((await pools.fresh()).map((p) => p.backend))];
}

export async function requireLiveBackupBackend(pools: PoolsService, backend: string): Promise<void> {
  if (!(await liveBackupBackends(pools)).includes(backend))
    throw new TransientError('Service cinder-backup could not be found.');
}

/**
 * A job on the backup queue of `backend`: its id is the job name and `id` (one job per backup
 * operation), retried from a 500 ms backoff.
 */
export const backupQueueJob = (
  backend: string,
  job: JobOf<BackupJobPayloads>,
  id: string,
  partitionKey: string,
): OutboxItem =>
  backupJob(backend, {
    ...job,
    id: `${job.name.replace('.', '-')}-${id}`,
    partitionKey,
    backoffMs: 500,
  });
