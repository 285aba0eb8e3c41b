import type { ListsEvery } from '../jobs';

/**
 * Messages of the block-storage side. The API records a volume as `creating` and sends
 * `scheduler.schedule-volume` on the scheduler queue (command bus); scheduler-stats places it and
 * adds a back-end job on the queue of the back end that owns the chosen pool (job queue); the
 * worker of that back end allocates storage and settles the status. Every message carries the
 * resource id and the target state, so a redelivery finds its effect applied and does nothing.
 */

/** Command bus queue of scheduler-stats. */
export const BLOCK_STORAGE_SCHEDULER_QUEUE = 'block-storage.scheduler';
export const SCHEDULE_VOLUME_COMMAND = 'scheduler.schedule-volume';

/** Where a new volume's bytes come from. */
export type VolumeSourceRef =
  | { readonly kind: 'none' }
  | { readonly kind: 'volume'; readonly id: string; readonly backend: string | null }
  | { readonly kind: 'snapshot'; readonly id: string; readonly backend: string | null }
  /** Volume create from a backup (3.47): `backend` is the back end whose worker made the backup. */
  | { readonly kind: 'backup'; readonly id: string; readonly backend: string | null };

export interface ScheduleVolumePayload {
  readonly volumeId: string;
  readonly size: number;
  readonly availabilityZone: string | null;
  readonly extraSpecs: Readonly<Record<string, string | null>>;
  readonly source: VolumeSourceRef;
  /** Pools that already failed this request (BS-10.5). */
  readonly excludedPools: readonly string[];
  /** 1 for the first placement; at most {@link MAX_SCHEDULE_ATTEMPTS}. */
  readonly attempt: number;
  readonly requestId?: string;
}

export const MAX_SCHEDULE_ATTEMPTS = 3;

/** Job queue of one back end (`host@backend`), its name made safe for queue names. */
export const backendJobQueue = (backend: string): string =>
  `block-storage.backend.${backend.replace(/[^A-Za-z0-9._-]/g, '_')}`;

export const VOLUME_CREATE_JOB = 'volume.create';
export const VOLUME_DELETE_JOB = 'volume.delete';
export const VOLUME_EXTEND_JOB = 'volume.extend';
export const SNAPSHOT_CREATE_JOB = 'snapshot.create';
export const SNAPSHOT_DELETE_JOB = 'snapshot.delete';
/** Revert (3.40): the volume (`reverting`) gets the bytes of its latest snapshot (`restoring`). */
export const VOLUME_REVERT_JOB = 'volume.revert';

export interface VolumeRevertJob {
  readonly volumeId: string;
  readonly snapshotId: string;
}

export interface VolumeCreateJob {
  readonly volumeId: string;
  /** `host@backend#pool` */
  readonly pool: string;
  readonly schedule: ScheduleVolumePayload;
}

export interface VolumeDeleteJob {
  readonly volumeId: string;
}

export interface VolumeExtendJob {
  readonly volumeId: string;
  readonly newSize: number;
}

export interface SnapshotJob {
  readonly snapshotId: string;
}

/**
 * Migration of a volume to another back end (`os-migrate_volume`, `os-retype` with
 * `migration_policy: on-demand`). The job runs on the destination back end: it copies the bytes
 * from the source back end, then moves the volume row (host, and the type for a retype) and clears
 * the migration in one transaction, then removes the source copy.
 */
export const VOLUME_MIGRATE_JOB = 'volume.migrate';

/** Admin-metadata key holding the running migration's job (JSON), for recovery after a restart. */
export const MIGRATION_JOB_METADATA_KEY = 'migration_job';

export interface VolumeMigrateJob {
  readonly volumeId: string;
  /** Pool the volume is on when the migration starts (`host@backend#pool`). */
  readonly source: string;
  /** Pool it moves to. */
  readonly destination: string;
  /** Retype: the new type (and the quota reservation moving the per-type usage); null for a plain migration. */
  readonly newTypeId: string | null;
  readonly reservationId: string | null;
  /** Status while the migration runs: `retyping` for a retype, `maintenance` with lock_volume, else the volume's own. */
  readonly holdStatus: 'available' | 'in-use' | 'retyping' | 'maintenance';
  /** Status the volume returns to. */
  readonly previousStatus: 'available' | 'in-use';
  /** Unique per migration (job id). */
  readonly startedAt: number;
}

export const volumeMigrateJobId = (job: VolumeMigrateJob): string =>
  `volume-migrate-${job.volumeId}-${job.startedAt}`;

/**
 * Manage (adopt a file already in a back end's directory) and unmanage (forget a volume or
 * snapshot, keep its file). The API records the row (`managing` volume, `creating` snapshot, or
 * `unmanaging`) and the job in one transaction; the back end that owns the directory finishes it.
 */
export const VOLUME_MANAGE_JOB = 'volume.manage';
export const VOLUME_UNMANAGE_JOB = 'volume.unmanage';
export const SNAPSHOT_MANAGE_JOB = 'snapshot.manage';
export const SNAPSHOT_UNMANAGE_JOB = 'snapshot.unmanage';

/**
 * Admin-metadata key of a `managing` volume: the name of the file it adopts (recovery after a
 * restart reads it; the key goes when the manage ends).
 */
export const MANAGE_SOURCE_METADATA_KEY = 'manage_source';
/** Admin-metadata key set on the deleted row of an unmanaged volume: its file is not stray. */
export const UNMANAGED_METADATA_KEY = 'unmanaged';

export interface VolumeManageJob {
  readonly volumeId: string;
  /** File name in the back end's directory (`volume-<uuid>`); empty when the reference named none. */
  readonly source: string;
}

export interface SnapshotManageJob {
  readonly snapshotId: string;
  /** File name in the back end's directory (`snapshot-<uuid>`); empty when the reference named none. */
  readonly source: string;
}

export const volumeManageJobId = (volumeId: string): string => `volume-manage-${volumeId}`;
export const volumeUnmanageJobId = (volumeId: string): string => `volume-unmanage-${volumeId}`;
export const snapshotManageJobId = (snapshotId: string): string => `snapshot-manage-${snapshotId}`;
export const snapshotUnmanageJobId = (snapshotId: string): string => `snapshot-unmanage-${snapshotId}`;

/** Every job of a back end's queue, by name: the data each one carries. */
export interface BackendJobPayloads {
  'volume.create': VolumeCreateJob;
  'volume.delete': VolumeDeleteJob;
  'volume.extend': VolumeExtendJob;
  'volume.revert': VolumeRevertJob;
  'volume.migrate': VolumeMigrateJob;
  'volume.manage': VolumeManageJob;
  /** Data as `volume.delete`: the volume to forget. */
  'volume.unmanage': VolumeDeleteJob;
  'snapshot.create': SnapshotJob;
  'snapshot.delete': SnapshotJob;
  'snapshot.manage': SnapshotManageJob;
  'snapshot.unmanage': SnapshotJob;
}

export type BackendJobName = keyof BackendJobPayloads;

/** The names a back end's queue carries; its worker checks at start that each has a handler. */
export const BACKEND_JOB_NAMES = [
  VOLUME_CREATE_JOB,
  VOLUME_DELETE_JOB,
  VOLUME_EXTEND_JOB,
  VOLUME_REVERT_JOB,
  VOLUME_MIGRATE_JOB,
  VOLUME_MANAGE_JOB,
  VOLUME_UNMANAGE_JOB,
  SNAPSHOT_CREATE_JOB,
  SNAPSHOT_DELETE_JOB,
  SNAPSHOT_MANAGE_JOB,
  SNAPSHOT_UNMANAGE_JOB,
] as const satisfies readonly BackendJobName[];

/** Compile-time: `BACKEND_JOB_NAMES` lists every back-end job. */
export const BACKEND_JOB_NAMES_COMPLETE: ListsEvery<BackendJobName, typeof BACKEND_JOB_NAMES> = true;
