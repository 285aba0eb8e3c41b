import {
  GROUP_SNAPSHOT_STATUSES,
  GROUP_STATUSES,
  type GroupSnapshotStatus,
  type GroupStatus,
} from '../groups/groups';
import type { TransitionTable } from './transition-table';

/**
 * Normal group transitions (BS-7.11): placement ends `creating` in available or error; changing the
 * member volumes holds the group in `updating`; a delete is accepted from available or error and
 * ends in error_deleting when a member cannot be deleted. `in-use` and error_deleting are entered
 * or left only by an admin reset-status or a delete with `delete_volumes` (which bypasses the table).
 */
const GROUP_NEXT: Readonly<Record<GroupStatus, readonly GroupStatus[]>> = {
  creating: ['available', 'error'],
  available: ['updating', 'deleting'],
  updating: ['available'],
  'in-use': [],
  deleting: ['error_deleting'],
  error: ['deleting'],
  error_deleting: [],
};

export const GROUP_TRANSITIONS: TransitionTable<GroupStatus> = { statuses: GROUP_STATUSES, next: GROUP_NEXT };

/** Group snapshots (BS-7.12): created from their members' snapshots, deleted from available or error. */
const GROUP_SNAPSHOT_NEXT: Readonly<Record<GroupSnapshotStatus, readonly GroupSnapshotStatus[]>> = {
  creating: ['available', 'error'],
  available: ['deleting'],
  updating: [],
  deleting: ['error_deleting'],
  error: ['deleting'],
  error_deleting: [],
};

export const GROUP_SNAPSHOT_TRANSITIONS: TransitionTable<GroupSnapshotStatus> = {
  statuses: GROUP_SNAPSHOT_STATUSES,
  next: GROUP_SNAPSHOT_NEXT,
};
