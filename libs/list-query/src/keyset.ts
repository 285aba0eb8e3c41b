/**
 * The list-query core both services page with (issue #20): a parsed sort spec, the keyset ("after
 * the marker") predicate over its keys, and the ORDER BY / LIMIT tail. Each service parses its own
 * wire parameters into a {@link SortKey} list (Cinder's `sort=key:dir`, Mistral's `sort_keys` /
 * `sort_dirs`), with its own wording, tie-breakers and marker checks, and says how a key becomes an
 * SQL expression and how the marker row's value of a key is written; the SQL shape is decided here
 * once. Pure: it only composes SQL text, the callers run it.
 */

export type SortDirection = 'asc' | 'desc';

/** One key of a parsed sort spec: a field name (the caller maps it to SQL) and its direction. */
export interface SortKey {
  readonly key: string;
  readonly dir: SortDirection;
}

/** Collects positional parameters while a statement is assembled; returns the placeholder. */
export interface ParamSink {
  add(value: unknown): string;
}

/** The SQL expression a sort key orders by (null-safe where the column is nullable). */
export type SortExpression = (key: string) => string;

/**
 * The marker row's value of the sort key at `index`, as SQL: a parameter holding a value read before,
 * or a subquery on the marker row. Called in a fixed order (for each key, the keys before it, then
 * the key itself; the first key once more last), so parameters it adds are numbered predictably.
 */
export type MarkerValue = (key: string, index: number) => string;

/** `e1 DIR1, e2 DIR2, ...` for an ORDER BY. */
export const orderBy = (sort: readonly SortKey[], exprOf: SortExpression): string =>
  sort.map((s) => `${exprOf(s.key)} ${s.dir === 'asc' ? 'ASC' : 'DESC'}`).join(', ');

/**
 * Rows strictly after the marker row in `sort` order, for any mix of directions:
 * `e1 >= m1 AND ((e1 > m1) OR (e1 = m1 AND e2 > m2) OR ...)`, `<` for descending keys, where `m*`
 * are the marker row's values of the same expressions. The sort must end with a unique key (the id)
 * so pages are a total order and never skip or repeat a row.
 *
 * The leading bound on the first key alone is implied by the ORs; it is what an index can seek to,
 * so a deep page starts at the marker instead of reading every page before it.
 */
export function afterMarker(sort: readonly SortKey[], exprOf: SortExpression, markerOf: MarkerValue): string {
  const [first] = sort;
  if (first === undefined) throw new Error('a keyset page needs at least one sort key');
  const ors = sort.map((s, i) => {
    const ands = sort.slice(0, i).map((prev, j) => `${exprOf(prev.key)} = ${markerOf(prev.key, j)}`);
    ands.push(`${exprOf(s.key)} ${s.dir === 'asc' ? '>' : '<'} ${markerOf(s.key, i)}`);
    return `(${ands.join(' AND ')})`;
  });
  const bound = `${exprOf(first.key)} ${first.dir === 'asc' ? '>=' : '<='} ${markerOf(first.key, 0)}`;
  return `(${bound} AND (${ors.join(' OR ')}))`;
}

/** `ORDER BY ... LIMIT $n`, with `OFFSET $m` when an offset is given (Cinder's lists take one). */
export function pageTail(
  sort: readonly SortKey[],
  exprOf: SortExpression,
  page: { readonly limit: number; readonly offset?: number },
  params: ParamSink,
): string {
  const limit = params.add(page.limit);
  const offset = page.offset === undefined ? '' : ` OFFSET ${params.add(page.offset)}`;
  return `ORDER BY ${orderBy(sort, exprOf)} LIMIT ${limit}${offset}`;
}
