import { InvalidInputError } from '@osc/errors';
import { supports, type Microversion } from '../microversions/microversion';
import {
  fieldError,
  has,
  isUuid,
  parseBoolean,
  parseDescription,
  parseMetadata,
  parseName,
  parseString,
  parseUuid,
  rejectUnknownKeys,
  requireEnvelope,
  requireKey,
  type JsonObject,
} from './primitives';

/**
 * Bodies of manage (`POST /manageable_volumes`, `/os-volume-manage`, `/manageable_snapshots`,
 * `/os-snapshot-manage`). The reference names an object already on the back end; for the file
 * back end that is a file name (`source-name`) or the id in it (`source-id`).
 */

export interface ManageVolumeInput {
  /** `host@backend` or `host@backend#pool`; null when `cluster` was given. */
  readonly host: string | null;
  readonly cluster: string | null;
  readonly ref: unknown;
  readonly name: string | null;
  readonly description: string | null;
  readonly volumeType: string | null;
  readonly availabilityZone: string | null;
  readonly metadata: Record<string, string>;
  readonly bootable: boolean;
}

export interface ManageSnapshotInput {
  readonly volumeId: string;
  readonly ref: unknown;
  readonly name: string | null;
  readonly description: string | null;
  readonly metadata: Record<string, string>;
}

function parseRef(v: JsonObject, field: string): unknown {
  const ref = requireKey(v, 'ref', field);
  if (typeof ref !== 'string' && (typeof ref !== 'object' || ref === null || Array.isArray(ref))) {
    throw fieldError('ref', ref, `${JSON.stringify(ref)} is not of type 'object', 'string'`);
  }
  return ref;
}

const optionalText = (v: JsonObject, key: string): string | null =>
  has(v, key) && v[key] !== null ? parseString(v[key], key, { max: 255 }) : null;

/**
 * `{"volume": {"host" | "cluster" (3.16), "ref", "name", "description", "volume_type",
 * "availability_zone", "metadata", "bootable"}}`. Like Cinder, other keys inside `volume` are
 * tolerated; exactly one of host and cluster must be given.
 */
export function parseManageVolume(body: unknown, mv: Microversion): ManageVolumeInput {
  const v = requireEnvelope(body, 'volume');
  rejectUnknownKeys(body as JsonObject, ['volume'], null);
  const ref = parseRef(v, 'volume');
  const withCluster = supports(mv, 'volume.migrate-cluster');
  const host = optionalText(v, 'host');
  const cluster = withCluster ? optionalText(v, 'cluster') : null;
  if ((host === null || host === '') === (cluster === null || cluster === '')) {
    throw new InvalidInputError(
      `Invalid input received: ${withCluster ? 'One and only one of cluster and host must be set.' : 'Host field is missing.'}`,
    );
  }
  return {
    host: host === '' ? null : host,
    cluster: cluster === '' ? null : cluster,
    ref,
    name: has(v, 'name') ? parseName(v['name'], 'name', { nullable: true }) : null,
    description: has(v, 'description') ? parseDescription(v['description']) : null,
    volumeType: optionalText(v, 'volume_type') || null,
    availabilityZone: optionalText(v, 'availability_zone') || null,
    metadata: has(v, 'metadata') && v['metadata'] !== null ? parseMetadata(v['metadata']) : {},
    bootable: has(v, 'bootable') ? parseBoolean(v['bootable'], 'bootable') : false,
  };
}

/** `{"snapshot": {"volume_id", "ref", "name", "description", "metadata"}}` (strict, as Cinder's schema). */
export function parseManageSnapshot(body: unknown): ManageSnapshotInput {
  const s = requireEnvelope(body, 'snapshot');
  rejectUnknownKeys(body as JsonObject, ['snapshot'], null);
  rejectUnknownKeys(s, ['volume_id', 'ref', 'name', 'description', 'metadata'], 'snapshot');
  const ref = parseRef(s, 'snapshot');
  const volumeId = parseUuid(requireKey(s, 'volume_id', 'snapshot'), 'volume_id');
  return {
    volumeId,
    ref,
    name: has(s, 'name') ? parseName(s['name'], 'name', { nullable: true }) : null,
    description: has(s, 'description') ? parseDescription(s['description']) : null,
    metadata: has(s, 'metadata') && s['metadata'] !== null ? parseMetadata(s['metadata']) : {},
  };
}

/**
 * The back-end file a reference names: `source-name` as it is, `source-id` as `<kind>-<id>`, a
 * plain string as a name; `null` when the reference names nothing (the back end then refuses it,
 * as a driver refuses an invalid reference).
 */
export function manageRefFile(ref: unknown, kind: 'volume' | 'snapshot'): string | null {
  if (typeof ref === 'string') return ref.length > 0 && ref.length <= 255 ? ref : null;
  if (typeof ref !== 'object' || ref === null) return null;
  const r = ref as JsonObject;
  const name = r['source-name'];
  if (typeof name === 'string' && name.length > 0 && name.length <= 255) return name;
  const id = r['source-id'];
  if (typeof id === 'string' && id.length > 0 && id.length <= 200) return `${kind}-${id}`;
  return null;
}

/** The resource id in a file name of the file back end (`volume-<uuid>`, `snapshot-<uuid>`), else null. */
export function managedIdOf(file: string, kind: 'volume' | 'snapshot'): string | null {
  const prefix = `${kind}-`;
  if (!file.startsWith(prefix)) return null;
  const id = file.slice(prefix.length).toLowerCase();
  return isUuid(id) ? id : null;
}

/** Cinder's wording for an invalid reference, used as the error reason of a failed manage. */
export const invalidReferenceReason = (kind: 'volume' | 'snapshot', ref: string, reason: string): string =>
  `Manage existing ${kind} failed due to invalid backend reference ${ref}: ${reason}`;
