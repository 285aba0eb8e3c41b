import type { GroupSnapshotStatus, GroupStatus } from '../groups/groups';
import type { BackupStatus } from './backup-status';
import { SNAPSHOT_STATUSES, type SnapshotStatus } from './snapshot-status';
import {
  MIGRATION_IN_FLIGHT_STATUSES,
  NOT_MIGRATING_STATUSES,
  VOLUME_DELETABLE_STATUSES,
  VOLUME_STATUSES,
  type VolumeStatus,
} from './volume-status';

/**
 * A status-changing operation as data: the compare-and-set `UPDATE … SET status = target WHERE
 * status IN (sources)` and the text a client is refused with when no row matched. `refusal` is a
 * template: `{id}`, `{status}` (the status the resource was in) and any other `{name}` are filled
 * by `refusalOf`; null when a lost race is silent (a worker finding the resource already moved on
 * by someone else, or an action Cinder answers 202 whatever the status).
 * `bypassesTable` marks the few operations that deliberately leave the transition table (an admin
 * force, or a group delete retrying error_deleting members); every other operation's sources are
 * sources of its target in the table, or the target itself (repeating a step is no change), which a
 * unit test checks row by row.
 */
export interface StatusOperation<S extends string> {
  readonly sources: readonly S[];
  readonly target: S;
  readonly refusal: string | null;
  readonly bypassesTable?: true;
}

/** True when a resource in `status` is one the operation may move (a check before the compare-and-set). */
export const accepts = (op: { readonly sources: readonly string[] }, status: string): boolean =>
  op.sources.includes(status);

/** Fills a refusal template (`{id}`, `{status}`, …); an operation without one refuses generically. */
export function refusalOf<S extends string>(
  op: StatusOperation<S>,
  vars: Readonly<Record<string, string>>,
): string {
  const template =
    op.refusal ??
    `Invalid state: status must be ${op.sources.join(' or ')} to become ${op.target}, but it is {status}.`;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => vars[name] ?? whole);
}

const DELETE_REFUSAL = `Invalid volume: Volume status must be ${VOLUME_DELETABLE_STATUSES.join(', ')} and must not be migrating, attached, belong to a group or have snapshots (it is {status}).`;
const DETACH_REFUSAL =
  "Invalid volume: Unable to detach volume. Volume status must be 'in-use' and attach_status must be 'attached' to detach.";

const op = <S extends string>(
  sources: readonly S[],
  target: S,
  refusal: string | null,
  bypassesTable?: true,
): StatusOperation<S> =>
  bypassesTable ? { sources, target, refusal, bypassesTable } : { sources, target, refusal };

/**
 * Every volume status change the services make (Cinder's `conditional_update` calls in
 * `volume/api.py` and the manager's completions). Operations whose target depends on the volume
 * (attachments left, attached or not, a new or existing restore target) have one row per target.
 */
export const VOLUME_OPERATIONS = {
  // volume API (BS-8.1.x)
  delete: op(VOLUME_DELETABLE_STATUSES, 'deleting', DELETE_REFUSAL),
  forceDelete: op(
    VOLUME_STATUSES.filter((s) => s !== 'deleting'),
    'deleting',
    DELETE_REFUSAL,
    true,
  ),
  unmanage: op(VOLUME_DELETABLE_STATUSES, 'unmanaging', DELETE_REFUSAL),
  reserve: op(
    ['available'],
    'attaching',
    'Invalid volume: Volume status must be available to reserve, but the status is {status}.',
  ),
  reserveMultiattach: op(
    ['available', 'in-use'],
    'attaching',
    'Invalid volume: Volume status must be available or in-use to reserve, but the status is {status}.',
  ),
  attachmentReserve: op(
    ['available'],
    'reserved',
    'Invalid volume: Volume {id} status must be available or downloading to reserve, but the current status is {status}.',
  ),
  attachmentReserveMultiattach: op(
    ['available', 'in-use'],
    'reserved',
    'Invalid volume: Volume {id} status must be available, in-use or downloading to reserve, but the current status is {status}.',
  ),
  unreserveToInUse: op(['attaching'], 'in-use', null),
  unreserveToAvailable: op(['attaching'], 'available', null),
  beginDetaching: op(['in-use'], 'detaching', DETACH_REFUSAL),
  rollDetaching: op(['detaching'], 'in-use', null),
  extend: op(['available'], 'extending', 'Invalid volume: Volume {id} status must be available to extend.'),
  extendInUse: op(
    ['available', 'in-use'],
    'extending',
    'Invalid volume: Volume {id} status must be available or in-use to extend.',
  ),
  revert: op(
    ['available'],
    'reverting',
    "Invalid volume: Can't revert volume {id} to its latest snapshot {snapshot}. Volume's status must be 'available'.",
  ),
  backup: op(['available'], 'backing-up', 'Invalid volume: Volume to be backed up must be available.'),
  forceBackup: op(
    ['available', 'in-use'],
    'backing-up',
    'Invalid volume: Volume to be backed up must be available or in-use.',
  ),
  restoreBackup: op(
    ['available'],
    'restoring-backup',
    'Invalid volume: Volume to be restored to must be available.',
  ),
  offerTransfer: op(
    ['available'],
    'awaiting-transfer',
    'Invalid volume: Volume {id} status must be available to transfer.',
  ),
  endTransfer: op(['awaiting-transfer'], 'available', null),
  // volume manager (back end, placement)
  created: op(['creating'], 'available', null),
  createFailed: op(['creating'], 'error', null),
  reschedule: op(['creating'], 'creating', null),
  deleteFailed: op(['deleting'], 'error_deleting', null),
  extendedAvailable: op(['extending'], 'available', null),
  extendedInUse: op(['extending'], 'in-use', null),
  extendFailed: op(['extending'], 'error_extending', null),
  backedUpAvailable: op(['backing-up'], 'available', null),
  backedUpInUse: op(['backing-up'], 'in-use', null),
  reverted: op(['reverting'], 'available', null),
  revertFailed: op(['reverting'], 'error', null),
  restored: op(['restoring-backup'], 'available', null),
  restoreIntoNewFailed: op(['restoring-backup'], 'error', null),
  restoreFailed: op(['restoring-backup'], 'error_restoring', null),
  /**
   * Deleting a group with its volumes (BS-7.9): the member volumes may also be in error_deleting,
   * which a plain delete does not accept; the group delete retries them like a force delete.
   */
  deleteGroupMember: op(
    ['available', 'error', 'error_restoring', 'error_extending', 'error_deleting', 'error_managing'],
    'deleting',
    null,
    true,
  ),
  managed: op(['managing'], 'available', null),
  manageFailed: op(['managing'], 'error_managing', null),
} as const satisfies Record<string, StatusOperation<VolumeStatus>>;

/**
 * The operation narrowed to the one source the resource was read in (the compare-and-set then also
 * guards what was read, e.g. the backup's recorded previous status); no source when that status
 * is not one of the operation's.
 */
export const fromStatus = <S extends string>(
  op: StatusOperation<S>,
  status: S,
): Pick<StatusOperation<S>, 'sources' | 'target'> => ({
  sources: op.sources.filter((s) => s === status),
  target: op.target,
});

export type VolumeOperationName = keyof typeof VOLUME_OPERATIONS;

/** Every snapshot status change the services make (Cinder's snapshot `conditional_update` calls and the manager's completions). */
export const SNAPSHOT_OPERATIONS = {
  delete: op(
    ['available', 'error'],
    'deleting',
    'Invalid snapshot: Snapshot status must be available or error to delete, but it is {status}.',
  ),
  forceDelete: op(
    SNAPSHOT_STATUSES,
    'deleting',
    `Invalid snapshot: Snapshot status must be ${SNAPSHOT_STATUSES.join(' or ')} to delete, but it is {status}.`,
    true,
  ),
  /** A volume deleted with `cascade`: its snapshots may already be deleting. */
  deleteWithVolume: op(['available', 'error', 'deleting'], 'deleting', null),
  /** Deleting a group snapshot: members in error_deleting are retried, as a force delete would. */
  deleteGroupMember: op(['available', 'error', 'error_deleting'], 'deleting', null, true),
  unmanage: op(
    ['available', 'error'],
    'unmanaging',
    'Invalid snapshot: Snapshot status must be available or error and must not be part of a group, but it is {status}.',
  ),
  revert: op(
    ['available'],
    'restoring',
    "Invalid snapshot: Can't revert volume {volume} to its latest snapshot {id}. Snapshot's status must be 'available'.",
  ),
  backup: op(['available'], 'backing-up', 'Invalid snapshot: Snapshot to be backed up must be available.'),
  // volume manager (back end)
  created: op(['creating'], 'available', null),
  createFailed: op(['creating'], 'error', null),
  deleteFailed: op(['deleting'], 'error_deleting', null),
  reverted: op(['restoring'], 'available', null),
  backedUp: op(['backing-up'], 'available', null),
} as const satisfies Record<string, StatusOperation<SnapshotStatus>>;

/** Every backup status change (Cinder's backup API `conditional_update` calls and the backup manager's completions). */
export const BACKUP_OPERATIONS = {
  delete: op(['available', 'error'], 'deleting', 'Invalid backup: Backup status must be available or error.'),
  forceDelete: op(
    ['creating', 'available', 'error', 'error_deleting', 'restoring', 'deleting'],
    'deleting',
    'Invalid backup: Backup status must be creating or available or error or error_deleting or restoring or deleting.',
    true,
  ),
  restore: op(['available'], 'restoring', 'Invalid backup: Backup status must be available.'),
  // backup manager
  created: op(['creating'], 'available', null),
  createFailed: op(['creating'], 'error', null),
  restored: op(['restoring'], 'available', null),
  deleteFailed: op(['deleting'], 'error_deleting', null),
} as const satisfies Record<string, StatusOperation<BackupStatus>>;

/**
 * Every group status change (Cinder's group API `conditional_update` calls). `created`,
 * `createFailed` and `deleteFailed` record what the members' work settled (`settledGroupStatus`).
 */
export const GROUP_OPERATIONS = {
  placed: op(['creating'], 'available', null),
  placementFailed: op(['creating'], 'error', null),
  beginUpdate: op(['available'], 'updating', 'Group {id} status must be available to change its volumes.'),
  endUpdate: op(['updating'], 'available', null),
  delete: op(
    ['available', 'error'],
    'deleting',
    'Group status must be available or error, but current status is: {status}',
  ),
  /**
   * A delete with `delete_volumes` (BS-7.11.5): Cinder also takes a group still creating, updating,
   * in use or left in error_deleting by an earlier attempt, so this one leaves the table.
   */
  deleteWithVolumes: op(
    ['available', 'error', 'error_deleting', 'creating', 'updating', 'in-use'],
    'deleting',
    'Group status must be available or error, but current status is: {status}',
    true,
  ),
  created: op(['creating'], 'available', null),
  createFailed: op(['creating'], 'error', null),
  deleteFailed: op(['deleting'], 'error_deleting', null),
} as const satisfies Record<string, StatusOperation<GroupStatus>>;

/** Every group snapshot status change (Cinder's group snapshot API and the members' settled outcome). */
export const GROUP_SNAPSHOT_OPERATIONS = {
  delete: op(
    ['available', 'error'],
    'deleting',
    'Group snapshot status must be available or error and no group can be currently using it as source for its creation.',
  ),
  created: op(['creating'], 'available', null),
  createFailed: op(['creating'], 'error', null),
  deleteFailed: op(['deleting'], 'error_deleting', null),
} as const satisfies Record<string, StatusOperation<GroupSnapshotStatus>>;

/** The operation recording a settled group outcome (`settledGroupStatus` / `settledGroupSnapshotStatus`). */
export const GROUP_SETTLEMENTS = {
  available: GROUP_OPERATIONS.created,
  error: GROUP_OPERATIONS.createFailed,
  error_deleting: GROUP_OPERATIONS.deleteFailed,
} as const;
export const GROUP_SNAPSHOT_SETTLEMENTS = {
  available: GROUP_SNAPSHOT_OPERATIONS.created,
  error: GROUP_SNAPSHOT_OPERATIONS.createFailed,
  error_deleting: GROUP_SNAPSHOT_OPERATIONS.deleteFailed,
} as const;

/**
 * A change of a volume's migration_status as data: the compare-and-set also requires
 * `migration_status IN (migrationSources)` (null matches a volume never migrated) and writes
 * `migrationTarget`. The volume's own status moves as the caller says (a migration holds the
 * volume in a status it read and returns it to the one it recorded).
 */
export interface MigrationOperation {
  readonly migrationSources: readonly (string | null)[];
  readonly migrationTarget: string;
}

/** Every migration_status change (Cinder's `migrate_volume` / `migrate_volume_completion`, BS-7.7). */
export const MIGRATION_OPERATIONS = {
  /** The API starts one: no migration may be active. */
  start: { migrationSources: NOT_MIGRATING_STATUSES, migrationTarget: 'starting' },
  /** The destination back end starts copying (a redelivered job finds it already migrating). */
  copy: { migrationSources: MIGRATION_IN_FLIGHT_STATUSES, migrationTarget: 'migrating' },
  /** The copy finished and the volume now lives on the destination. */
  complete: { migrationSources: ['migrating'], migrationTarget: 'success' },
  /** A migration that cannot go on, whoever notices (back end, recovery, reconciler). */
  fail: { migrationSources: MIGRATION_IN_FLIGHT_STATUSES, migrationTarget: 'error' },
} as const satisfies Record<string, MigrationOperation>;
