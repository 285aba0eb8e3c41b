import {
  BACKUP_DELETE_JOB,
  BACKUP_IMPORT_JOB,
  backupJobQueue,
  MANAGE_SOURCE_METADATA_KEY,
  MAX_SCHEDULE_ATTEMPTS,
  MIGRATION_JOB_METADATA_KEY,
  SNAPSHOT_CREATE_JOB,
  SNAPSHOT_DELETE_JOB,
  SNAPSHOT_MANAGE_JOB,
  SNAPSHOT_UNMANAGE_JOB,
  VOLUME_CREATE_JOB,
  VOLUME_DELETE_JOB,
  VOLUME_EXTEND_JOB,
  VOLUME_MANAGE_JOB,
  VOLUME_MIGRATE_JOB,
  VOLUME_REVERT_JOB,
  VOLUME_UNMANAGE_JOB,
  backendJobQueue,
  snapshotManageJobId,
  snapshotUnmanageJobId,
  volumeManageJobId,
  volumeMigrateJobId,
  volumeUnmanageJobId,
  type SnapshotManageJob,
  type VolumeCreateJob,
  type VolumeExtendJob,
  type VolumeManageJob,
  type VolumeMigrateJob,
  type VolumeSourceRef,
} from '@osc/contracts';
import { VOLUME_EXTEND_ATTEMPTS } from '../quotas/quota';

/** A job to queue again for work a back end lost (BS-8.6.2): queue, id, name, data, retry policy. */
export interface RecoveryJob {
  readonly queue: string;
  readonly id: string;
  readonly name: string;
  readonly data: unknown;
  readonly attempts?: number;
  readonly backoff?: { readonly type: 'fixed' | 'exponential'; readonly delayMs: number };
}

/** `host@backend` of a pool name `host@backend#pool`. */
export const backendOfPool = (pool: string): string => pool.split('#')[0] ?? pool;

/** The fields of a volume row its recovery job is built from. */
export interface RecoverableVolume {
  readonly id: string;
  readonly status: string;
  readonly host: string | null;
  readonly size: number;
  readonly availabilityZone: string | null;
  readonly sourceVolid: string | null;
  readonly snapshotId: string | null;
  readonly migrationStatus: string | null;
  readonly adminMetadata: Readonly<Record<string, string>>;
}

/** What else the row's job needs: an extend's target size (its reservation), a revert's `restoring` snapshot. */
export interface VolumeJobInputs {
  readonly extendNewSize: number | null;
  readonly restoringSnapshotId: string | null;
}

/**
 * The migration job kept in a volume's admin metadata while it migrates (null when absent or
 * unreadable).
 */
export function migrationJobOf(adminMetadata: Readonly<Record<string, string>>): VolumeMigrateJob | null {
  const text = adminMetadata[MIGRATION_JOB_METADATA_KEY];
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as VolumeMigrateJob;
  } catch {
    return null;
  }
}

/**
 * The job that drives a volume's migration to its destination again, on the destination's queue;
 * null without a readable job in the admin metadata.
 */
export function migrationRecoveryJob(
  v: Pick<RecoverableVolume, 'adminMetadata'>,
  idSuffix = '',
): RecoveryJob | null {
  const job = migrationJobOf(v.adminMetadata);
  if (job === null) return null;
  return {
    queue: backendJobQueue(backendOfPool(job.destination)),
    id: `${volumeMigrateJobId(job)}${idSuffix}`,
    name: VOLUME_MIGRATE_JOB,
    data: job,
    attempts: 3,
    backoff: { type: 'exponential', delayMs: 500 },
  };
}

/**
 * BS-8.6.2: the job that drives a volume in a back-end status (`creating` placed, `deleting`,
 * `extending`, `reverting`, `managing`, `unmanaging`) on its back end again. Every handler checks
 * the row is still in the status it expects, so a job that is still queued, or runs twice, does
 * nothing more. Null when the job cannot be rebuilt: an unplaced volume, an extend without its
 * reservation, a revert whose snapshot is no longer `restoring`. The back end's restart recovery
 * and the reconciler both use it; `idSuffix` makes a resumed job distinct from the lost one (job
 * ids are deduplicated for a while after they finish).
 */
export function volumeRecoveryJob(
  v: RecoverableVolume,
  inputs: VolumeJobInputs,
  idSuffix = '',
): RecoveryJob | null {
  if (v.host === null) return null;
  const backend = backendOfPool(v.host);
  const queue = backendJobQueue(backend);
  switch (v.status) {
    case 'creating': {
      const fromBackup = v.adminMetadata['restore_source_backup_id'];
      const source: VolumeSourceRef =
        v.sourceVolid !== null
          ? { kind: 'volume', id: v.sourceVolid, backend }
          : v.snapshotId !== null
            ? { kind: 'snapshot', id: v.snapshotId, backend }
            : typeof fromBackup === 'string'
              ? { kind: 'backup', id: fromBackup, backend }
              : { kind: 'none' };
      const data: VolumeCreateJob = {
        volumeId: v.id,
        pool: v.host,
        schedule: {
          volumeId: v.id,
          size: v.size,
          availabilityZone: v.availabilityZone,
          extraSpecs: {},
          source,
          excludedPools: [],
          attempt: MAX_SCHEDULE_ATTEMPTS,
        },
      };
      return { queue, id: `volume-recover-${v.id}${idSuffix}`, name: VOLUME_CREATE_JOB, data };
    }
    case 'deleting':
      return {
        queue,
        id: `volume-delete-${v.id}${idSuffix}`,
        name: VOLUME_DELETE_JOB,
        data: { volumeId: v.id },
      };
    case 'managing': {
      const data: VolumeManageJob = {
        volumeId: v.id,
        source: v.adminMetadata[MANAGE_SOURCE_METADATA_KEY] ?? '',
      };
      return { queue, id: `${volumeManageJobId(v.id)}${idSuffix}`, name: VOLUME_MANAGE_JOB, data };
    }
    case 'unmanaging':
      return {
        queue,
        id: `${volumeUnmanageJobId(v.id)}${idSuffix}`,
        name: VOLUME_UNMANAGE_JOB,
        data: { volumeId: v.id },
      };
    case 'reverting':
      if (inputs.restoringSnapshotId === null) return null;
      return {
        queue,
        id: `volume-revert-recover-${v.id}-${inputs.restoringSnapshotId}${idSuffix}`,
        name: VOLUME_REVERT_JOB,
        data: { volumeId: v.id, snapshotId: inputs.restoringSnapshotId },
      };
    case 'extending': {
      // The reservation row carries the target size; without one the extend cannot be finished.
      if (inputs.extendNewSize === null) return null;
      const data: VolumeExtendJob = { volumeId: v.id, newSize: inputs.extendNewSize };
      return {
        queue,
        id: `volume-extend-${v.id}-${data.newSize}${idSuffix}`,
        name: VOLUME_EXTEND_JOB,
        data,
        attempts: VOLUME_EXTEND_ATTEMPTS,
        backoff: { type: 'exponential', delayMs: 200 },
      };
    }
    default:
      return null;
  }
}

/** The fields of a snapshot row its recovery job is built from. */
export interface RecoverableSnapshot {
  readonly id: string;
  readonly status: string;
  readonly host: string | null;
  readonly manageSource: string | null;
}

/** The job that drives a snapshot in `creating` (plain or managed), `deleting` or `unmanaging` again; null otherwise. */
export function snapshotRecoveryJob(s: RecoverableSnapshot, idSuffix = ''): RecoveryJob | null {
  if (s.host === null) return null;
  const queue = backendJobQueue(backendOfPool(s.host));
  switch (s.status) {
    case 'unmanaging':
      return {
        queue,
        id: `${snapshotUnmanageJobId(s.id)}${idSuffix}`,
        name: SNAPSHOT_UNMANAGE_JOB,
        data: { snapshotId: s.id },
      };
    case 'creating':
      if (s.manageSource !== null) {
        const data: SnapshotManageJob = { snapshotId: s.id, source: s.manageSource };
        return { queue, id: `${snapshotManageJobId(s.id)}${idSuffix}`, name: SNAPSHOT_MANAGE_JOB, data };
      }
      return {
        queue,
        id: `snapshot-create-${s.id}${idSuffix}`,
        name: SNAPSHOT_CREATE_JOB,
        data: { snapshotId: s.id },
      };
    case 'deleting':
      return {
        queue,
        id: `snapshot-delete-${s.id}${idSuffix}`,
        name: SNAPSHOT_DELETE_JOB,
        data: { snapshotId: s.id },
      };
    default:
      return null;
  }
}

/** The fields of a backup row its recovery job is built from. */
export interface RecoverableBackup {
  readonly id: string;
  readonly status: string;
  readonly host: string | null;
  readonly importRecord: unknown;
}

/**
 * BS-8.3.6: the job that drives a backup again — an import (`creating` with its record) or a
 * delete. A plain `creating` backup and a `restoring` one are not resumed but ended (null).
 */
export function backupRecoveryJob(b: RecoverableBackup, idSuffix = ''): RecoveryJob | null {
  if (b.host === null) return null;
  const queue = backupJobQueue(backendOfPool(b.host));
  if (b.status === 'creating' && b.importRecord !== null)
    return {
      queue,
      id: `backup-import-recover-${b.id}${idSuffix}`,
      name: BACKUP_IMPORT_JOB,
      data: { backupId: b.id },
    };
  if (b.status === 'deleting')
    return {
      queue,
      id: `backup-delete-${b.id}${idSuffix}`,
      name: BACKUP_DELETE_JOB,
      data: { backupId: b.id },
    };
  return null;
}
