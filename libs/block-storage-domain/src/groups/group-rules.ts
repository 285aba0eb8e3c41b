import type { VolumeStatus } from '../state/volume-status';
import type { GroupStatus } from './groups';

/**
 * Group statuses in which a group takes a new member volume or a group snapshot (BS-7.11,
 * BS-7.7: Cinder's group API asks for available or in-use).
 */
export const GROUP_USABLE_STATUSES: readonly GroupStatus[] = ['available', 'in-use'];

/** Volume statuses in which a member may leave its group by a group update (BS-7.11.6). */
export const GROUP_REMOVABLE_MEMBER_STATUSES: readonly VolumeStatus[] = [
  'available',
  'in-use',
  'error',
  'error_deleting',
];

/** Volume statuses in which a volume may join a group by a group update (BS-7.11.6). */
export const GROUP_ADDABLE_MEMBER_STATUSES: readonly VolumeStatus[] = ['available', 'in-use'];

/**
 * Member statuses that rule a group snapshot out together with an unplaced or migrating member
 * (Cinder refuses those first, with their own message), before the status check below.
 */
export const GROUP_SNAPSHOT_BLOCKING_MEMBER_STATUSES: readonly VolumeStatus[] = ['maintenance', 'error'];

/** Volume statuses every member must be in for a group snapshot to be taken (BS-7.11.7). */
export const GROUP_SNAPSHOT_MEMBER_STATUSES: readonly VolumeStatus[] = ['available', 'in-use'];

/** True when `status` (as a row holds it) is one of `statuses`. */
export const isStatusIn = (statuses: readonly string[], status: string): boolean => statuses.includes(status);
