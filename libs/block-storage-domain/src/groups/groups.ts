import type { Timestamp } from '../model/resources';
import { supports, type Microversion } from '../microversions/microversion';
import { formatTimestamp } from '../views/links';
import {
  expectObject,
  fieldError,
  has,
  invalidInput,
  isUuid,
  parseBoolean,
  parseDescription,
  parseName,
  parseRequiredName,
  parseUuid,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
  type JsonObject,
} from '../validation/primitives';
import { InvalidInputError } from '@osc/errors';

/** Group type (BS-7.13, 3.11). */
export interface GroupTypeValue {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly isPublic: boolean;
  readonly groupSpecs: Readonly<Record<string, string | null>>;
}

export const GROUP_STATUSES = [
  'creating',
  'available',
  'updating',
  'in-use',
  'deleting',
  'error',
  'error_deleting',
] as const;
export type GroupStatus = (typeof GROUP_STATUSES)[number];
export const GROUP_SNAPSHOT_STATUSES = [
  'creating',
  'available',
  'updating',
  'deleting',
  'error',
  'error_deleting',
] as const;
export type GroupSnapshotStatus = (typeof GROUP_SNAPSHOT_STATUSES)[number];

/** A generic group; consistency groups are groups of the built-in cgsnapshot type (BS-7.11.1). */
export interface GroupValue {
  readonly id: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly availabilityZone: string;
  readonly host: string | null;
  readonly status: GroupStatus;
  /** Work was handed to back ends (member creation or deletion); the status follows it. */
  readonly pending: boolean;
  readonly groupTypeId: string;
  readonly groupSnapshotId: string | null;
  readonly sourceGroupId: string | null;
  readonly replicationStatus: string | null;
  /** Supported volume type ids, in the order given at creation. */
  readonly volumeTypeIds: readonly string[];
  readonly createdAt: Timestamp;
}

export interface GroupSnapshotValue {
  readonly id: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly groupId: string;
  readonly groupTypeId: string;
  readonly name: string | null;
  readonly description: string | null;
  readonly status: GroupSnapshotStatus;
  readonly pending: boolean;
  readonly createdAt: Timestamp;
}

// ---------------------------------------------------------------------------------------------
// Group types

export interface GroupTypeInput {
  readonly name?: string;
  readonly description?: string | null;
  readonly isPublic?: boolean;
  readonly groupSpecs?: Record<string, string>;
}

/** Group spec keys and values: 1–255 characters, values strings (BS-7.3 rules). */
export function parseGroupSpecs(value: unknown, field = 'group_specs'): Record<string, string> {
  const obj = expectObject(value, field);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k.length < 1 || k.length > 255 || !/^[A-Za-z0-9_:. /-]+$/.test(k))
      throw fieldError(
        field,
        obj,
        `'${k.slice(0, 120)}' does not match any of the regexes: '^[a-zA-Z0-9-_:. /]{1,255}$'`,
      );
    if (typeof v !== 'string') throw fieldError(field, obj, `${JSON.stringify(v)} is not of type 'string'`);
    if (v.length > 255) throw fieldError(field, obj, `'${v.slice(0, 120)}...' is too long`);
    out[k] = v;
  }
  return out;
}

export function parseCreateGroupType(
  body: unknown,
): Required<Omit<GroupTypeInput, 'groupSpecs'>> & { groupSpecs: Record<string, string> } {
  const t = requireEnvelope(body, 'group_type');
  rejectUnknownKeys(t, ['name', 'description', 'is_public', 'group_specs'], 'group_type');
  const name = parseRequiredName(requireKey(t, 'name', 'group_type'), 'name');
  const description = has(t, 'description') ? parseDescription(t['description']) : null;
  const isPublic = has(t, 'is_public') ? parseBoolean(t['is_public'], 'is_public') : true;
  const groupSpecs = has(t, 'group_specs') ? parseGroupSpecs(t['group_specs']) : {};
  return { name, description, isPublic, groupSpecs };
}

export function parseUpdateGroupType(body: unknown): GroupTypeInput {
  const t = requireEnvelope(body, 'group_type');
  rejectUnknownKeys(t, ['name', 'description', 'is_public'], 'group_type');
  const out: { name?: string; description?: string | null; isPublic?: boolean } = {};
  if (has(t, 'name')) out.name = parseRequiredName(t['name'], 'name');
  if (has(t, 'description')) out.description = parseDescription(t['description']);
  if (has(t, 'is_public')) out.isPublic = parseBoolean(t['is_public'], 'is_public');
  if (out.name === undefined && out.description === undefined && out.isPublic === undefined) {
    throw invalidInput('Specify group type name, description, is_public or a combination thereof.');
  }
  return out;
}

/** `PUT /group_types/{id}/group_specs/{key}` body: exactly the key of the URL. */
export function parseGroupSpecItem(key: string, body: unknown): string {
  const obj = expectObject(body, 'group_specs');
  const keys = Object.keys(obj);
  if (keys.length > 1) throw invalidInput('Request body contains too many items.');
  if (keys[0] !== key) throw invalidInput('Request body and URI mismatch');
  const value = parseGroupSpecs(obj)[key];
  return value ?? '';
}

/** Show/list item: specs for those who may see them (admins by default). */
export function groupTypeView(t: GroupTypeValue, showSpecs: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: t.id,
    name: t.name,
    description: t.description,
    is_public: t.isPublic,
  };
  if (showSpecs) out['group_specs'] = { ...t.groupSpecs };
  return out;
}

// ---------------------------------------------------------------------------------------------
// Groups

export interface CreateGroupInput {
  readonly groupType: string;
  readonly volumeTypes: string[];
  readonly name: string | null;
  readonly description: string | null;
  readonly availabilityZone: string | null;
}

const optionalName = (obj: JsonObject, key = 'name'): string | null =>
  has(obj, key) ? parseName(obj[key], key, { nullable: true }) : null;
const optionalDescription = (obj: JsonObject): string | null =>
  has(obj, 'description') ? parseDescription(obj['description']) : null;
const optionalZone = (obj: JsonObject): string | null =>
  has(obj, 'availability_zone') && obj['availability_zone'] !== null
    ? parseName(obj['availability_zone'], 'availability_zone', { required: true })
    : null;

/** `{"group": {group_type, volume_types: [...], name, description, availability_zone}}`. */
export function parseCreateGroup(body: unknown): CreateGroupInput {
  const g = requireEnvelope(body, 'group');
  const groupTypeRaw = g['group_type'];
  if (groupTypeRaw === undefined || groupTypeRaw === null || groupTypeRaw === '')
    throw new InvalidInputError("Invalid input received: 'group_type' must be specified.");
  if (typeof groupTypeRaw !== 'string') throw fieldError('group_type', groupTypeRaw, 'is not of type string');
  const types = g['volume_types'];
  if (types === undefined || types === null || (Array.isArray(types) && types.length === 0) || types === '') {
    throw new InvalidInputError("Invalid input received: 'volume_types' must be specified.");
  }
  const list = Array.isArray(types) ? types : typeof types === 'string' ? types.split(',') : null;
  if (list === null || list.some((t) => typeof t !== 'string' || t.trim().length === 0))
    throw fieldError('volume_types', types, 'must be a list of volume type names or ids');
  return {
    groupType: groupTypeRaw,
    volumeTypes: [...new Set((list as string[]).map((t) => t.trim()))],
    name: optionalName(g),
    description: optionalDescription(g),
    availabilityZone: optionalZone(g),
  };
}

export interface UpdateGroupInput {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly addVolumes: string[];
  readonly removeVolumes: string[];
}

const idList = (value: unknown, field: string): string[] => {
  if (value === null || value === undefined || value === '') return [];
  if (typeof value !== 'string') throw fieldError(field, value, 'is not of type string');
  return [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  ];
};

/**
 * Update of a group (`group`) or consistency group (`consistencygroup`): name, description and
 * comma-separated add/remove volume ids; at least one non-empty value; an id in both lists → 400
 * (BS-7.11.6). `emptyCounts`: from 3.6 (and always for groups) an empty name/description counts.
 */
export function parseUpdateGroup(
  body: unknown,
  envelope: 'group' | 'consistencygroup',
  emptyCounts: boolean,
): UpdateGroupInput {
  const g = requireEnvelope(body, envelope);
  const out: { name?: string | null; description?: string | null } = {};
  if (has(g, 'name')) out.name = g['name'] === null ? null : parseName(g['name'], 'name', { nullable: true });
  if (has(g, 'description')) out.description = parseDescription(g['description']);
  const addVolumes = idList(g['add_volumes'], 'add_volumes');
  const removeVolumes = idList(g['remove_volumes'], 'remove_volumes');
  const given = (v: string | null | undefined): boolean =>
    v !== undefined && (emptyCounts ? true : v !== null && v !== '');
  if (!given(out.name) && !given(out.description) && addVolumes.length === 0 && removeVolumes.length === 0) {
    throw invalidInput(
      `Name, description, add_volumes, and remove_volumes can not be all empty in the request body.`,
    );
  }
  const both = addVolumes.filter((v) => removeVolumes.includes(v));
  if (both.length > 0)
    throw invalidInput(`Volume ${both[0]} cannot be both added to and removed from the group.`);
  return { ...out, addVolumes, removeVolumes };
}

export interface GroupFromSourceInput {
  readonly name: string | null;
  readonly description: string | null;
  readonly snapshotId: string | null;
  readonly sourceGroupId: string | null;
}

/** `create-from-src` (groups) or `consistencygroup-from-src` (CG): exactly one source. */
export function parseGroupFromSource(
  body: unknown,
  envelope: 'create-from-src' | 'consistencygroup-from-src',
): GroupFromSourceInput {
  const g = requireEnvelope(body, envelope);
  const snapKey = envelope === 'create-from-src' ? 'group_snapshot_id' : 'cgsnapshot_id';
  const srcKey = envelope === 'create-from-src' ? 'source_group_id' : 'source_cgid';
  const snap = has(g, snapKey) && g[snapKey] !== null ? g[snapKey] : null;
  const src = has(g, srcKey) && g[srcKey] !== null ? g[srcKey] : null;
  const noun = envelope === 'create-from-src' ? 'group' : 'consistency group';
  if (snap === null && src === null)
    throw invalidInput(
      `Either '${snapKey}' or '${srcKey}' must be provided to create ${noun} from a source.`,
    );
  if (snap !== null && src !== null)
    throw invalidInput(`Cannot create ${noun} from both '${snapKey}' and '${srcKey}'.`);
  return {
    name: optionalName(g),
    description: optionalDescription(g),
    snapshotId: snap === null ? null : parseUuid(snap, snapKey),
    sourceGroupId: src === null ? null : parseUuid(src, srcKey),
  };
}

/** Group view (BS-7.13): fields by microversion; `volumes` (3.25) only when asked for. */
export function groupDetailView(
  mv: Microversion,
  g: GroupValue,
  volumeIds: readonly string[] | null,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: g.id,
    status: g.status,
    availability_zone: g.availabilityZone,
    created_at: formatTimestamp(g.createdAt),
    name: g.name,
    description: g.description,
    group_type: g.groupTypeId,
    volume_types: [...g.volumeTypeIds],
  };
  if (supports(mv, 'group-snapshots.api')) {
    out['group_snapshot_id'] = g.groupSnapshotId;
    out['source_group_id'] = g.sourceGroupId;
  }
  if (volumeIds !== null && supports(mv, 'groups.volumes-list')) out['volumes'] = [...volumeIds];
  if (supports(mv, 'groups.replication')) out['replication_status'] = g.replicationStatus;
  if (supports(mv, 'groups.project-id')) out['project_id'] = g.projectId;
  return out;
}

export const groupSummaryView = (g: Pick<GroupValue, 'id' | 'name'>): Record<string, unknown> => ({
  id: g.id,
  name: g.name,
});

/** Consistency-group detail (BS-7.11.3). */
export const consistencyGroupDetailView = (g: GroupValue): Record<string, unknown> => ({
  id: g.id,
  status: g.status,
  availability_zone: g.availabilityZone,
  created_at: formatTimestamp(g.createdAt),
  name: g.name,
  description: g.description,
  volume_types: [...g.volumeTypeIds],
});

/** Group-snapshot detail (BS-7.13). */
export function groupSnapshotDetailView(mv: Microversion, s: GroupSnapshotValue): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: s.id,
    group_id: s.groupId,
    status: s.status,
    created_at: formatTimestamp(s.createdAt),
    name: s.name,
    description: s.description,
    group_type_id: s.groupTypeId,
  };
  if (supports(mv, 'groups.project-id')) out['project_id'] = s.projectId;
  return out;
}

/** Cgsnapshot detail (BS-7.11.7). */
export const cgsnapshotDetailView = (s: GroupSnapshotValue): Record<string, unknown> => ({
  id: s.id,
  consistencygroup_id: s.groupId,
  status: s.status,
  created_at: formatTimestamp(s.createdAt),
  name: s.name,
  description: s.description,
});

/** `{"group_snapshot": {group_id, name, description}}` or `{"cgsnapshot": {consistencygroup_id, ...}}`. */
export function parseCreateGroupSnapshot(
  body: unknown,
  envelope: 'group_snapshot' | 'cgsnapshot',
): { groupId: string; name: string | null; description: string | null } {
  const s = requireEnvelope(body, envelope);
  const key = envelope === 'group_snapshot' ? 'group_id' : 'consistencygroup_id';
  const raw = s[key];
  if (raw === undefined || raw === null || raw === '') throw invalidInput(`'${key}' must be specified`);
  if (!isUuid(raw)) throw fieldError(key, raw, "is not a 'uuid'");
  return { groupId: raw.toLowerCase(), name: optionalName(s), description: optionalDescription(s) };
}

/** `{"reset_status": {"status": ...}}` args against the allowed statuses. */
export function parseResetStatus<T extends string>(args: unknown, allowed: readonly T[]): T {
  const a = expectObject(args, 'reset_status');
  const status = a['status'];
  if (typeof status !== 'string' || !allowed.includes(status as T)) {
    throw invalidInput(
      `Status must be one of ${allowed.join(', ')}, but it is ${typeof status === 'string' ? status.slice(0, 100) : String(status)}.`,
    );
  }
  return status as T;
}

/** What the members' work settles a pending group or group snapshot into (`deleted`: it is gone). */
export type GroupSettledOutcome = 'available' | 'error' | 'error_deleting' | 'deleted';

/**
 * The outcome of a group snapshot whose member snapshots are being created or deleted, from the
 * members' statuses (null: still in progress). Deletion ends when no member is left.
 */
export function settledGroupSnapshotStatus(
  status: GroupSnapshotStatus,
  members: readonly string[],
): GroupSettledOutcome | null {
  if (status === 'creating') {
    if (members.some((m) => m === 'error')) return 'error';
    return members.every((m) => m === 'available') ? 'available' : null;
  }
  if (status === 'deleting') {
    if (members.length === 0) return 'deleted';
    return members.some((m) => m === 'error_deleting') &&
      members.every((m) => m === 'error_deleting' || m === 'error' || m === 'available')
      ? 'error_deleting'
      : null;
  }
  return null;
}

/** The outcome of a group whose member volumes are being created (from a source) or deleted. */
export function settledGroupStatus(
  status: GroupStatus,
  members: readonly string[],
): GroupSettledOutcome | null {
  if (status === 'creating') {
    if (members.some((m) => m === 'error')) return 'error';
    return members.every((m) => m === 'available') ? 'available' : null;
  }
  if (status === 'deleting') {
    if (members.length === 0) return 'deleted';
    return members.some((m) => m === 'error_deleting') && !members.some((m) => m === 'deleting')
      ? 'error_deleting'
      : null;
  }
  return null;
}
