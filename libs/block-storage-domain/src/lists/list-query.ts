import { InvalidInputError } from '@osc/errors';
import type { SortDirection, SortKey } from '@osc/list-query';
import { supports, type Microversion } from '../microversions/microversion';

/**
 * Block-storage list parameters (spec section 5): paging, sorting and filter admission. Pure: the
 * app turns the result into SQL (filters, sort and limit are pushed into the database, BS-5.12).
 */

export type QueryValue = string | readonly string[] | undefined;
export type RawQuery = Readonly<Record<string, QueryValue>>;

/** The parsed sort spec is the shared list-query core's; this file owns Cinder's wire spelling of it. */
export type { SortDirection, SortKey } from '@osc/list-query';

export interface Paging {
  /** Page size after capping at `maxLimit`. */
  readonly limit: number;
  readonly offset: number;
  readonly marker: string | null;
  readonly sort: readonly SortKey[];
  /** Whether `limit` was given (BS-5.3 next links use `maxLimit` otherwise). */
  readonly limitGiven: boolean;
}

/** The single value of a query parameter (the last one wins when repeated). */
export const queryValue = (v: QueryValue): string | undefined =>
  typeof v === 'string' ? v : v === undefined ? undefined : v[v.length - 1];

function parseLimit(raw: string | undefined, maxLimit: number): { limit: number; given: boolean } {
  if (raw === undefined) return { limit: maxLimit, given: false };
  if (!/^-?[0-9]+$/.test(raw.trim())) throw new InvalidInputError('limit param must be an integer');
  const n = Number(raw.trim());
  if (n < 0) throw new InvalidInputError('limit param must be positive');
  return { limit: Math.min(n, maxLimit), given: true };
}

function parseOffset(raw: string | undefined): number {
  if (raw === undefined) return 0;
  if (!/^-?[0-9]+$/.test(raw.trim())) throw new InvalidInputError('offset param must be an integer');
  const n = Number(raw.trim());
  if (n < 0) throw new InvalidInputError('offset param must be positive');
  if (!Number.isSafeInteger(n)) throw new InvalidInputError('offset param is too large');
  return n;
}

function parseDirection(raw: string): SortDirection {
  const d = raw.trim().toLowerCase();
  if (d !== 'asc' && d !== 'desc')
    throw new InvalidInputError(
      `Invalid input received: Unknown sort direction '${raw.slice(0, 50)}', must be 'desc' or 'asc'`,
    );
  return d;
}

/**
 * Sorting (BS-5.5): `sort=k1[:dir][,k2[:dir]]` or the deprecated `sort_key`/`sort_dir` (both styles
 * → 400). Default `created_at:desc`; `created_at` and `id` are appended as tie-breakers with the
 * first key's direction. `aliases` maps wire keys to canonical ones (e.g. `display_name` → `name`).
 */
export function parseSort(
  query: RawQuery,
  allowedKeys: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): SortKey[] {
  const sort = queryValue(query['sort']);
  const sortKey = queryValue(query['sort_key']);
  const sortDir = queryValue(query['sort_dir']);
  if (sort !== undefined && (sortKey !== undefined || sortDir !== undefined)) {
    throw new InvalidInputError(
      "Invalid input received: The 'sort_key' and 'sort_dir' parameters are deprecated and cannot be used with the 'sort' parameter.",
    );
  }
  const canonical = (k: string): string => {
    const key = aliases[k] ?? k;
    if (!allowedKeys.includes(key))
      throw new InvalidInputError(`Invalid input received: Invalid sort key ${k.slice(0, 50)}`);
    return key;
  };
  const keys: SortKey[] = [];
  if (sort !== undefined) {
    for (const part of sort.split(',')) {
      const trimmed = part.trim();
      if (trimmed === '') throw new InvalidInputError('Invalid input received: empty sort key');
      const [k, d, ...rest] = trimmed.split(':');
      if (rest.length > 0)
        throw new InvalidInputError(`Invalid input received: Invalid sort key ${trimmed.slice(0, 50)}`);
      keys.push({ key: canonical((k ?? '').trim()), dir: d === undefined ? 'desc' : parseDirection(d) });
    }
  } else if (sortKey !== undefined || sortDir !== undefined) {
    const ks = (sortKey ?? 'created_at').split(',').map((k) => k.trim());
    const ds = (sortDir ?? 'desc').split(',').map((d) => d.trim());
    ks.forEach((k, i) =>
      keys.push({ key: canonical(k), dir: parseDirection(ds[i] ?? ds[ds.length - 1] ?? 'desc') }),
    );
  }
  const firstDir = keys[0]?.dir ?? 'desc';
  for (const tie of ['created_at', 'id']) {
    if (allowedKeys.includes(tie) && !keys.some((k) => k.key === tie)) keys.push({ key: tie, dir: firstDir });
  }
  return keys;
}

/** `limit`, `offset`, `marker` and sorting (BS-5.1, BS-5.2, BS-5.5). */
export function parsePaging(
  query: RawQuery,
  options: { maxLimit: number; sortKeys: readonly string[]; sortAliases?: Readonly<Record<string, string>> },
): Paging {
  const { limit, given } = parseLimit(queryValue(query['limit']), options.maxLimit);
  const marker = queryValue(query['marker']);
  return {
    limit,
    limitGiven: given,
    offset: parseOffset(queryValue(query['offset'])),
    marker: marker === undefined || marker === '' ? null : marker,
    sort: parseSort(query, options.sortKeys, options.sortAliases),
  };
}

const STRICT_TRUE = ['true', '1', 't', 'yes', 'y', 'on'];
const STRICT_FALSE = ['false', '0', 'f', 'no', 'n', 'off'];

/**
 * A boolean list filter (BS-5.9): from 3.2 only true/false/1/0/t/f/yes/no/on/off (any case),
 * else 400; before 3.2 everything except `False/false/FALSE` is true.
 */
export function parseBooleanFilter(key: string, raw: string, mv: Microversion): boolean {
  if (!supports(mv, 'list.strict-boolean-filters')) return !['False', 'false', 'FALSE'].includes(raw);
  const v = raw.trim().toLowerCase();
  if (STRICT_TRUE.includes(v)) return true;
  if (STRICT_FALSE.includes(v)) return false;
  throw new InvalidInputError(`Invalid input received: '${key.slice(0, 50)} = ${raw.slice(0, 50)}'`);
}

/** Whether `all_tenants` is "true-ish" (anything but an explicit false spelling). */
export const isTrueish = (raw: string | undefined): boolean =>
  raw !== undefined && !STRICT_FALSE.includes(raw.trim().toLowerCase());

export const TIME_OPERATORS = ['gt', 'gte', 'eq', 'neq', 'lt', 'lte'] as const;
export type TimeOperator = (typeof TIME_OPERATORS)[number];
export interface TimeCondition {
  readonly op: TimeOperator;
  readonly at: Date;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

/** Parses an ISO 8601 time; a value without zone is UTC. */
export function parseIsoTime(raw: string): Date | null {
  const text = raw.trim();
  if (!ISO_8601.test(text)) return null;
  const hasZone = /(?:Z|[+-]\d{2}:?\d{2})$/.test(text) && text.length > 10;
  let normalised = text.replace(' ', 'T');
  if (/[+-]\d{4}$/.test(normalised)) normalised = `${normalised.slice(0, -2)}:${normalised.slice(-2)}`;
  const d = new Date(
    hasZone ? normalised : normalised.length === 10 ? `${normalised}T00:00:00Z` : `${normalised}Z`,
  );
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * `created_at` / `updated_at` filter values (3.60, BS-5.11): a comma list of `<op>:<time>`;
 * conditions are combined with OR, as upstream does.
 */
export function parseTimeFilter(raw: string): TimeCondition[] {
  return raw.split(',').map((part) => {
    const idx = part.indexOf(':');
    const op = (idx < 0 ? part : part.slice(0, idx)).trim();
    const time = idx < 0 ? '' : part.slice(idx + 1);
    if (!(TIME_OPERATORS as readonly string[]).includes(op))
      throw new InvalidInputError(`Invalid input received: Invalid ${op.slice(0, 30)} operator`);
    const at = parseIsoTime(time);
    if (at === null)
      throw new InvalidInputError(`Invalid input received: Invalid ${time.slice(0, 60)} value`);
    return { op: op as TimeOperator, at };
  });
}

/**
 * Parses a dict literal as upstream's literal evaluation would (`{"k": "v"}` or `{'k': 'v'}`);
 * returns null when the text is not a flat dict of scalars.
 */
export function parseDictLiteral(raw: string): Record<string, string> | null {
  const attempts = [
    raw,
    raw
      .replace(/'/g, '"')
      .replace(/\bTrue\b/g, 'true')
      .replace(/\bFalse\b/g, 'false')
      .replace(/\bNone\b/g, 'null'),
  ];
  for (const text of attempts) {
    try {
      const v: unknown = JSON.parse(text);
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
      const out: Record<string, string> = {};
      for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
        if (typeof val === 'object' && val !== null) return null;
        out[k] = typeof val === 'boolean' ? (val ? 'True' : 'False') : String(val);
      }
      return out;
    } catch {
      // try the next spelling
    }
  }
  return null;
}

/** Default filter allow-lists for non-admin callers (BS-5.8). */
export const RESOURCE_FILTERS: Readonly<Record<string, readonly string[]>> = {
  volume: [
    'name',
    'status',
    'metadata',
    'bootable',
    'migration_status',
    'availability_zone',
    'group_id',
    'size',
    'created_at',
    'updated_at',
    'consumes_quota',
  ],
  snapshot: ['name', 'status', 'volume_id', 'metadata', 'availability_zone', 'consumes_quota'],
  backup: ['name', 'status', 'volume_id'],
  group: ['name'],
  group_snapshot: ['name', 'status', 'group_id'],
  attachment: ['volume_id', 'status', 'instance_id', 'attach_status'],
  message: ['resource_uuid', 'resource_type', 'event_id', 'request_id', 'message_level'],
  pool: ['name', 'volume_type'],
  volume_type: ['is_public', 'extra_specs'],
};

/** Query keys that are paging/sorting/meta parameters, never filters. */
export const NON_FILTER_KEYS = [
  'limit',
  'offset',
  'marker',
  'sort',
  'sort_key',
  'sort_dir',
  'with_count',
  'all_tenants',
] as const;

/**
 * Filter admission (BS-5.7): returns the filter keys the caller may use. Non-admin keys outside
 * the allow-list are dropped below 3.31 and rejected with 400 from 3.31. `k~` LIKE keys (3.34) are
 * allowed to a non-admin only when listed; below 3.34 they are ordinary (unknown) keys.
 * Filter keys must be ASCII.
 */
export function admitFilters(
  resource: string,
  query: RawQuery,
  options: { mv: Microversion; isAdmin: boolean; allowList?: readonly string[]; ignore?: readonly string[] },
): Record<string, string> {
  const allow = options.allowList ?? RESOURCE_FILTERS[resource] ?? [];
  const out: Record<string, string> = {};
  const invalid: string[] = [];
  for (const [key, rawValue] of Object.entries(query)) {
    const value = queryValue(rawValue);
    if (
      value === undefined ||
      (NON_FILTER_KEYS as readonly string[]).includes(key) ||
      options.ignore?.includes(key)
    )
      continue;
    // eslint-disable-next-line no-control-regex
    if (!/^[\x00-\x7f]*$/.test(key))
      throw new InvalidInputError('Invalid input received: filter keys must be ASCII');
    if (!options.isAdmin) {
      const permitted =
        key.endsWith('~') && supports(options.mv, 'list.like-filters')
          ? allow.includes(key)
          : allow.includes(key) || allow.includes(`${key}~`);
      if (!permitted) {
        invalid.push(key);
        continue;
      }
    }
    out[key] = value;
  }
  if (invalid.length > 0 && supports(options.mv, 'list.reject-invalid-filters')) {
    throw new InvalidInputError(
      `Invalid input received: Invalid filters ${invalid.map((k) => k.slice(0, 50)).join(',')} are found in query options.`,
    );
  }
  return out;
}
