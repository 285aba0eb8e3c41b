import type { TransitionTable } from './transition-table';
import { InvalidInputError } from '@osc/errors';
import { expectObject, fieldError, rejectUnknownKeys, requireKey } from '../validation/primitives';

/** Snapshot statuses (spec section 8.2). */
export const SNAPSHOT_STATUSES = [
  'creating',
  'available',
  'deleting',
  'error',
  'error_deleting',
  'backing-up',
  'restoring',
  'unmanaging',
] as const;
export type SnapshotStatus = (typeof SNAPSHOT_STATUSES)[number];

export const isSnapshotStatus = (s: unknown): s is SnapshotStatus =>
  typeof s === 'string' && (SNAPSHOT_STATUSES as readonly string[]).includes(s);

/**
 * creating → available | error; available/error → deleting → (removed) | error_deleting; backup and revert return to
 * available; `os-unmanage` takes an available or error snapshot to unmanaging (Cinder's snapshot unmanage).
 */
const NEXT: Readonly<Record<SnapshotStatus, readonly SnapshotStatus[]>> = {
  creating: ['available', 'error'],
  available: ['deleting', 'backing-up', 'restoring', 'unmanaging'],
  deleting: ['error_deleting'],
  error: ['deleting', 'unmanaging'],
  error_deleting: [],
  'backing-up': ['available'],
  restoring: ['available'],
  unmanaging: [],
};

export const SNAPSHOT_TRANSITIONS: TransitionTable<SnapshotStatus> = {
  statuses: SNAPSHOT_STATUSES,
  next: NEXT,
};

/**
 * `os-update_snapshot_status` (the back end reporting progress): Cinder lets a `creating` snapshot
 * become creating, available or error and a `deleting` one deleting or error_deleting; any other
 * current status is refused.
 */
const STATUS_UPDATES: Partial<Record<SnapshotStatus, readonly SnapshotStatus[]>> = {
  creating: ['creating', 'available', 'error'],
  deleting: ['deleting', 'error_deleting'],
};

/** The update sources for `to` (the compare-and-set `IN (...)` set of os-update_snapshot_status). */
export const snapshotStatusUpdateSources = (to: SnapshotStatus): SnapshotStatus[] =>
  SNAPSHOT_STATUSES.filter((from) => STATUS_UPDATES[from]?.includes(to) ?? false);

/**
 * Validates `{"os-update_snapshot_status": {"status", "progress"}}` against the current status
 * with Cinder's 400 messages; returns the new status and progress (null when not given or empty).
 */
export function parseSnapshotStatusUpdate(
  args: unknown,
  current: SnapshotStatus,
): { status: SnapshotStatus; progress: string | null } {
  const a = expectObject(args, 'os-update_snapshot_status');
  rejectUnknownKeys(a, ['status', 'progress'], 'os-update_snapshot_status');
  const status = requireKey(a, 'status', 'os-update_snapshot_status');
  if (typeof status !== 'string')
    throw fieldError('status', status, `${JSON.stringify(status)} is not of type 'string'`);
  const progressRaw = a['progress'];
  let progress: string | null = null;
  if (typeof progressRaw === 'string' && progressRaw !== '') {
    const digits = progressRaw.slice(0, -1);
    if (!/^[+-]?\d+$/.test(digits.trim()))
      throw new InvalidInputError('Invalid input received: progress must be an integer percentage');
    const n = Number(digits);
    if (n < 0 || n > 100 || !progressRaw.endsWith('%'))
      throw new InvalidInputError(
        'Invalid input received: progress must be an integer percentage between 0 and 100',
      );
    progress = progressRaw;
  }
  const allowed = STATUS_UPDATES[current];
  if (allowed === undefined)
    throw new InvalidInputError(`Snapshot status ${current} not allowed for update_snapshot_status`);
  if (!isSnapshotStatus(status) || !allowed.includes(status)) {
    throw new InvalidInputError(
      `Provided snapshot status ${status.slice(0, 100)} not allowed for snapshot with status ${current}.`,
    );
  }
  return { status, progress };
}
