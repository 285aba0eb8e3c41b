import { InvalidInputError } from '@osc/errors';
import { supports, type Microversion } from '../microversions/microversion';
import type { Timestamp } from '../model/resources';
import type { QuotaDelta } from '../quotas/quota';
import type { BackupStatus } from '../state/backup-status';
import {
  expectObject,
  fieldError,
  has,
  isJsonObject,
  parseBoolean,
  parseDescription,
  parseMetadata,
  parseName,
  parseNullableUuid,
  parseString,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
} from '../validation/primitives';
import { formatTimestamp, resourceLinks } from '../views/links';
import type { ViewContext } from '../views/volume.view';

/**
 * Backups (spec 7.9, 8.3): request validation, views, the export record and quota deltas. Pure:
 * ids and clocks are arguments.
 */

/** A backup as the domain sees it (a stored row mapped by the persistence layer). */
export interface BackupValue {
  readonly id: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly volumeId: string;
  readonly snapshotId: string | null;
  readonly parentId: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly status: BackupStatus;
  readonly failReason: string | null;
  readonly size: number;
  readonly objectCount: number;
  readonly availabilityZone: string | null;
  readonly container: string | null;
  readonly host: string | null;
  readonly service: string | null;
  readonly serviceMetadata: string | null;
  readonly numDependentBackups: number;
  readonly metadata: Readonly<Record<string, string>>;
  readonly encryptionKeyId: string | null;
  readonly restoreVolumeId: string | null;
  /**
   * Ours, not Cinder's: whole percent of the backup's running (or last) create or restore, as the
   * worker stores it with each progress report; null before any job reported.
   */
  readonly progress?: number | null;
  readonly dataTimestamp: Timestamp;
  readonly createdAt: Timestamp;
  readonly updatedAt: Timestamp | null;
}

/** Summary view `{id, name, links}` (create, import, update, plain list; BS-7.9.2). */
export const backupSummaryView = (
  ctx: ViewContext,
  b: Pick<BackupValue, 'id' | 'name'>,
): Record<string, unknown> => ({
  id: b.id,
  name: b.name,
  links: resourceLinks(ctx.links, 'backups', b.id),
});

/** The request header a client sends to see {@link BACKUP_PROGRESS_FIELD} (any of `true`, `1`, `yes`). */
export const BACKUP_PROGRESS_HEADER = 'x-osc-backup-progress';
/**
 * Ours, not Cinder's: the whole percent of the backup's running (or last) create or restore, null
 * before any job reported. Shown only to clients that ask with {@link BACKUP_PROGRESS_HEADER}:
 * tempest validates backup views with `additionalProperties: false`, so upstream clients must not
 * see it unasked.
 */
export const BACKUP_PROGRESS_FIELD = 'os-backup-progress:progress';

/** Whether a request header value asks for the progress extension. */
export const wantsBackupProgress = (header: string | string[] | undefined): boolean =>
  typeof header === 'string' && ['true', '1', 'yes'].includes(header.trim().toLowerCase());

/** Detail view (show, detail list; BS-7.9.2) with the microversion-gated and admin-only fields. */
export function backupDetailView(
  ctx: ViewContext,
  b: BackupValue,
  extensions: { readonly progress?: boolean } = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: b.id,
    status: b.status,
    size: b.size,
    object_count: b.objectCount,
    availability_zone: b.availabilityZone,
    container: b.container,
    created_at: formatTimestamp(b.createdAt),
    updated_at: formatTimestamp(b.updatedAt),
    name: b.name,
    description: b.description,
    fail_reason: b.failReason,
    volume_id: b.volumeId,
    links: resourceLinks(ctx.links, 'backups', b.id),
    is_incremental: b.parentId !== null,
    has_dependent_backups: b.numDependentBackups > 0,
    snapshot_id: b.snapshotId,
    data_timestamp: formatTimestamp(b.dataTimestamp),
  };
  if (supports(ctx.mv, 'backup.metadata')) out['metadata'] = { ...b.metadata };
  if (ctx.isAdmin && supports(ctx.mv, 'backup.project-id'))
    out['os-backup-project-attr:project_id'] = b.projectId;
  if (ctx.isAdmin && supports(ctx.mv, 'backup.user-id')) out['user_id'] = b.userId;
  if (supports(ctx.mv, 'volume.encryption-key-id') && b.encryptionKeyId !== null)
    out['encryption_key_id'] = b.encryptionKeyId;
  if (extensions.progress) out[BACKUP_PROGRESS_FIELD] = b.progress ?? null;
  return out;
}

export interface CreateBackupInput {
  readonly volumeId: string;
  readonly container: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly incremental: boolean;
  readonly force: boolean;
  readonly snapshotId: string | null;
  readonly metadata: Record<string, string>;
  readonly availabilityZone: string | null;
}

const optionalBool = (o: Record<string, unknown>, key: string): boolean =>
  has(o, key) && o[key] !== null ? parseBoolean(o[key], key) : false;

/** `POST /backups` body (strict; BS-7.9.3). `metadata` from 3.43, `availability_zone` from 3.51. */
export function parseCreateBackup(body: unknown, mv: Microversion): CreateBackupInput {
  const b = requireEnvelope(body, 'backup');
  const allowed = ['volume_id', 'container', 'name', 'description', 'incremental', 'force', 'snapshot_id'];
  if (supports(mv, 'backup.metadata')) allowed.push('metadata');
  if (supports(mv, 'backup.availability-zone')) allowed.push('availability_zone');
  rejectUnknownKeys(b, allowed, 'backup');
  const volumeId = parseNullableUuid(requireKey(b, 'volume_id', 'backup'), 'volume_id');
  if (volumeId === null) throw fieldError('volume_id', null, "None is not a 'uuid'");
  return {
    volumeId,
    container: has(b, 'container')
      ? parseString(b['container'], 'container', { max: 255, nullable: true })
      : null,
    name: has(b, 'name') ? parseName(b['name'], 'name', { nullable: true }) : null,
    description: has(b, 'description') ? parseDescription(b['description']) : null,
    incremental: optionalBool(b, 'incremental'),
    force: optionalBool(b, 'force'),
    snapshotId: has(b, 'snapshot_id') ? parseNullableUuid(b['snapshot_id'], 'snapshot_id') : null,
    metadata: has(b, 'metadata') && b['metadata'] !== null ? parseMetadata(b['metadata']) : {},
    availabilityZone: has(b, 'availability_zone')
      ? parseString(b['availability_zone'], 'availability_zone', { min: 1, max: 255, nullable: true })
      : null,
  };
}

export interface UpdateBackupInput {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly metadata?: Record<string, string>;
}

/** `PUT /backups/{id}` body (strict, 3.9; `metadata` from 3.43; BS-7.9.5). */
export function parseUpdateBackup(body: unknown, mv: Microversion): UpdateBackupInput {
  const b = requireEnvelope(body, 'backup');
  const allowed = ['name', 'description'];
  if (supports(mv, 'backup.metadata')) allowed.push('metadata');
  rejectUnknownKeys(b, allowed, 'backup');
  const out: { name?: string | null; description?: string | null; metadata?: Record<string, string> } = {};
  if (has(b, 'name')) out.name = parseName(b['name'], 'name', { nullable: true });
  if (has(b, 'description')) out.description = parseDescription(b['description']);
  if (has(b, 'metadata')) out.metadata = b['metadata'] === null ? {} : parseMetadata(b['metadata']);
  return out;
}

/** `POST /backups/{id}/restore` body (strict; `{}` allowed; BS-7.9.7). */
export function parseRestoreBackup(body: unknown): { volumeId: string | null; name: string | null } {
  const r = requireEnvelope(body, 'restore');
  rejectUnknownKeys(r, ['volume_id', 'name'], 'restore');
  return {
    volumeId: has(r, 'volume_id') ? parseNullableUuid(r['volume_id'], 'volume_id') : null,
    name: has(r, 'name') ? parseName(r['name'], 'name', { nullable: true }) : null,
  };
}

/** `{"os-reset_status": {"status": "available"|"error"}}` argument (BS-7.9.10). */
export function parseBackupResetStatus(args: unknown): 'available' | 'error' {
  const a = expectObject(args, 'os-reset_status');
  rejectUnknownKeys(a, ['status'], 'os-reset_status');
  const status = requireKey(a, 'status', 'os-reset_status');
  if (status !== 'available' && status !== 'error') {
    throw fieldError(
      'status',
      status,
      "'available' or 'error' is expected: the valid statuses are available and error",
    );
  }
  return status;
}

/** Quota of one backup (BS-9.1): backups ±1 and backup_gigabytes ± size. */
export const backupQuotaDeltas = (size: number, sign: 1 | -1 = 1): QuotaDelta[] => [
  { resource: 'backups', delta: sign },
  { resource: 'backup_gigabytes', delta: sign * size },
];

/** The stored fields an export carries (BS-7.9.8), in upstream's names. */
export interface BackupRecordFields {
  readonly id: string;
  readonly user_id: string | null;
  readonly project_id: string;
  readonly volume_id: string;
  readonly host: string | null;
  readonly availability_zone: string | null;
  readonly container: string | null;
  readonly parent_id: string | null;
  readonly status: string;
  readonly fail_reason: string | null;
  readonly size: number;
  readonly display_name: string | null;
  readonly display_description: string | null;
  readonly service_metadata: string | null;
  readonly service: string | null;
  readonly object_count: number;
  readonly temp_volume_id: null;
  readonly temp_snapshot_id: null;
  readonly num_dependent_backups: number;
  readonly snapshot_id: string | null;
  readonly data_timestamp: string | null;
  readonly restore_volume_id: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  readonly encryption_key_id: string | null;
  readonly created_at: string | null;
  readonly updated_at: string | null;
  readonly deleted_at: null;
  readonly deleted: false;
  readonly driver_info: Readonly<Record<string, unknown>>;
}

/** The JSON object `backup_url` encodes (BS-7.9.8). */
export function backupRecordFields(b: BackupValue): BackupRecordFields {
  return {
    id: b.id,
    user_id: b.userId,
    project_id: b.projectId,
    volume_id: b.volumeId,
    host: b.host,
    availability_zone: b.availabilityZone,
    container: b.container,
    parent_id: b.parentId,
    status: b.status,
    fail_reason: b.failReason,
    size: b.size,
    display_name: b.name,
    display_description: b.description,
    service_metadata: b.serviceMetadata,
    service: b.service,
    object_count: b.objectCount,
    temp_volume_id: null,
    temp_snapshot_id: null,
    num_dependent_backups: b.numDependentBackups,
    snapshot_id: b.snapshotId,
    data_timestamp: formatTimestamp(b.dataTimestamp),
    restore_volume_id: b.restoreVolumeId,
    metadata: { ...b.metadata },
    encryption_key_id: b.encryptionKeyId,
    created_at: formatTimestamp(b.createdAt),
    updated_at: formatTimestamp(b.updatedAt),
    deleted_at: null,
    deleted: false,
    driver_info: {},
  };
}

/** `{"backup-record": {backup_service, backup_url}}` for an export (base64 of the record's JSON). */
export const exportRecordView = (service: string, b: BackupValue): Record<string, unknown> => ({
  'backup-record': {
    backup_service: service,
    backup_url: Buffer.from(JSON.stringify(backupRecordFields(b)), 'utf8').toString('base64'),
  },
});

/** What an import carries, already checked. */
export interface ImportedBackupRecord {
  readonly backupService: string;
  readonly id: string;
  readonly size: number;
  /** The decoded record, for the worker to copy fields from. */
  readonly record: Readonly<Record<string, unknown>>;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * `POST /backups/import_record` body (strict; BS-7.9.9): `backup_url` must be standard base64 of
 * a JSON object carrying a uuid `id` and an integer `size`.
 */
export function parseImportRecord(body: unknown): ImportedBackupRecord {
  const r = requireEnvelope(body, 'backup-record');
  rejectUnknownKeys(r, ['backup_service', 'backup_url'], 'backup-record');
  const backupService =
    parseString(requireKey(r, 'backup_service', 'backup-record'), 'backup_service', { max: 255 }) ?? '';
  const url =
    parseString(requireKey(r, 'backup_url', 'backup-record'), 'backup_url', {
      min: 1,
      max: Number.MAX_SAFE_INTEGER,
    }) ?? '';
  const compact = url.replace(/\s+/g, '');
  if (compact.length === 0 || compact.length % 4 === 1 || !BASE64.test(compact))
    throw new InvalidInputError(
      "Invalid input received: Can't parse backup record: backup_url is not base64.",
    );
  let record: unknown;
  try {
    record = JSON.parse(Buffer.from(compact, 'base64').toString('utf8'));
  } catch {
    throw new InvalidInputError(
      "Invalid input received: Can't parse backup record: backup_url does not hold a JSON object.",
    );
  }
  if (!isJsonObject(record))
    throw new InvalidInputError(
      "Invalid input received: Can't parse backup record: backup_url does not hold a JSON object.",
    );
  const id = record['id'];
  const size = record['size'];
  if (typeof id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    throw new InvalidInputError('Invalid input received: Backup record is missing a valid id.');
  }
  if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
    throw new InvalidInputError('Invalid input received: Backup record is missing a valid size.');
  return { backupService, id: id.toLowerCase(), size, record };
}

/** The record fields an importing worker requires (BS-7.9.9). */
export const IMPORT_REQUIRED_FIELDS = [
  'display_name',
  'display_description',
  'container',
  'size',
  'service_metadata',
  'object_count',
  'id',
] as const;

/** Backup list filters admitted to everyone (BS-5.8), and the sort keys (`name` from 3.37). */
export const BACKUP_FILTER_FIELDS = [
  'name',
  'status',
  'volume_id',
  'project_id',
  'availability_zone',
  'container',
  'snapshot_id',
  'id',
] as const;
export const backupSortKeys = (mv: Microversion): string[] => [
  'id',
  'status',
  'size',
  'volume_id',
  'created_at',
  'updated_at',
  'project_id',
  'container',
  'availability_zone',
  ...(supports(mv, 'backup.sort-by-name') ? ['name'] : []),
];

/** Job names of the backup worker and their payloads. The queue is the one of the back end holding the bytes. */
/**
 * Whole percent of a running backup or restore: `done` of `total` bytes, floored so 100 means
 * finished (a job with nothing to do is finished). Ours: Cinder reports no backup progress.
 */
export const progressPercent = (done: number, total: number): number =>
  total <= 0 ? 100 : Math.max(0, Math.min(100, Math.floor((done * 100) / total)));

/**
 * The 10% step (10, 20, …, 100) a job's progress reached in moving from `before` to `after`, or
 * null when it crossed none: the story logs one line per step reached (the highest, when a report
 * jumps several).
 */
export function progressStepReached(before: number, after: number): number | null {
  const step = Math.floor(after / 10) * 10;
  return step >= 10 && step > Math.floor(Math.max(before, 0) / 10) * 10 ? step : null;
}

/** The backup jobs' names, data and queue are contracts of `@osc/contracts`; re-exported for the domain's callers. */
export {
  BACKUP_CREATE_JOB,
  BACKUP_RESTORE_JOB,
  BACKUP_DELETE_JOB,
  BACKUP_IMPORT_JOB,
  backupJobQueue,
  type BackupJob,
  type BackupRestoreJob,
} from '@osc/contracts';
