import { InvalidInputError, OverLimitError } from '@osc/errors';
import { expectObject, fieldError, parseInteger, requireEnvelope } from '../validation/primitives';

/** Project-wide quota resources and their defaults (BS-9.1); -1 means unlimited. */
export const DEFAULT_QUOTAS = {
  volumes: 10,
  snapshots: 10,
  gigabytes: 1000,
  backups: 10,
  backup_gigabytes: 1000,
  groups: 10,
  per_volume_gigabytes: -1,
} as const;
export type StandardQuotaResource = keyof typeof DEFAULT_QUOTAS;
export const STANDARD_QUOTA_RESOURCES = Object.keys(DEFAULT_QUOTAS) as StandardQuotaResource[];

/** Per volume type keys (`volumes_<type>`, ...), default -1. */
export const perTypeQuotaKeys = (typeName: string): string[] => [
  `volumes_${typeName}`,
  `snapshots_${typeName}`,
  `gigabytes_${typeName}`,
];

/** Limit per quota key; missing keys fall back to the defaults. */
export type QuotaLimits = Readonly<Record<string, number>>;

export interface QuotaUsage {
  readonly inUse: number;
  readonly reserved: number;
}
export type QuotaUsages = Readonly<Record<string, QuotaUsage>>;

/** A requested change of usage; positive deltas are checked, negative ones always pass. */
export interface QuotaDelta {
  readonly resource: string;
  readonly delta: number;
}

export const limitOf = (limits: QuotaLimits, key: string): number =>
  limits[key] ?? (key in DEFAULT_QUOTAS ? DEFAULT_QUOTAS[key as StandardQuotaResource] : -1);

const consumedOf = (usages: QuotaUsages, key: string): number =>
  (usages[key]?.inUse ?? 0) + (usages[key]?.reserved ?? 0);

/** The error kind of an over-quota resource key (BS-9.3). */
function overQuotaError(key: string, limit: number, delta: number, consumed: number): OverLimitError {
  const base = key.split('_')[0];
  if (key === 'gigabytes' || key.startsWith('gigabytes_')) {
    return new OverLimitError(
      `VolumeSizeExceedsAvailableQuota: Requested volume or snapshot exceeds allowed ${key} quota. Requested ${delta}G, quota is ${limit}G and ${consumed}G has been consumed.`,
    );
  }
  if (key === 'backup_gigabytes') {
    return new OverLimitError(
      `VolumeBackupSizeExceedsAvailableQuota: Requested backup exceeds allowed backup_gigabytes quota. Requested ${delta}G, quota is ${limit}G and ${consumed}G has been consumed.`,
    );
  }
  const kind =
    base === 'volumes'
      ? 'VolumeLimitExceeded'
      : base === 'snapshots'
        ? 'SnapshotLimitExceeded'
        : base === 'backups'
          ? 'BackupLimitExceeded'
          : 'GroupLimitExceeded';
  const noun =
    base === 'volumes'
      ? 'volumes'
      : base === 'snapshots'
        ? 'snapshots'
        : base === 'backups'
          ? 'backups'
          : 'groups';
  return new OverLimitError(
    `${kind}: Maximum number of ${noun} allowed (${limit}) exceeded for quota '${key}'.`,
  );
}

/** Sizes are checked before counts so a too-large request names the size (upstream order). */
const checkOrder = (key: string): number => (key.includes('gigabytes') ? 0 : 1);

/**
 * Checks that every positive delta fits: `consumed (in use + reserved) + delta ≤ limit` unless the
 * limit is -1. Throws the first OverLimitError in upstream order (sizes, then counts); no
 * `Retry-After` (BS-9.3).
 */
export function checkQuota(deltas: readonly QuotaDelta[], limits: QuotaLimits, usages: QuotaUsages): void {
  const sorted = [...deltas].sort((a, b) => checkOrder(a.resource) - checkOrder(b.resource));
  for (const { resource, delta } of sorted) {
    if (delta <= 0) continue;
    const limit = limitOf(limits, resource);
    if (limit < 0) continue;
    const consumed = consumedOf(usages, resource);
    if (consumed + delta > limit) throw overQuotaError(resource, limit, delta, consumed);
  }
}

/** `VolumeSizeExceedsLimit` (BS-9.3) when a single volume is larger than `per_volume_gigabytes`. */
export function checkPerVolumeSize(size: number, limits: QuotaLimits): void {
  const limit = limitOf(limits, 'per_volume_gigabytes');
  if (limit >= 0 && size > limit) {
    throw new OverLimitError(
      `VolumeSizeExceedsLimit: Requested volume size ${size}G is larger than maximum allowed limit ${limit}G.`,
    );
  }
}

/** The quota deltas of creating (or deleting, negated) one volume of `size` GiB and type `typeName`. */
export const volumeQuotaDeltas = (size: number, typeName: string | null, sign: 1 | -1 = 1): QuotaDelta[] => [
  { resource: 'volumes', delta: sign },
  { resource: 'gigabytes', delta: sign * size },
  ...(typeName === null
    ? []
    : [
        { resource: `volumes_${typeName}`, delta: sign },
        { resource: `gigabytes_${typeName}`, delta: sign * size },
      ]),
];

/** The deltas of one snapshot of `size` GiB; snapshots also consume gigabytes (BS-9.2). */
export const snapshotQuotaDeltas = (
  size: number,
  typeName: string | null,
  sign: 1 | -1 = 1,
): QuotaDelta[] => [
  { resource: 'snapshots', delta: sign },
  { resource: 'gigabytes', delta: sign * size },
  ...(typeName === null
    ? []
    : [
        { resource: `snapshots_${typeName}`, delta: sign },
        { resource: `gigabytes_${typeName}`, delta: sign * size },
      ]),
];

/** `GET /limits` absolute block (BS-7.12.3): "used" is committed usage. */
export function absoluteLimits(limits: QuotaLimits, usages: QuotaUsages): Record<string, number> {
  const used = (k: string): number => usages[k]?.inUse ?? 0;
  return {
    maxTotalVolumes: limitOf(limits, 'volumes'),
    maxTotalSnapshots: limitOf(limits, 'snapshots'),
    maxTotalVolumeGigabytes: limitOf(limits, 'gigabytes'),
    maxTotalBackups: limitOf(limits, 'backups'),
    maxTotalBackupGigabytes: limitOf(limits, 'backup_gigabytes'),
    totalVolumesUsed: used('volumes'),
    totalGigabytesUsed: used('gigabytes'),
    totalSnapshotsUsed: used('snapshots'),
    totalBackupsUsed: used('backups'),
    totalBackupGigabytesUsed: used('backup_gigabytes'),
  };
}

/** `{"quota_set": {...}}` (BS-9.4); with usage every key maps to `{limit, in_use, reserved}`. */
export function quotaSetView(
  projectId: string,
  keys: readonly string[],
  limits: QuotaLimits,
  usages: QuotaUsages | null,
): Record<string, unknown> {
  const set: Record<string, unknown> = { id: projectId };
  for (const k of keys) {
    set[k] =
      usages === null
        ? limitOf(limits, k)
        : { limit: limitOf(limits, k), in_use: usages[k]?.inUse ?? 0, reserved: usages[k]?.reserved ?? 0 };
  }
  return { quota_set: set };
}

/** Keys of a quota-set body that name the project, not a limit: ignored on update. */
export const NON_QUOTA_KEYS = ['tenant_id', 'id'] as const;

/**
 * `PUT /os-quota-sets/{p}` body (BS-9.4): every key known, integers ≥ -1, and no limit below the
 * current usage. Returns the new limits.
 */
export function parseQuotaUpdate(
  body: unknown,
  knownKeys: readonly string[],
  usages: QuotaUsages,
): Record<string, number> {
  const set = { ...expectObject(requireEnvelope(body, 'quota_set'), 'quota_set') };
  // Cinder skips these (its NON_QUOTA_KEYS): python-cinderclient always sends `tenant_id`.
  for (const k of NON_QUOTA_KEYS) delete set[k];
  const bad = Object.keys(set).filter((k) => !knownKeys.includes(k));
  if (bad.length > 0)
    throw new InvalidInputError(`Bad key(s) in quota set: ${bad.map((k) => k.slice(0, 60)).join(', ')}`);
  const out: Record<string, number> = {};
  for (const [k, raw] of Object.entries(set)) {
    const v = parseInteger(raw, k, -1, 2147483647);
    const used = consumedOf(usages, k);
    if (v >= 0 && v < used) {
      throw fieldError(
        k,
        raw,
        `Quota limit must be -1 or at least the current usage: ${k} has ${used} in use, limit ${v}.`,
      );
    }
    out[k] = v;
  }
  return out;
}

/**
 * Runs of a back-end extend job before it is given up: the last failing run ends the volume in
 * `error_extending` and releases the reserved quota (volume-api enqueues with this many attempts).
 */
export const VOLUME_EXTEND_ATTEMPTS = 3;
