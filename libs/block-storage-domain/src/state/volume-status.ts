import type { TransitionTable } from './transition-table';

/** Volume statuses (spec section 8.1), upstream spellings; the last four are internal. */
export const VOLUME_STATUSES = [
  'creating',
  'available',
  'reserved',
  'attaching',
  'in-use',
  'detaching',
  'maintenance',
  'deleting',
  'error',
  'error_deleting',
  'awaiting-transfer',
  'backing-up',
  'error_backing-up',
  'restoring-backup',
  'error_restoring',
  'extending',
  'error_extending',
  'downloading',
  'uploading',
  'retyping',
  'reverting',
  'managing',
  'error_managing',
  'error_managing_deleting',
  'unmanaging',
] as const;
export type VolumeStatus = (typeof VOLUME_STATUSES)[number];

/**
 * Normal volume transitions (BS-8.1.x). Operations that return a volume to "its previous status"
 * (backup, upload, extend, retype) list both `available` and `in-use` as targets; the worker knows
 * which one applies. Cinder: deletion is allowed from available, error, error_restoring,
 * error_extending and error_managing; error_deleting is left only by an admin force-delete.
 * `os-unmanage` (BS-7.7) accepts the same statuses as a delete and goes to unmanaging.
 * Attach edges (BS-8.1.9) follow Cinder's attachment code: a legacy `os-attach` takes an
 * available volume straight to in-use (`finish_attach`), and removing an attachment sets the
 * status its remaining attachments imply (`volume_detached`): in-use → available when the last
 * attached one goes, attaching → reserved when only a reserved one is left.
 */
const NEXT: Readonly<Record<VolumeStatus, readonly VolumeStatus[]>> = {
  creating: ['available', 'error', 'downloading'],
  downloading: ['available', 'error'],
  available: [
    'deleting',
    'extending',
    'retyping',
    'backing-up',
    'restoring-backup',
    'awaiting-transfer',
    'uploading',
    'reserved',
    'attaching',
    'in-use',
    'maintenance',
    'reverting',
    'unmanaging',
  ],
  reserved: ['attaching', 'available', 'in-use'],
  attaching: ['in-use', 'available', 'reserved'],
  'in-use': [
    'detaching',
    'extending',
    'retyping',
    'backing-up',
    'uploading',
    'reserved',
    'attaching',
    'available',
  ],
  detaching: ['available', 'in-use'],
  maintenance: ['available', 'error'],
  deleting: ['error_deleting'],
  error: ['deleting', 'unmanaging'],
  error_deleting: [],
  'awaiting-transfer': ['available'],
  'backing-up': ['available', 'in-use'],
  'error_backing-up': [],
  'restoring-backup': ['available', 'error_restoring', 'error'],
  error_restoring: ['deleting', 'unmanaging'],
  extending: ['available', 'in-use', 'error_extending'],
  error_extending: ['deleting', 'unmanaging'],
  uploading: ['available', 'in-use'],
  retyping: ['available', 'in-use', 'error'],
  reverting: ['available', 'error'],
  managing: ['available', 'error_managing'],
  error_managing: ['deleting', 'error_managing_deleting', 'unmanaging'],
  error_managing_deleting: [],
  unmanaging: [],
};

export const VOLUME_TRANSITIONS: TransitionTable<VolumeStatus> = { statuses: VOLUME_STATUSES, next: NEXT };

/** Statuses from which a user (non-forced) delete is accepted (BS-8.1.2). */
export const VOLUME_DELETABLE_STATUSES: readonly VolumeStatus[] = [
  'available',
  'error',
  'error_restoring',
  'error_extending',
  'error_managing',
];

/** Statuses a volume must be in to be the source of a clone (BS-7.7.3). */
export const VOLUME_CLONEABLE_STATUSES: readonly VolumeStatus[] = ['available', 'in-use'];

/** Internal statuses are shown to clients under their public names (BS-7.7.9). */
const DISPLAYED_AS: Partial<Record<VolumeStatus, VolumeStatus>> = {
  managing: 'creating',
  error_managing: 'error',
  error_managing_deleting: 'deleting',
};

export const displayVolumeStatus = (status: VolumeStatus): VolumeStatus => DISPLAYED_AS[status] ?? status;

/** Statuses an admin may set with os-reset_status (BS-8.1.11, BS-13.4: deleting, error_deleting and detaching refused). */
export const VOLUME_RESETTABLE_STATUSES: readonly VolumeStatus[] = VOLUME_STATUSES.filter(
  (s) =>
    ![
      'deleting',
      'error_deleting',
      'detaching',
      'managing',
      'error_managing',
      'error_managing_deleting',
      'unmanaging',
    ].includes(s),
);

/** `os-retype` (BS-8.1.4): the statuses a volume may be retyped from. */
export const VOLUME_RETYPE_SOURCES: readonly VolumeStatus[] = ['available', 'in-use'];

/**
 * Migration statuses that do not count as an active migration: Cinder's AVAILABLE_MIGRATION_STATUS
 * (None, deleting, error, success; spec BS-7.7: "migration_status not in none/error/success/deleting"),
 * `none` being how an admin reset writes None. The `IN (...)` set of a migration's start.
 */
export const NOT_MIGRATING_STATUSES: readonly (string | null)[] = [
  null,
  'none',
  'error',
  'success',
  'deleting',
];

/** True while a migration is under way (migration_status outside NOT_MIGRATING_STATUSES). */
export const isMigrating = (migrationStatus: string | null): boolean =>
  !NOT_MIGRATING_STATUSES.includes(migrationStatus);

/**
 * Migration statuses during which a migration job is moving the volume: the API has started it
 * (`starting`) or the destination back end is copying (`migrating`). Recovery, the reconciler and
 * the back end resume or end exactly these; `completing` belongs to a compute-driven swap.
 */
export const MIGRATION_IN_FLIGHT_STATUSES = ['starting', 'migrating'] as const;

/** True while a migration job owns the volume (migration_status in MIGRATION_IN_FLIGHT_STATUSES). */
export const isMigrationInFlight = (migrationStatus: string | null | undefined): boolean =>
  (MIGRATION_IN_FLIGHT_STATUSES as readonly (string | null | undefined)[]).includes(migrationStatus);
