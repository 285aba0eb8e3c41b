import { InvalidInputError, NotAcceptableError } from '@osc/errors';

/**
 * A block-storage API microversion `major.minor`. Values are plain data so they cross module
 * boundaries freely; compare them with {@link compareMicroversions} / {@link isAtLeast}.
 */
export interface Microversion {
  readonly major: number;
  readonly minor: number;
}

/**
 * The one microversion table (spec BS-4.8): every v3 microversion from 3.0 to 3.71 and the
 * features it introduces. Feature names are `<area>.<thing>`; a feature is available at its
 * version and every later one. The supported range and every feature gate derive from this table.
 */
export const MICROVERSION_TABLE = [
  { version: '3.0', features: ['base'], summary: 'base API, identical to v2' },
  {
    version: '3.1',
    features: ['volume.upload-image-visibility'],
    summary: 'upload-to-image accepts visibility and protected',
  },
  {
    version: '3.2',
    features: ['list.strict-boolean-filters'],
    summary: 'boolean list filters parsed strictly',
  },
  { version: '3.3', features: ['messages.api'], summary: 'user messages API' },
  { version: '3.4', features: ['volume.glance-metadata-filter'], summary: 'glance_metadata volume filter' },
  { version: '3.5', features: ['messages.pagination'], summary: 'messages pagination' },
  {
    version: '3.6',
    features: ['consistencygroup.empty-name-update'],
    summary: 'CG update accepts empty name/description',
  },
  { version: '3.7', features: ['clusters.api'], summary: 'clusters API; cluster_name on services' },
  { version: '3.8', features: ['manageable.lists'], summary: 'manageable volumes and snapshots lists' },
  { version: '3.9', features: ['backup.update'], summary: 'PUT /backups/{id}' },
  { version: '3.10', features: ['volume.group-id-filter'], summary: 'group_id volume filter' },
  { version: '3.11', features: ['group-types.api'], summary: 'group types' },
  { version: '3.12', features: ['volume.summary'], summary: 'GET /volumes/summary' },
  {
    version: '3.13',
    features: ['groups.api', 'volume.group-id'],
    summary: 'groups; group_id on volume create and view',
  },
  { version: '3.14', features: ['group-snapshots.api'], summary: 'group snapshots, group from source' },
  {
    version: '3.15',
    features: ['volume.metadata-etag'],
    summary: 'ETag (If-Match) on volume metadata replace',
  },
  { version: '3.16', features: ['volume.migrate-cluster'], summary: 'migrate accepts cluster' },
  { version: '3.17', features: ['manage.cluster'], summary: 'manage accepts cluster' },
  {
    version: '3.18',
    features: ['backup.project-id'],
    summary: 'backup os-backup-project-attr:project_id (admin)',
  },
  {
    version: '3.19',
    features: ['group-snapshots.reset-status'],
    summary: 'reset status for group snapshots',
  },
  { version: '3.20', features: ['groups.reset-status'], summary: 'reset status for groups' },
  { version: '3.21', features: ['volume.provider-id'], summary: 'volume provider_id (admin)' },
  { version: '3.22', features: ['snapshot.metadata-filter'], summary: 'snapshot list metadata filter' },
  {
    version: '3.23',
    features: ['volume.force-delete-param'],
    summary: 'DELETE /volumes/{id}?force=true (admin)',
  },
  { version: '3.24', features: ['workers.cleanup'], summary: 'POST /workers/cleanup' },
  { version: '3.25', features: ['groups.volumes-list'], summary: 'volumes list in group views' },
  {
    version: '3.26',
    features: ['replication.failover'],
    summary: 'failover action, cluster replication fields',
  },
  { version: '3.27', features: ['attachments.api'], summary: 'attachments API' },
  { version: '3.28', features: ['pools.filters'], summary: 'pool list filters' },
  {
    version: '3.29',
    features: ['group-snapshots.pagination'],
    summary: 'group snapshot filter/sort/pagination',
  },
  { version: '3.30', features: ['snapshot.sort-by-name'], summary: 'snapshot sort by name' },
  {
    version: '3.31',
    features: ['list.reject-invalid-filters'],
    summary: 'non-admin invalid list filters give 400',
  },
  { version: '3.32', features: ['services.log-level'], summary: 'service log-level get/set' },
  { version: '3.33', features: ['resource-filters.api'], summary: 'GET /resource_filters' },
  { version: '3.34', features: ['list.like-filters'], summary: 'key~ LIKE filters' },
  { version: '3.35', features: ['pools.volume-type-filter'], summary: 'volume_type pool filter' },
  { version: '3.36', features: ['volume.summary-metadata'], summary: 'metadata in volume summary' },
  { version: '3.37', features: ['backup.sort-by-name'], summary: 'backup sort by name' },
  { version: '3.38', features: ['groups.replication'], summary: 'group replication actions' },
  { version: '3.39', features: ['limits.project-id'], summary: 'admin project_id parameter on limits' },
  { version: '3.40', features: ['volume.revert'], summary: 'volume revert action' },
  { version: '3.41', features: ['snapshot.user-id'], summary: 'snapshot user_id field' },
  { version: '3.42', features: ['volume.extend-in-use'], summary: 'extend of in-use volumes' },
  { version: '3.43', features: ['backup.metadata'], summary: 'backup metadata' },
  { version: '3.44', features: ['attachments.complete'], summary: 'attachment os-complete action' },
  {
    version: '3.45',
    features: ['list.with-count'],
    summary: 'with_count / count on volume, snapshot, backup lists',
  },
  {
    version: '3.46',
    features: ['volume.instance-snapshot-image'],
    summary: 'create from instance-snapshot image',
  },
  { version: '3.47', features: ['volume.create-from-backup'], summary: 'volume create backup_id' },
  { version: '3.48', features: ['volume.shared-targets'], summary: 'volume shared_targets, service_uuid' },
  { version: '3.49', features: ['services.backend-state'], summary: 'backend_state in service list' },
  { version: '3.50', features: ['volume.multiattach-marker'], summary: 'multiattach capability marker' },
  { version: '3.51', features: ['backup.availability-zone'], summary: 'backup create availability_zone' },
  { version: '3.52', features: ['types.extra-specs-filter'], summary: 'type list extra_specs filter' },
  { version: '3.53', features: ['volume.strict-bodies'], summary: 'strict volume create/update bodies' },
  { version: '3.54', features: ['attachments.mode'], summary: 'attachment create mode' },
  { version: '3.55', features: ['transfers.no-snapshots'], summary: '/volume-transfers with no_snapshots' },
  { version: '3.56', features: ['backup.user-id'], summary: 'backup user_id (admin)' },
  {
    version: '3.57',
    features: ['transfers.project-fields'],
    summary: 'transfer source/destination project, accepted',
  },
  {
    version: '3.58',
    features: ['groups.project-id'],
    summary: 'project_id in group and group snapshot views',
  },
  { version: '3.59', features: ['transfers.pagination'], summary: 'transfer list pagination/sort' },
  { version: '3.60', features: ['volume.time-filters'], summary: 'created_at / updated_at operator filters' },
  { version: '3.61', features: ['volume.cluster-name'], summary: 'volume cluster_name (admin)' },
  { version: '3.62', features: ['default-types.api'], summary: 'default-types API' },
  { version: '3.63', features: ['volume.volume-type-id'], summary: 'volume volume_type_id' },
  { version: '3.64', features: ['volume.encryption-key-id'], summary: 'volume and backup encryption_key_id' },
  { version: '3.65', features: ['volume.consumes-quota'], summary: 'consumes_quota field and filter' },
  {
    version: '3.66',
    features: ['snapshot.in-use-without-force'],
    summary: 'snapshots of in-use volumes without force',
  },
  {
    version: '3.67',
    features: ['url.optional-project-id'],
    summary: 'project segment optional (advertisement only)',
  },
  { version: '3.68', features: ['volume.reimage'], summary: 'os-reimage action' },
  { version: '3.69', features: ['volume.shared-targets-nullable'], summary: 'shared_targets may be null' },
  { version: '3.70', features: ['transfers.encrypted'], summary: 'transfer of encrypted volumes' },
  { version: '3.71', features: ['volume.extend-completion'], summary: 'os-extend_volume_completion action' },
] as const;

export type MicroversionFeature = (typeof MICROVERSION_TABLE)[number]['features'][number];

/** Parses `X.Y` without range checks; only for the table's own strings and tests. */
const fromString = (s: string): Microversion => {
  const [major, minor] = s.split('.').map(Number);
  return { major: major ?? 0, minor: minor ?? 0 };
};

export const MIN_MICROVERSION: Microversion = fromString(MICROVERSION_TABLE[0].version);
export const MAX_MICROVERSION: Microversion = fromString(MICROVERSION_TABLE[71].version);
/** What a request without a version header gets (and what v2 behaves as). */
export const DEFAULT_MICROVERSION: Microversion = MIN_MICROVERSION;

const GATES: ReadonlyMap<MicroversionFeature, Microversion> = new Map(
  MICROVERSION_TABLE.flatMap((row) => row.features.map((f) => [f, fromString(row.version)] as const)),
);

export const compareMicroversions = (a: Microversion, b: Microversion): number =>
  a.major !== b.major ? a.major - b.major : a.minor - b.minor;

export const formatMicroversion = (v: Microversion): string => `${v.major}.${v.minor}`;

/** True when `v` is `gate` (a `X.Y` string or a version) or later. */
export const isAtLeast = (v: Microversion, gate: Microversion | string): boolean =>
  compareMicroversions(v, typeof gate === 'string' ? fromString(gate) : gate) >= 0;

/** The first microversion having `feature`. */
export const featureGate = (feature: MicroversionFeature): Microversion => {
  const gate = GATES.get(feature);
  if (!gate) throw new Error(`unknown microversion feature ${feature}`);
  return gate;
};

/** Whether a request at microversion `v` has `feature` (BS-4.8). */
export const supports = (v: Microversion, feature: MicroversionFeature): boolean =>
  isAtLeast(v, featureGate(feature));

export const isSupportedMicroversion = (v: Microversion): boolean =>
  compareMicroversions(v, MIN_MICROVERSION) >= 0 && compareMicroversions(v, MAX_MICROVERSION) <= 0;

const VERSION_PATTERN = /^([1-9][0-9]*)\.([1-9][0-9]*|0)$/;

/**
 * Parses a version string the way BS-4.3 requires: `latest`, or `MajorNum.MinorNum` without
 * leading zeros. Malformed → InvalidInputError (400); well formed but outside 3.0–3.71 →
 * NotAcceptableError (406) naming the supported range.
 */
export function parseMicroversion(raw: string): Microversion {
  const text = raw.trim();
  if (text.toLowerCase() === 'latest') return MAX_MICROVERSION;
  const m = VERSION_PATTERN.exec(text);
  if (!m) {
    throw new InvalidInputError(
      `API Version String ${text} is of invalid format. Must be of format MajorNum.MinorNum.`,
    );
  }
  const v: Microversion = { major: Number(m[1]), minor: Number(m[2]) };
  if (!Number.isSafeInteger(v.major) || !Number.isSafeInteger(v.minor) || !isSupportedMicroversion(v)) {
    throw new NotAcceptableError(
      `Version ${text} is not supported by the API. Minimum is ${formatMicroversion(MIN_MICROVERSION)} and maximum is ${formatMicroversion(MAX_MICROVERSION)}.`,
    );
  }
  return v;
}

/** The version-related request headers, lower-cased names as HTTP servers deliver them. */
export type MicroversionHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

const joinHeader = (v: string | readonly string[] | undefined): string | undefined =>
  v === undefined ? undefined : typeof v === 'string' ? v : v.join(',');

/**
 * Negotiates the microversion of a v3 request (BS-4.3, BS-4.4).
 * - `OpenStack-API-Version` may list several services separated by commas; the first element
 *   naming `volume` is used and must be exactly `volume <version>`. A header without a `volume`
 *   element, or a malformed one, is a 400.
 * - Without that header, the pre-release alias `OpenStack-Volume-microversion: <X.Y>` is honoured.
 * - No header at all means 3.0.
 */
export function negotiateMicroversion(headers: MicroversionHeaders): Microversion {
  const primary = joinHeader(headers['openstack-api-version']);
  if (primary !== undefined) {
    const elements = primary.split(',').map((e) =>
      e
        .trim()
        .split(/\s+/)
        .filter((t) => t.length > 0),
    );
    const volume = elements.find((tokens) => tokens[0]?.toLowerCase() === 'volume');
    if (!volume) {
      throw new InvalidInputError(
        `Invalid OpenStack-API-Version header: no 'volume' service element in '${primary.slice(0, 100)}'.`,
      );
    }
    if (volume.length !== 2) {
      throw new InvalidInputError(
        `Invalid OpenStack-API-Version header: expected 'volume <MajorNum.MinorNum>' but got '${volume.join(' ').slice(0, 100)}'.`,
      );
    }
    return parseMicroversion(volume[1] ?? '');
  }
  const legacy = joinHeader(headers['openstack-volume-microversion']);
  if (legacy !== undefined) return parseMicroversion(legacy);
  return DEFAULT_MICROVERSION;
}

/** Value of the `OpenStack-API-Version` response header (BS-4.5). */
export const microversionHeaderValue = (v: Microversion): string => `volume ${formatMicroversion(v)}`;

/** Response headers every `/v3` and `/` response carries (BS-4.5). */
export const microversionResponseHeaders = (v: Microversion): Record<string, string> => ({
  'OpenStack-API-Version': microversionHeaderValue(v),
  Vary: 'OpenStack-API-Version',
});
