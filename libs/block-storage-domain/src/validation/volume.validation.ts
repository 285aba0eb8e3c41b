import { InvalidInputError } from '@osc/errors';
import { supports, type Microversion } from '../microversions/microversion';
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
  parseSize,
  parseString,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
  type JsonObject,
} from './primitives';

export interface CreateVolumeInput {
  /** Requested GiB; null when a source decides the size. */
  readonly size: number | null;
  readonly name: string | null;
  readonly description: string | null;
  /** A type name or id, as given; resolution is the service's job (BS-7.7.5). */
  readonly volumeType: string | null;
  readonly metadata: Record<string, string>;
  readonly availabilityZone: string | null;
  readonly snapshotId: string | null;
  readonly sourceVolid: string | null;
  readonly backupId: string | null;
  readonly imageRef: string | null;
  readonly consistencygroupId: string | null;
  readonly groupId: string | null;
  readonly schedulerHints: Record<string, unknown>;
}

const BASE_VOLUME_FIELDS = [
  'size',
  'name',
  'display_name',
  'description',
  'display_description',
  'volume_type',
  'metadata',
  'availability_zone',
  'snapshot_id',
  'source_volid',
  'consistencygroup_id',
  'imageRef',
  'image_id',
  'multiattach',
] as const;

/** Picks `name` over its legacy alias `display_name` (both accepted, BS-7.7.2). */
const aliased = (obj: JsonObject, key: string, legacy: string): [string, unknown] | undefined =>
  has(obj, key) ? [key, obj[key]] : has(obj, legacy) ? [legacy, obj[legacy]] : undefined;

/**
 * `POST /volumes` body (BS-7.7.1–7.7.4). Top level holds `volume` and optionally
 * `OS-SCH-HNT:scheduler_hints`; unknown `volume` fields are ignored below 3.53 and rejected from
 * 3.53. Fields introduced by later microversions (`group_id` 3.13, `backup_id` 3.47) are ignored
 * below their gate. Source-consistency rules that need stored data are the service's.
 */
export function parseCreateVolume(body: unknown, mv: Microversion): CreateVolumeInput {
  const v = requireEnvelope(body, 'volume');
  rejectUnknownKeys(body as JsonObject, ['volume', 'OS-SCH-HNT:scheduler_hints'], null);
  const allowed: string[] = [...BASE_VOLUME_FIELDS];
  if (supports(mv, 'volume.group-id')) allowed.push('group_id');
  if (supports(mv, 'volume.create-from-backup')) allowed.push('backup_id');
  if (supports(mv, 'volume.strict-bodies')) rejectUnknownKeys(v, allowed, 'volume');
  const get = (k: string): unknown => (allowed.includes(k) && has(v, k) ? v[k] : undefined);

  const hintsRaw = (body as JsonObject)['OS-SCH-HNT:scheduler_hints'];
  const schedulerHints =
    hintsRaw === undefined || hintsRaw === null ? {} : expectObject(hintsRaw, 'OS-SCH-HNT:scheduler_hints');

  const sizeRaw = get('size');
  const size = sizeRaw === undefined || sizeRaw === null ? null : parseSize(sizeRaw, 'size');
  const nameEntry = aliased(v, 'name', 'display_name');
  const name = nameEntry === undefined ? null : parseName(nameEntry[1], nameEntry[0], { nullable: true });
  const descEntry = aliased(v, 'description', 'display_description');
  const description = descEntry === undefined ? null : parseDescription(descEntry[1], descEntry[0]);
  const typeRaw = get('volume_type');
  const volumeType =
    typeRaw === undefined || typeRaw === null
      ? null
      : parseString(typeRaw, 'volume_type', { min: 1, max: 255 });
  const metaRaw = get('metadata');
  const metadata = metaRaw === undefined || metaRaw === null ? {} : parseMetadata(metaRaw);
  const azRaw = get('availability_zone');
  const availabilityZone =
    azRaw === undefined || azRaw === null
      ? null
      : parseString(azRaw, 'availability_zone', { min: 1, max: 255 });
  const uuidOf = (k: string): string | null => {
    const raw = get(k);
    return raw === undefined ? null : parseNullableUuid(raw, k);
  };
  const snapshotId = uuidOf('snapshot_id');
  const sourceVolid = uuidOf('source_volid');
  const backupId = uuidOf('backup_id');
  const consistencygroupId = uuidOf('consistencygroup_id');
  const groupId = uuidOf('group_id');
  const imageEntry = aliased(v, 'imageRef', 'image_id');
  const imageRef =
    imageEntry === undefined || imageEntry[1] === null
      ? null
      : parseString(imageEntry[1], imageEntry[0], { min: 1, max: 255 });
  const multiRaw = get('multiattach');
  if (multiRaw !== undefined && multiRaw !== null && parseBoolean(multiRaw, 'multiattach')) {
    throw new InvalidInputError(
      'Invalid input received: multiattach is a property of the volume type; use a type with the extra spec multiattach="<is> True".',
    );
  }

  const sources = [
    ['snapshot_id', snapshotId],
    ['imageRef', imageRef],
    ['source_volid', sourceVolid],
    ['backup_id', backupId],
  ].filter(([, id]) => id !== null);
  if (sources.length > 1) {
    throw new InvalidInputError(
      'Invalid input received: only one of snapshot_id, imageRef, source_volid and backup_id may be given (they are mutually exclusive).',
    );
  }
  if (size === null && sources.length === 0) {
    throw fieldError(
      'size',
      sizeRaw ?? null,
      'size is required when no source (snapshot, volume, image or backup) is given',
    );
  }
  return {
    size,
    name,
    description,
    volumeType,
    metadata,
    availabilityZone,
    snapshotId,
    sourceVolid,
    backupId,
    imageRef,
    consistencygroupId,
    groupId,
    schedulerHints,
  };
}

export interface UpdateVolumeInput {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly metadata?: Record<string, string>;
}

/** `PUT /volumes/{id}` body (strict; from 3.53 at least one key, BS-7.7.11). */
export function parseUpdateVolume(body: unknown, mv: Microversion): UpdateVolumeInput {
  const v = requireEnvelope(body, 'volume');
  rejectUnknownKeys(v, ['name', 'description', 'display_name', 'display_description', 'metadata'], 'volume');
  const out: { name?: string | null; description?: string | null; metadata?: Record<string, string> } = {};
  const nameEntry = aliased(v, 'name', 'display_name');
  if (nameEntry) out.name = parseName(nameEntry[1], nameEntry[0], { nullable: true });
  const descEntry = aliased(v, 'description', 'display_description');
  if (descEntry) out.description = parseDescription(descEntry[1], descEntry[0]);
  if (has(v, 'metadata')) out.metadata = v['metadata'] === null ? {} : parseMetadata(v['metadata']);
  if (Object.keys(out).length === 0 && supports(mv, 'volume.strict-bodies')) {
    throw new InvalidInputError(
      "Invalid input for field/attribute volume. Value: {}. {} does not have enough properties (at least one of 'name', 'description', 'display_name', 'display_description', 'metadata')",
    );
  }
  return out;
}

/**
 * A `POST .../action` body (BS-1.4): an object with exactly one key naming the action. Returns
 * the action name and its argument; unknown names are the router's business (it knows the list).
 */
export function parseActionBody(body: unknown, known: readonly string[]): { action: string; args: unknown } {
  if (body === undefined || body === null) throw new InvalidInputError('Missing request body.');
  if (!isJsonObject(body)) throw new InvalidInputError('Malformed request body');
  const keys = Object.keys(body);
  const first = keys[0];
  if (first === undefined) throw new InvalidInputError('There is no such action: (none)');
  const action = keys.find((k) => known.includes(k));
  if (action === undefined) throw new InvalidInputError(`There is no such action: ${first.slice(0, 100)}`);
  if (keys.length > 1)
    throw new InvalidInputError(
      'Invalid input received: exactly one action is expected in the request body.',
    );
  return { action, args: body[action] };
}

/** `{"os-extend": {"new_size": n}}` argument (BS-7.7.14). */
export function parseExtendArgs(args: unknown): { newSize: number } {
  const a = expectObject(args, 'os-extend');
  rejectUnknownKeys(a, ['new_size'], 'os-extend');
  return { newSize: parseSize(requireKey(a, 'new_size', 'os-extend'), 'new_size') };
}

/** `{"os-retype": {"new_type", "migration_policy"}}` (strict, Cinder's schema). */
export function parseRetypeArgs(args: unknown): {
  newType: string;
  migrationPolicy: 'never' | 'on-demand' | null;
} {
  const a = expectObject(args, 'os-retype');
  rejectUnknownKeys(a, ['new_type', 'migration_policy'], 'os-retype');
  const newType = requireKey(a, 'new_type', 'os-retype');
  if (typeof newType !== 'string')
    throw fieldError('new_type', newType, `${JSON.stringify(newType)} is not of type 'string'`);
  const policy = a['migration_policy'] ?? null;
  if (policy !== null && policy !== 'never' && policy !== 'on-demand') {
    throw fieldError(
      'migration_policy',
      policy,
      `${JSON.stringify(policy)} is not one of ['on-demand', 'never']`,
    );
  }
  return { newType, migrationPolicy: policy };
}

export interface MigrateArgs {
  /** `host@backend[#pool]`, or null when a cluster is named (3.16). */
  readonly host: string | null;
  readonly cluster: string | null;
  readonly forceHostCopy: boolean;
  readonly lockVolume: boolean;
}

/**
 * `{"os-migrate_volume": {"host", "force_host_copy", "lock_volume"}}`; from 3.16 `cluster` may be
 * given instead of `host` (exactly one of them).
 */
export function parseMigrateArgs(args: unknown, mv: Microversion): MigrateArgs {
  const a = expectObject(args, 'os-migrate_volume');
  const withCluster = supports(mv, 'volume.migrate-cluster');
  rejectUnknownKeys(
    a,
    withCluster
      ? ['host', 'cluster', 'force_host_copy', 'lock_volume']
      : ['host', 'force_host_copy', 'lock_volume'],
    'os-migrate_volume',
  );
  const text = (key: string): string | null => {
    const value = a[key];
    if (value === undefined || (withCluster && value === null)) return null;
    if (typeof value !== 'string')
      throw fieldError(key, value, `${JSON.stringify(value)} is not of type 'string'`);
    if (value.length > 255) throw fieldError(key, value, `${JSON.stringify(value)} is too long`);
    return value;
  };
  const host = text('host');
  const cluster = withCluster ? text('cluster') : null;
  if (host === null && cluster === null) {
    if (!withCluster) requireKey(a, 'host', 'os-migrate_volume');
    throw new InvalidInputError('Invalid input received: Must specify host or cluster.');
  }
  if (host !== null && cluster !== null)
    throw new InvalidInputError('Invalid input received: Only one of host and cluster may be given.');
  const flag = (key: string): boolean => (a[key] === undefined ? false : parseBoolean(a[key], key));
  return { host, cluster, forceHostCopy: flag('force_host_copy'), lockVolume: flag('lock_volume') };
}

/** `{"revert": {"snapshot_id": string|null}}` (3.40; Cinder's schema tolerates other keys). */
export function parseRevertArgs(args: unknown): { snapshotId: string | null } {
  const a = expectObject(args, 'revert');
  const id = a['snapshot_id'] ?? null;
  if (id !== null && typeof id !== 'string')
    throw fieldError('snapshot_id', id, `${JSON.stringify(id)} is not of type 'string', 'null'`);
  return { snapshotId: id };
}

/** `{"metadata": {...}}` for POST/PUT of a whole metadata set. */
export function parseMetadataBody(body: unknown): Record<string, string> {
  const m = requireEnvelope(body, 'metadata');
  return parseMetadata(m);
}

/** `{"meta": {"k": "v"}}` for `PUT .../metadata/{key}`: exactly one pair, its key equal to the URL key. */
export function parseMetaItemBody(key: string, body: unknown): { key: string; value: string } {
  const meta = parseMetadata(requireEnvelope(body, 'meta'), 'meta');
  const keys = Object.keys(meta);
  if (keys.length !== 1)
    throw new InvalidInputError(
      'Request body contains too many items; exactly one key-value pair is expected.',
    );
  if (keys[0] !== key) throw new InvalidInputError('Request body and URI mismatch');
  return { key, value: meta[key] ?? '' };
}

export interface CreateSnapshotInput {
  /** Cinder's schema allows null; the volume lookup then answers 404 "Volume None could not be found." */
  readonly volumeId: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly force: boolean | null;
  readonly metadata: Record<string, string>;
}

/** `POST /snapshots` body (strict, BS-7.8.1). `force: false` from 3.66 → 400. */
export function parseCreateSnapshot(body: unknown, mv: Microversion): CreateSnapshotInput {
  const s = requireEnvelope(body, 'snapshot');
  rejectUnknownKeys(
    s,
    ['volume_id', 'name', 'display_name', 'description', 'display_description', 'force', 'metadata'],
    'snapshot',
  );
  const volumeId = parseNullableUuid(requireKey(s, 'volume_id', 'snapshot'), 'volume_id');
  const nameEntry = aliased(s, 'name', 'display_name');
  const name = nameEntry === undefined ? null : parseName(nameEntry[1], nameEntry[0], { nullable: true });
  const descEntry = aliased(s, 'description', 'display_description');
  const description = descEntry === undefined ? null : parseDescription(descEntry[1], descEntry[0]);
  const force = has(s, 'force') && s['force'] !== null ? parseBoolean(s['force'], 'force') : null;
  if (force === false && supports(mv, 'snapshot.in-use-without-force')) {
    throw new InvalidInputError(
      'Invalid input received: Since microversion 3.66 the force flag is not needed; force=False is not allowed.',
    );
  }
  const metadata = has(s, 'metadata') && s['metadata'] !== null ? parseMetadata(s['metadata']) : {};
  return { volumeId, name, description, force, metadata };
}

export interface UpdateSnapshotInput {
  readonly name?: string | null;
  readonly description?: string | null;
}

/** `PUT /snapshots/{id}` body (strict; at least one field). */
export function parseUpdateSnapshot(body: unknown): UpdateSnapshotInput {
  const s = requireEnvelope(body, 'snapshot');
  rejectUnknownKeys(s, ['name', 'description', 'display_name', 'display_description'], 'snapshot');
  const out: { name?: string | null; description?: string | null } = {};
  const nameEntry = aliased(s, 'name', 'display_name');
  if (nameEntry) out.name = parseName(nameEntry[1], nameEntry[0], { nullable: true });
  const descEntry = aliased(s, 'description', 'display_description');
  if (descEntry) out.description = parseDescription(descEntry[1], descEntry[0]);
  if (Object.keys(out).length === 0) {
    throw new InvalidInputError(
      "Invalid input for field/attribute snapshot. Value: {}. {} does not have enough properties (at least one of 'name', 'description', 'display_name', 'display_description')",
    );
  }
  return out;
}
