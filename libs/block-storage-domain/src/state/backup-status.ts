import type { TransitionTable } from './transition-table';

/** Backup statuses (spec section 8.3). */
export const BACKUP_STATUSES = [
  'creating',
  'available',
  'deleting',
  'deleted',
  'error',
  'error_deleting',
  'restoring',
] as const;
export type BackupStatus = (typeof BACKUP_STATUSES)[number];

const NEXT: Readonly<Record<BackupStatus, readonly BackupStatus[]>> = {
  creating: ['available', 'error'],
  available: ['deleting', 'restoring'],
  deleting: ['deleted', 'error_deleting'],
  deleted: [],
  error: ['deleting'],
  error_deleting: [],
  restoring: ['available'],
};

export const BACKUP_TRANSITIONS: TransitionTable<BackupStatus> = { statuses: BACKUP_STATUSES, next: NEXT };

/** Transfer lifecycle (spec section 8.5): a transfer is either open, or ends deleted or accepted. */
export const TRANSFER_STATES = ['created', 'deleted', 'accepted'] as const;
export type TransferState = (typeof TRANSFER_STATES)[number];

const TRANSFER_NEXT: Readonly<Record<TransferState, readonly TransferState[]>> = {
  created: ['deleted', 'accepted'],
  deleted: [],
  accepted: [],
};

export const TRANSFER_TRANSITIONS: TransitionTable<TransferState> = {
  statuses: TRANSFER_STATES,
  next: TRANSFER_NEXT,
};
