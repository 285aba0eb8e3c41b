/**
 * The filter half of Mistral's list dialect (workflow-api.md §4), shared by every workflow list
 * (definitions and the run-time collections): `field=[op:]value` turned into one SQL condition on a
 * column of a known kind, with positional parameters.
 */
export const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'has'] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/**
 * How a column is compared: its parameter cast, and how `has` shows it. `json` columns compare as
 * jsonb; `state` is text with a closed set of values.
 */
export type ListColumnKind = 'text' | 'uuid' | 'timestamp' | 'bool' | 'tags' | 'json' | 'state';

/**
 * One list filter, already validated by the caller: `in`/`nin` carry a list, `tags` (op `eq`) the list
 * of tags that must all be present, `bool` columns a boolean, timestamps an ISO-8601 instant, `json`
 * columns the JSON text.
 */
export interface FieldFilter {
  readonly field: string;
  readonly op: FilterOp;
  readonly value: string | boolean | readonly string[] | readonly (string | boolean)[];
}

const CAST: Readonly<Record<ListColumnKind, string>> = {
  text: '',
  state: '',
  uuid: '::uuid',
  timestamp: '::timestamptz',
  bool: '::boolean',
  tags: '::jsonb',
  json: '::jsonb',
};

/** Collects positional parameters, each cast as its column's kind. */
export class SqlParams {
  readonly values: unknown[] = [];
  add(value: unknown, kind: ListColumnKind = 'text'): string {
    this.values.push(value);
    return `$${this.values.length}${CAST[kind]}`;
  }
  /** A parameter with an explicit cast (`::text`, `::boolean`, ...) or none. */
  addCast(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}

export const quoteIdent = (ident: string): string => `"${ident}"`;

/**
 * The condition of one filter on `column`. Tags must all be present (`@>`); `has` matches the text as
 * shown on the wire (LIKE %value%); `neq` and `nin` keep NULL rows, as Mistral's query does.
 */
export function filterCondition(
  column: { readonly column: string; readonly kind: ListColumnKind },
  f: FieldFilter,
  p: SqlParams,
): string {
  const ref = quoteIdent(column.column);
  if (column.kind === 'tags') {
    const tags = Array.isArray(f.value) ? f.value : [String(f.value)];
    return `${ref} @> ${p.add(JSON.stringify(tags), 'tags')}`;
  }
  if (f.op === 'has') {
    const shown =
      column.kind === 'timestamp'
        ? `to_char(${ref} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`
        : `${ref}::text`;
    return `${shown} LIKE ${p.add(`%${String(f.value)}%`)}`;
  }
  if (f.op === 'in' || f.op === 'nin') {
    const list = (Array.isArray(f.value) ? f.value : [f.value]) as readonly unknown[];
    if (list.length === 0) return f.op === 'in' ? 'FALSE' : 'TRUE';
    const items = list.map((v) => p.add(v, column.kind)).join(', ');
    return f.op === 'in' ? `${ref} IN (${items})` : `(${ref} IS NULL OR ${ref} NOT IN (${items}))`;
  }
  const value = p.add(f.value, column.kind);
  switch (f.op) {
    case 'eq':
      return `${ref} = ${value}`;
    case 'neq':
      return `${ref} IS DISTINCT FROM ${value}`;
    case 'gt':
      return `${ref} > ${value}`;
    case 'gte':
      return `${ref} >= ${value}`;
    case 'lt':
      return `${ref} < ${value}`;
    case 'lte':
      return `${ref} <= ${value}`;
  }
}
