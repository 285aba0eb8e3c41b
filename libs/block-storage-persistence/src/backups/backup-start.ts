import { BACKUP_CREATE_JOB, BACKUP_DELETE_JOB, backupJobQueue, type BackupJob } from '@osc/contracts';
import {
  BACKUP_OPERATIONS,
  SNAPSHOT_OPERATIONS,
  backupQuotaDeltas,
  fromStatus,
  refusalOf,
  type StatusOperation,
  type VolumeStatus,
} from '@osc/block-storage-domain';
import { InvalidStateError } from '@osc/errors';
import { QuotaRepository } from '../quota.repository';
import type { Queryable } from '../sql';
import { SnapshotRepository, VolumeRepository } from '../volume.repository';
import { BackupRepository, type StoredBackup } from './backup.repository';

/** The job a started backup hands to the worker of its back end (an outbox item of `@osc/messaging`). */
export interface BackupCreateJobItem {
  readonly destination: 'jobs';
  readonly queue: string;
  readonly job: {
    readonly id: string;
    readonly name: typeof BACKUP_CREATE_JOB | typeof BACKUP_DELETE_JOB;
    readonly data: BackupJob;
    readonly attempts: number;
    readonly backoff: { readonly type: 'exponential'; readonly delayMs: number };
  };
  readonly partitionKey: string;
}

/** The backup create job of `backupId` on `backend`'s backup queue (one per backup: the id deduplicates). */
export const backupCreateJobItem = (
  backend: string,
  backupId: string,
  volumeId: string,
): BackupCreateJobItem => ({
  destination: 'jobs',
  queue: backupJobQueue(backend),
  job: {
    id: `backup-create-${backupId}`,
    name: BACKUP_CREATE_JOB,
    data: { backupId },
    attempts: 3,
    backoff: { type: 'exponential', delayMs: 500 },
  },
  partitionKey: volumeId,
});

/**
 * Starting a backup, in the caller's transaction: the source (snapshot, or volume by the given
 * operation from its current status) moves by compare-and-set, the project's backup quota is
 * reserved (keyed by the backup id, settled by the worker), the row is inserted `creating`. Returns
 * the worker's job, for the caller to add to the outbox in the same transaction. POST /backups and
 * the backup policies' firing both start backups here, so both obey the same rules.
 */
export async function startBackup(
  em: Queryable,
  backup: StoredBackup & { readonly host: string },
  volume: { readonly operation: StatusOperation<VolumeStatus>; readonly status: VolumeStatus },
  now: Date,
): Promise<BackupCreateJobItem> {
  if (backup.snapshotId !== null) {
    if (
      !(await new SnapshotRepository().transition(em, backup.snapshotId, SNAPSHOT_OPERATIONS.backup, now))
    ) {
      throw new InvalidStateError(refusalOf(SNAPSHOT_OPERATIONS.backup, { id: backup.snapshotId }));
    }
  } else if (
    !(await new VolumeRepository().transition(
      em,
      backup.volumeId,
      fromStatus<VolumeStatus>(volume.operation, volume.status),
      now,
    ))
  ) {
    throw new InvalidStateError(refusalOf(volume.operation, { id: backup.volumeId, status: volume.status }));
  }
  await new QuotaRepository().reserve(em, {
    id: backup.id,
    projectId: backup.projectId,
    volumeId: backup.id,
    operation: 'backup',
    newSize: null,
    deltas: backupQuotaDeltas(backup.size),
    now,
  });
  await new BackupRepository().insert(em, backup);
  return backupCreateJobItem(backup.host, backup.id, backup.volumeId);
}

/** The backup delete job of `backupId` on `backend`'s backup queue. */
export const backupDeleteJobItem = (backend: string, backupId: string): BackupCreateJobItem => ({
  destination: 'jobs',
  queue: backupJobQueue(backend),
  job: {
    id: `backup-delete-${backupId}`,
    name: BACKUP_DELETE_JOB,
    data: { backupId },
    attempts: 3,
    backoff: { type: 'exponential', delayMs: 500 },
  },
  partitionKey: backupId,
});

/**
 * Deleting a backup as DELETE /backups/{id} does, in the caller's transaction: refused (null) while
 * incrementals depend on it or when it is not `available`/`error`; else `deleting` by compare-and-set
 * and the worker's delete job returned for the outbox.
 */
export async function startBackupDelete(
  em: Queryable,
  b: StoredBackup,
  now: Date,
): Promise<BackupCreateJobItem | null> {
  if (b.numDependentBackups > 0 || b.host === null) return null;
  if (!(await new BackupRepository().transition(em, b.id, BACKUP_OPERATIONS.delete, now))) return null;
  return backupDeleteJobItem(b.host, b.id);
}
