import type { SortKey } from '@osc/block-storage-domain';
import {
  afterMarker as afterMarkerRow,
  pageTail as keysetPageTail,
  orderBy as orderKeys,
} from '@osc/list-query';
import type { Params } from './sql';

/**
 * Cinder's lists on the shared list-query core: `exprOf(key, alias)` gives the SQL expression of a
 * sort key on a table alias (null-safe: COALESCE'd where the column is nullable), so the marker row
 * `mk` and candidate rows compare with the same expressions.
 */
export const orderBy = (
  sort: readonly SortKey[],
  exprOf: (key: string, alias: string) => string,
  alias: string,
): string => orderKeys(sort, (key) => exprOf(key, alias));

/** `ORDER BY ... LIMIT $n OFFSET $m` of a page (Cinder pages take an offset as well as a marker). */
export const pageTail = (
  sort: readonly SortKey[],
  exprOf: (key: string, alias: string) => string,
  alias: string,
  page: { readonly limit: number; readonly offset: number },
  params: Params,
): string => keysetPageTail(sort, (key) => exprOf(key, alias), page, params);

/**
 * Rows after the marker (a UUID; callers check it exists first). The marker row's values are
 * subqueries on it by id, which the planner runs once as init plans, so the first key's bound is a
 * constant an index can seek to.
 */
export function afterMarker(
  sort: readonly SortKey[],
  exprOf: (key: string, alias: string) => string,
  alias: string,
  table: string,
  marker: string,
  params: Params,
): string {
  const m = params.add(marker);
  return afterMarkerRow(
    sort,
    (key) => exprOf(key, alias),
    (key) => `(SELECT ${exprOf(key, 'mk')} FROM "${table}" mk WHERE mk.id = ${m}::uuid)`,
  );
}
