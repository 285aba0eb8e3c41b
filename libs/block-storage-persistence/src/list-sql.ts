import type { SortKey } from '@osc/block-storage-domain';
import type { Params } from './sql';

/**
 * ORDER BY and keyset ("after the marker") SQL for a sort. `exprOf(key, alias)` gives the SQL
 * expression of a sort key on a table alias (null-safe: COALESCE'd where the column is nullable),
 * so the marker row `m` and candidate rows compare with the same expressions.
 */
export function orderBy(
  sort: readonly SortKey[],
  exprOf: (key: string, alias: string) => string,
  alias: string,
): string {
  return sort.map((s) => `${exprOf(s.key, alias)} ${s.dir === 'asc' ? 'ASC' : 'DESC'}`).join(', ');
}

/**
 * The marker must be a UUID (callers check it exists first).
 * `(e1 > m1) OR (e1 = m1 AND e2 > m2) OR ...` with `>`/`<` per direction, where `m*` are the same
 * expressions evaluated on the marker row selected by id.
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
  const markerExpr = (key: string): string =>
    `(SELECT ${exprOf(key, 'mk')} FROM "${table}" mk WHERE mk.id = ${m}::uuid)`;
  const ors: string[] = [];
  for (let i = 0; i < sort.length; i++) {
    const ands: string[] = [];
    for (let j = 0; j < i; j++) {
      const key = (sort[j] as SortKey).key;
      ands.push(`${exprOf(key, alias)} = ${markerExpr(key)}`);
    }
    const s = sort[i] as SortKey;
    ands.push(`${exprOf(s.key, alias)} ${s.dir === 'asc' ? '>' : '<'} ${markerExpr(s.key)}`);
    ors.push(`(${ands.join(' AND ')})`);
  }
  // The first key's bound alone is implied by the ORs and is what an index can seek to (the marker's
  // value is an init-plan constant): a deep page starts at the marker instead of reading every page
  // before it.
  const first = sort[0];
  if (first === undefined) return `(${ors.join(' OR ')})`;
  const bound = `${exprOf(first.key, alias)} ${first.dir === 'asc' ? '>=' : '<='} ${markerExpr(first.key)}`;
  return `(${bound} AND (${ors.join(' OR ')}))`;
}
