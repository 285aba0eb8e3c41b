/** Filter operators of the list APIs (Mistral's `field=<op>:<value>`; Cinder's `k~` is `has`). */
export const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'has'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

export const SORT_DIRS = ['asc', 'desc'] as const;
export type SortDir = (typeof SORT_DIRS)[number];

/**
 * How a wire field is stored, which decides how filter values are parsed and compared:
 * `datetime` values without a zone are UTC; `json` compares whole values (eq/neq only); `tags` is a
 * jsonb array of strings and `eq` with a comma list matches rows holding every listed tag; `uuid`
 * values that are not uuids match nothing (no database error).
 */
export const LIST_FIELD_TYPES = [
  'string',
  'integer',
  'number',
  'boolean',
  'datetime',
  'uuid',
  'json',
  'tags',
] as const;
export type ListFieldType = (typeof LIST_FIELD_TYPES)[number];

export interface ListField {
  /** Entity property on the query's main alias; absent for a computed wire field (selectable only). */
  readonly property?: string;
  /** Default `string`. */
  readonly type?: ListFieldType;
  /** The column may hold NULL (keyset paging then treats NULL as larger than every value). */
  readonly nullable?: boolean;
  readonly sortable?: boolean;
  readonly filterable?: boolean;
}

/**
 * What a collection allows: the whitelist of wire fields (in display order, which `fields` error
 * messages list), their columns, the default order and page sizes.
 */
export interface ListSpec {
  /** Resource name used in NotFoundError for an unknown marker (e.g. `Workflow`, `Volume`). */
  readonly resource: string;
  readonly fields: Readonly<Record<string, ListField>>;
  /** Used when the request names no sort keys (Mistral `created_at asc`, Cinder `created_at desc`). */
  readonly defaultSort: readonly SortKey[];
  /** Page size without `limit`; default `maxLimit`. */
  readonly defaultLimit?: number;
  /** Larger limits are clamped to this; default 1000. */
  readonly maxLimit?: number;
  /** The unique, non-null tie-breaker field; default `id`. */
  readonly idField?: string;
}

export interface SortKey {
  readonly key: string;
  readonly dir: SortDir;
}

export type FilterValue = string | number | boolean | Date | null | readonly string[] | unknown;

export interface FieldFilter {
  readonly field: string;
  readonly op: FilterOp;
  /** Typed value (arrays for `in`/`nin`; the parsed JSON for `json`; null = IS NULL / IS NOT NULL). */
  readonly value: FilterValue;
  /** The value as the client wrote it (after the operator), for next links. */
  readonly raw: string;
}

/** Any one of the conditions (Cinder's comma list of time conditions on one field). */
export interface AnyOfFilter {
  readonly anyOf: readonly FieldFilter[];
}

export type ListFilter = FieldFilter | AnyOfFilter;

/** A parsed, validated list request; independent of the wire dialect that produced it. */
export interface ListQuery {
  /** Full order, tie-breakers (at least the id field) included: next links repeat it. */
  readonly sort: readonly SortKey[];
  /** Page size (0: an empty page, Cinder). */
  readonly limit: number;
  readonly marker?: string;
  /** Rows skipped after the marker (Cinder). */
  readonly offset: number;
  /** Requested wire fields with the id field first; undefined = all. */
  readonly fields?: readonly string[];
  readonly filters: readonly ListFilter[];
  /** Also count every row matching the filters (Cinder `with_count`). */
  readonly withCount: boolean;
}

export interface ListPage<T> {
  readonly items: T[];
  /** Rows exist after the last item (so a next link leads somewhere). */
  readonly hasMore: boolean;
  /** Only when `withCount` was asked. */
  readonly count?: number;
}

export const DEFAULT_MAX_LIMIT = 1000;
