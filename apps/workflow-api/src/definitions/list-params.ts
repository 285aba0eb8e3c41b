import { InvalidInputError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { SortDirection, SortKey } from '@osc/list-query';
import {
  type DefinitionTable,
  type FieldFilter,
  type FilterOp,
  type JsonPage,
  FILTER_OPS,
  type Visibility,
} from '@osc/workflow-persistence';
import type { WorkflowPolicy } from '../policy/workflow-policy';
import { type QueryBag, invalidField, parseBool, queryValue } from './query-values';

/** Lists default to and are capped at this many items per page (our decision, see workflow-api.md). */
export const MAX_PAGE_SIZE = 1000;

const COMMON_PARAMS = ['marker', 'limit', 'sort_keys', 'sort_dirs', 'fields'] as const;

/** What a collection's list accepts besides the common parameters. */
export interface ListSpec {
  readonly collection: 'workflows' | 'workbooks' | 'actions';
  readonly table: DefinitionTable;
  /** Filter parameters in the order Mistral renders them in `next` links. */
  readonly filters: readonly string[];
  readonly defaultSortKey: string;
  /** `all_projects` and `project_id` are accepted (admin only). */
  readonly adminFilters: boolean;
  /** Filters applied when the parameter is absent (actions list the default namespace). */
  readonly implicitFilters?: Readonly<Record<string, string>>;
  /** Policy rule prefix, e.g. `workflows` (`workflows:list:all_projects`). */
  readonly policy: string;
}

/** A parsed list request: the query for the store plus what the `next` link repeats. */
export interface ListRequest {
  readonly visibility: Visibility;
  readonly filters: readonly FieldFilter[];
  readonly sort: readonly SortKey[];
  readonly limit: number;
  readonly marker?: string;
  readonly fields: readonly string[];
  /** Filters as `field=op:value` pairs for the `next` link. */
  readonly linkFilters: readonly [string, string][];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID.test(s);

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/**
 * Whether `s` is a UUID in PostgreSQL's output form (lower case, hyphenated): the only strings that
 * ever equalled `"id"::text`. Lookups by id test this and then compare `"id" = $1::uuid`, which uses
 * the primary key (a cast on the column cannot); other strings answer 404 as they always did.
 */
export const isCanonicalUuid = (s: string): boolean => CANONICAL_UUID.test(s);

/**
 * Comma list as Mistral's list types read it: trimmed, lower-cased, empty items dropped; `unique`
 * lists (sort_keys, fields) keep each value once.
 */
const commaList = (raw: string, unique = true): string[] => {
  const out: string[] = [];
  for (const item of raw.split(',')) {
    const v = item.trim().toLowerCase();
    if (v && !(unique && out.includes(v))) out.push(v);
  }
  return out;
};

/** `limit`: at most {@link MAX_PAGE_SIZE}, which is also the default. */
const parseLimit = (raw: string | undefined): number => {
  if (raw === undefined) return MAX_PAGE_SIZE;
  const t = raw.trim();
  if (!/^[+-]?\d+$/.test(t)) throw invalidField('limit', raw, 'unable to convert to int');
  const n = Number(t);
  if (n <= 0) throw new InvalidInputError('Limit must be positive.');
  return Math.min(n, MAX_PAGE_SIZE);
};

const SCOPES = ['private', 'public'];

/** `2016-12-01 15:01:00`, `2016-12-01T15:01:00Z`, `2016-12-01`: UTC unless an offset is given. */
export const parseTimestamp = (field: string, raw: string): string => {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
      raw.trim(),
    );
  const bad = () => invalidField(field, raw, 'Invalid date/time format');
  if (!m) throw bad();
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const z =
    zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : ''}${z}`;
  const date = new Date(iso);
  if (
    Number.isNaN(date.getTime()) ||
    Number(mo) < 1 ||
    Number(mo) > 12 ||
    Number(d) < 1 ||
    Number(d) > 31 ||
    Number(h) > 23 ||
    Number(mi) > 59 ||
    Number(s) > 59
  ) {
    throw bad();
  }
  // Reject dates that roll over (2021-02-31).
  if (z === 'Z' && date.getUTCDate() !== Number(d)) throw bad();
  return date.toISOString();
};

/** `op:value` of a filter parameter; a value without a known operator prefix is `eq`. */
export const splitFilterOp = (raw: string): { op: FilterOp; value: string } => {
  for (const op of FILTER_OPS) {
    if (raw.startsWith(`${op}:`)) return { op, value: raw.slice(op.length + 1) };
  }
  return { op: 'eq', value: raw };
};

const parseFilter = (spec: ListSpec, field: string, raw: string): { filter: FieldFilter; link: string } => {
  const column = spec.table.columns[field];
  if (!column) throw new InvalidInputError(`Unknown argument: "${field}"`);
  const { op, value } = splitFilterOp(raw);
  const link = `${op}:${value}`;
  if (column.kind === 'tags') {
    if (op !== 'eq')
      throw new InvalidInputError(
        `Filter operator '${op}' is not supported for field tags; use tags=<tag>[,<tag>...]`,
      );
    const tags = value
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t.length > 0);
    return { filter: { field, op: 'eq', value: tags }, link };
  }
  const many = op === 'in' || op === 'nin';
  const items = many ? value.split(',') : [value];
  const convert = (v: string): string | boolean => {
    if (column.kind === 'bool') return parseBool(field, v);
    if (column.kind === 'timestamp' && op !== 'has') return parseTimestamp(field, v);
    if (column.kind === 'uuid' && op !== 'has' && !isUuid(v)) throw invalidField(field, v, 'Invalid UUID');
    if (field === 'scope' && op !== 'has' && !SCOPES.includes(v)) {
      throw invalidField(field, v, `Value should be one of: ${SCOPES.join(', ')}`);
    }
    return v;
  };
  if (column.kind === 'bool' && !['eq', 'neq', 'in', 'nin'].includes(op)) {
    throw new InvalidInputError(`Filter operator '${op}' is not supported for field ${field}`);
  }
  const converted = items.map(convert);
  const filterValue = many ? converted.map(String) : (converted[0] as string | boolean);
  return { filter: { field, op, value: filterValue }, link };
};

/** The paging half of a list request, common to every collection. */
export interface PagingRequest {
  readonly limit: number;
  /** Trimmed, as given (a UUID). */
  readonly marker?: string;
  /** Sort keys (wire names) and directions, ending with `id`. */
  readonly sort: SortKey[];
  /** Requested fields, `id` first; empty: all. */
  readonly fields: string[];
}

/** What a collection's paging accepts. */
export interface PagingSpec {
  readonly defaultSortKey: string;
  /** Wire fields in response order (what `fields` may name). */
  readonly fields: readonly string[];
  /** Whether a field may be a sort key. */
  readonly sortable: (key: string) => boolean;
}

/**
 * Parses `limit`, `marker`, `sort_keys`, `sort_dirs` and `fields` with Mistral's checks and messages.
 * `sort_keys` and `fields` keep each value once; `sort_dirs` is a plain list, one direction per key
 * in order (a repeated direction counts), as Mistral reads it on every collection.
 */
export function parsePaging(spec: PagingSpec, get: (name: string) => string | undefined): PagingRequest {
  const limit = parseLimit(get('limit'));
  const marker = get('marker');
  if (marker !== undefined && !isUuid(marker.trim())) throw invalidField('marker', marker, 'Invalid UUID');

  const sortKeys = commaList(get('sort_keys') ?? spec.defaultSortKey);
  const sortDirs = commaList(get('sort_dirs') ?? 'asc', false);
  if (sortKeys.length === 0) sortKeys.push(spec.defaultSortKey);
  if (sortKeys.length < sortDirs.length) {
    throw new InvalidInputError('Length of sort_keys must be equal or greater than sort_dirs.');
  }
  while (sortDirs.length < sortKeys.length) sortDirs.push('asc');
  for (const d of sortDirs) {
    if (d !== 'asc' && d !== 'desc')
      throw new InvalidInputError("Unknown sort direction, must be 'desc' or 'asc'.");
  }
  for (const k of sortKeys) {
    if (!spec.sortable(k)) throw new InvalidInputError(`Sort key supplied is invalid: ${k}`);
  }
  if (!sortKeys.includes('id')) {
    sortKeys.push('id');
    sortDirs.push('asc');
  }

  const fieldsRaw = get('fields');
  const fields = fieldsRaw === undefined ? [] : commaList(fieldsRaw);
  if (fields.length > 0) {
    const unknown = fields.filter((f) => !spec.fields.includes(f));
    if (unknown.length > 0) {
      throw new InvalidInputError(
        `Some fields do not exist  [${unknown.join(', ')}], please choose from [${spec.fields.join(', ')}]`,
      );
    }
    if (!fields.includes('id')) fields.unshift('id');
  }

  return {
    limit,
    ...(marker !== undefined ? { marker: marker.trim() } : {}),
    sort: sortKeys.map((key, i) => ({ key, dir: sortDirs[i] as SortDirection })),
    fields,
  };
}

/** Parses and checks a list request of one definitions collection (workflow-api.md §4). */
export function parseListRequest(
  spec: ListSpec,
  query: QueryBag,
  ctx: RequestContext,
  policy: WorkflowPolicy,
): ListRequest {
  const allowed = new Set<string>([
    ...COMMON_PARAMS,
    ...spec.filters,
    ...(spec.adminFilters ? ['all_projects', 'project_id'] : []),
  ]);
  for (const name of Object.keys(query)) {
    if (!allowed.has(name)) throw new InvalidInputError(`Unknown argument: "${name}"`);
  }
  const get = (name: string) => queryValue(query, name);

  let allProjects = false;
  if (spec.adminFilters) {
    // Mistral: `all_projects` needs `<collection>:list:all_projects`; `project_id` alone is a filter
    // within what the caller sees (every row for an admin).
    const all = get('all_projects');
    if (all !== undefined && parseBool('all_projects', all)) {
      policy.enforce(`${spec.policy}:list:all_projects`, ctx);
      allProjects = true;
    }
  }

  const { limit, marker, sort, fields } = parsePaging(
    {
      defaultSortKey: spec.defaultSortKey,
      fields: spec.table.fields,
      sortable: (k) => spec.table.columns[k] !== undefined,
    },
    get,
  );

  const filters: FieldFilter[] = [];
  const linkFilters: [string, string][] = [];
  for (const name of spec.filters) {
    const raw = get(name) ?? spec.implicitFilters?.[name];
    if (raw === undefined) continue;
    const { filter, link } = parseFilter(spec, name, raw);
    filters.push(filter);
    linkFilters.push([name, link]);
  }
  const projectFilter = spec.adminFilters ? get('project_id') : undefined;
  if (projectFilter !== undefined) {
    const { filter, link } = parseFilter(spec, 'project_id', projectFilter);
    filters.push(filter);
    linkFilters.push(['project_id', link]);
  }

  return {
    // Admins see every project's rows, as in the reference; so does anyone the policy lets ask for all_projects.
    visibility: ctx.isAdmin || allProjects ? { kind: 'all' } : { kind: 'project', projectId: ctx.projectId },
    filters,
    sort,
    limit,
    ...(marker !== undefined ? { marker: marker.toLowerCase() } : {}),
    fields,
    linkFilters,
  };
}

const linkValue = (v: string): string => encodeURIComponent(v).replace(/%3A/gi, ':').replace(/%2C/gi, ',');

/**
 * Mistral's `next` link, present only when the page is full: sort keys and directions (with `id`),
 * each filter as `field=op:value`, limit, the last id as marker, then `fields` when given.
 */
export function nextLink(
  baseUrl: string,
  spec: ListSpec,
  req: ListRequest,
  page: Pick<JsonPage, 'count' | 'lastId'>,
): string | undefined {
  if (page.count === 0 || page.count !== req.limit || page.lastId === null) return undefined;
  const parts = [
    `sort_keys=${req.sort.map((s) => s.key).join(',')}`,
    `sort_dirs=${req.sort.map((s) => s.dir).join(',')}`,
    ...req.linkFilters.map(([k, v]) => `${k}=${linkValue(v)}`),
    `limit=${req.limit}`,
    `marker=${page.lastId}`,
  ];
  if (req.fields.length > 0) parts.push(`fields=${req.fields.join(',')}`);
  return `${baseUrl}/v2/${spec.collection}?${parts.join('&')}`;
}

/** The list response `{"<collection>": [...], "next": "..."}` around a page the database rendered. */
export function listBody(spec: ListSpec, page: JsonPage, next: string | undefined): string {
  return `{"${spec.collection}": ${page.json}${next ? `, "next": ${JSON.stringify(next)}` : ''}}`;
}
