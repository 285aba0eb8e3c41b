import { sourcesOf, type TransitionTable } from './transition-table';

/** Snapshot statuses (spec section 8.2). */
export const SNAPSHOT_STATUSES = [
  'creating', 'available', 'deleting', 'error', 'error_deleting', 'backing-up', 'restoring', 'unmanaging',
] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

export const isSnapshotStatus = (s: unknown): s is SnapshotStatus => typeof s === 'string' && (SNAPSHOT_STATUSES as readonly string[]).includes(s);

/** creating → available | error; available/error → deleting → (removed) | error_deleting; backup and revert return to available. */
const NEXT: Readonly<Record<SnapshotStatus, readonly SnapshotStatus[]>> = {
  creating: ['available', 'error'],
  available: ['deleting', 'backing-up', 'restoring', 'unmanaging'],
  deleting: ['error_deleting'],
  error: ['deleting'],
  error_deleting: [],
  'backing-up': ['available'],
  restoring: ['available'],
  unmanaging: [],
};

export const SNAPSHOT_TRANSITIONS: TransitionTable<SnapshotStatus> = { statuses: SNAPSHOT_STATUSES, next: NEXT };

export const allowedSnapshotSources = (to: SnapshotStatus): SnapshotStatus[] => sourcesOf(SNAPSHOT_TRANSITIONS, to);
