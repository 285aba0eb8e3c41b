import type { ListsEvery } from '../jobs';

/**
 * Jobs of the backup side of a back end. The API (and the policy scheduler) record the backup row
 * and add the job in one transaction; the backup worker of the back end that holds the volume's
 * bytes runs it. Every job carries the backup id, so a redelivered job finds its effect applied.
 */

export const BACKUP_CREATE_JOB = 'backup.create';
export const BACKUP_RESTORE_JOB = 'backup.restore';
export const BACKUP_DELETE_JOB = 'backup.delete';
export const BACKUP_IMPORT_JOB = 'backup.import';

/** Data of `backup.create`, `backup.delete` and `backup.import`. */
export interface BackupJob {
  readonly backupId: string;
}

export interface BackupRestoreJob {
  readonly backupId: string;
  readonly volumeId: string;
  /** The volume was created by this restore (BS-8.1.6: failure → error, names restored from volume_meta). */
  readonly newVolume: boolean;
}

/** Job queue of the backup side of one back end (`host@backend`). */
export const backupJobQueue = (backend: string): string =>
  `block-storage.backup.${backend.replace(/[^A-Za-z0-9._-]/g, '_')}`;

/** Every job of a backup queue, by name. */
export interface BackupJobPayloads {
  'backup.create': BackupJob;
  'backup.restore': BackupRestoreJob;
  'backup.delete': BackupJob;
  'backup.import': BackupJob;
}

export type BackupJobName = keyof BackupJobPayloads;

/** The names a backup queue carries; its worker checks at start that each has a handler. */
export const BACKUP_JOB_NAMES = [
  BACKUP_CREATE_JOB,
  BACKUP_RESTORE_JOB,
  BACKUP_DELETE_JOB,
  BACKUP_IMPORT_JOB,
] as const satisfies readonly BackupJobName[];

/**
 * The worker job that rebases a kept incremental onto a full (ours): the merged objects are written
 * under a new prefix in the store, then the row swaps to them by compare-and-set on its parent.
 */
export const BACKUP_REBASE_JOB = 'backup.rebase';

/** `BACKUP_REBASE_JOB`'s payload: the backup to rebase and the parent it had when retention chose it. */
export interface BackupRebaseJob {
  readonly backupId: string;
  readonly parentId: string;
}

/** The rebase queue of a back end's backup worker (beside its create/restore/delete queue). */
export const backupRebaseQueue = (backend: string): string =>
  `block-storage.backup-rebase.${backend.replace(/[^A-Za-z0-9._-]/g, '_')}`;

/** Every job of a rebase queue, by name. */
export interface BackupRebaseJobPayloads {
  'backup.rebase': BackupRebaseJob;
}

export const BACKUP_REBASE_JOB_NAMES = [
  BACKUP_REBASE_JOB,
] as const satisfies readonly (keyof BackupRebaseJobPayloads)[];

/** Compile-time: `BACKUP_JOB_NAMES` lists every backup job. */
export const BACKUP_JOB_NAMES_COMPLETE: ListsEvery<BackupJobName, typeof BACKUP_JOB_NAMES> = true;
