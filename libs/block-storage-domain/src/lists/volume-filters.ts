import { supports, type Microversion } from '../microversions/microversion';
import { parseBooleanFilter, parseDictLiteral, parseTimeFilter, type TimeCondition } from './list-query';

/**
 * A compiled list filter on a resource field. Field names are the domain's (`name` is the display
 * name, `consumes_quota` the quota flag); the repository maps them to columns.
 */
export type ListFilter =
  | { readonly kind: 'eq'; readonly field: string; readonly value: string | number | boolean | null }
  | { readonly kind: 'like'; readonly field: string; readonly value: string }
  | { readonly kind: 'metadata'; readonly pairs: Readonly<Record<string, string>> }
  | {
      readonly kind: 'time';
      readonly field: 'created_at' | 'updated_at';
      readonly conditions: readonly TimeCondition[];
    }
  /** Matches nothing: a filter on something that is not a field, or a malformed metadata value (BS-5.9). */
  | { readonly kind: 'none'; readonly reason: string };

/** Volume fields a filter may name, with their value type. */
const VOLUME_FIELDS: Readonly<Record<string, 'string' | 'int' | 'bool'>> = {
  id: 'string',
  name: 'string',
  description: 'string',
  status: 'string',
  size: 'int',
  bootable: 'bool',
  multiattach: 'bool',
  encrypted: 'bool',
  migration_status: 'string',
  availability_zone: 'string',
  group_id: 'string',
  consistencygroup_id: 'string',
  consumes_quota: 'bool',
  project_id: 'string',
  user_id: 'string',
  volume_type_id: 'string',
  volume_type: 'string',
  host: 'string',
  snapshot_id: 'string',
  source_volid: 'string',
  replication_status: 'string',
};

const FIELD_ALIASES: Readonly<Record<string, string>> = {
  display_name: 'name',
  display_description: 'description',
};

/** Snapshot fields a filter may name. */
const SNAPSHOT_FIELDS: Readonly<Record<string, 'string' | 'int' | 'bool'>> = {
  id: 'string',
  name: 'string',
  description: 'string',
  status: 'string',
  volume_id: 'string',
  size: 'int',
  project_id: 'string',
  user_id: 'string',
  consumes_quota: 'bool',
  availability_zone: 'string',
  group_snapshot_id: 'string',
};

function compile(
  filters: Readonly<Record<string, string>>,
  fields: Readonly<Record<string, 'string' | 'int' | 'bool'>>,
  mv: Microversion,
  gates: { time: boolean; metadata: boolean },
): ListFilter[] {
  const out: ListFilter[] = [];
  for (const [rawKey, value] of Object.entries(filters)) {
    if (rawKey === 'consumes_quota' && !supports(mv, 'volume.consumes-quota')) continue;
    if ((rawKey === 'created_at' || rawKey === 'updated_at') && gates.time) {
      if (!supports(mv, 'volume.time-filters')) continue;
      out.push({ kind: 'time', field: rawKey, conditions: parseTimeFilter(value) });
      continue;
    }
    if (rawKey === 'metadata' && gates.metadata) {
      const pairs = parseDictLiteral(value);
      out.push(
        pairs === null
          ? { kind: 'none', reason: 'metadata filter is not a dictionary' }
          : { kind: 'metadata', pairs },
      );
      continue;
    }
    const like = rawKey.endsWith('~') && supports(mv, 'list.like-filters');
    const key0 = like ? rawKey.slice(0, -1) : rawKey;
    const key = FIELD_ALIASES[key0] ?? key0;
    const type = fields[key];
    if (type === undefined) {
      out.push({ kind: 'none', reason: `${key0} is not a filterable field` });
      continue;
    }
    if (like) {
      out.push({ kind: 'like', field: key, value });
      continue;
    }
    if (type === 'bool') out.push({ kind: 'eq', field: key, value: parseBooleanFilter(key, value, mv) });
    else if (type === 'int') {
      const n = /^-?[0-9]{1,15}$/.test(value.trim()) ? Number(value.trim()) : null;
      out.push(
        n === null
          ? { kind: 'none', reason: `${key} is not an integer` }
          : { kind: 'eq', field: key, value: n },
      );
    } else out.push({ kind: 'eq', field: key, value });
  }
  return out;
}

/**
 * Compiles admitted volume filters (BS-5.9–5.11): exact matches, `k~` LIKE (3.34), `metadata`
 * dictionaries, strict booleans (3.2), time operators (3.60), `consumes_quota` (3.65).
 */
export const compileVolumeFilters = (
  filters: Readonly<Record<string, string>>,
  mv: Microversion,
): ListFilter[] => compile(filters, VOLUME_FIELDS, mv, { time: true, metadata: true });

/** Compiles admitted snapshot filters; `metadata` from 3.22. */
export const compileSnapshotFilters = (
  filters: Readonly<Record<string, string>>,
  mv: Microversion,
): ListFilter[] =>
  compile(filters, SNAPSHOT_FIELDS, mv, { time: false, metadata: supports(mv, 'snapshot.metadata-filter') });

/** Sort keys accepted for volume lists (BS-5.5); `display_name` is an alias of `name`. */
export const VOLUME_SORT_KEYS = [
  'id',
  'name',
  'status',
  'size',
  'availability_zone',
  'created_at',
  'updated_at',
  'bootable',
  'project_id',
  'user_id',
  'volume_type_id',
  'host',
] as const;
export const SNAPSHOT_SORT_KEYS = [
  'id',
  'name',
  'status',
  'size',
  'volume_id',
  'created_at',
  'updated_at',
  'project_id',
] as const;
export const VOLUME_TYPE_SORT_KEYS = [
  'id',
  'name',
  'description',
  'is_public',
  'created_at',
  'updated_at',
] as const;
export const SORT_ALIASES: Readonly<Record<string, string>> = {
  display_name: 'name',
  display_description: 'description',
};
