import { NotFoundError } from '@osc/errors';
import { type SortKey, afterMarker, pageTail } from '@osc/list-query';
import type { SqlRunner } from '../executions/execution-rows';
import {
  type FieldFilter,
  type ListColumnKind,
  SqlParams,
  filterCondition,
  quoteIdent as q,
} from './list-filters';

/**
 * Lists of the run-time collections and the other project-owned tables without a definitions-style
 * visibility (executions, tasks, action executions, cron and event triggers, environments, dynamic
 * actions, code sources): one indexed keyset query per page.
 */
export interface RunColumn {
  readonly column: string;
  readonly kind: ListColumnKind;
  readonly nullable?: boolean;
}

export interface RunTable {
  readonly table: string;
  /** Mistral's model name, used in the marker's 404 (`WorkflowExecution not found [id=...]`). */
  readonly model: string;
  /** Filterable / sortable fields (wire names) and their columns. */
  readonly columns: Readonly<Record<string, RunColumn>>;
}

/** One page of a run-time list, already validated by the caller. */
export interface RunListQuery {
  /** The `project_id` filter (an admin's, or any caller's on tables where it is only a filter). */
  readonly projectFilter?: string;
  /** Rows of this project only; null: every project (admins asking for all projects). */
  readonly project: string | null;
  /**
   * The first project condition (the filter, then the visibility one) naming this project also
   * admits public rows (Mistral's secure query over tables with a `scope`).
   */
  readonly publicToo?: string;
  /** A fixed condition on a uuid column (the execution of `/executions/{id}/tasks`); null: no row. */
  readonly scope?: { readonly column: string; readonly value: string | null };
  /** Fields that must be NULL (`nulls=`). */
  readonly nulls: readonly string[];
  readonly filters: readonly FieldFilter[];
  /** Hides transient action executions (synchronous standalone runs not kept). */
  readonly excludeTransient?: boolean;
  /** Sort keys (wire names) ending with `id`, so pages are a total order. */
  readonly sort: readonly SortKey[];
  readonly limit: number;
  readonly marker?: string;
  /**
   * Whose rows a marker may name: the caller's project (or also public rows), or any when null
   * (admins, all_projects). Mistral loads the marker through the project-scoped query, so another
   * project's id is a 404 and its sort values never steer this project's page.
   */
  readonly markerProject: string | null;
  readonly markerPublicToo?: boolean;
}

/**
 * Non-null sort expression so keyset pages never skip NULL rows, and the type its marker values are
 * compared as. NOT NULL columns (the id, timestamps and booleans not marked `nullable`) are ordered
 * by the bare column, which the (project_id, created_at, id) indexes serve: a COALESCE or a cast
 * hides the column from the planner and every page sorted the whole project.
 */
const sortExpr = (c: RunColumn): { sql: string; cast: string } => {
  const ref = q(c.column);
  switch (c.kind) {
    case 'timestamp':
      return { sql: c.nullable ? `COALESCE(${ref}, 'epoch'::timestamptz)` : ref, cast: '::timestamptz' };
    case 'bool':
      return { sql: c.nullable ? `COALESCE(${ref}, false)` : ref, cast: '::boolean' };
    case 'uuid':
      return c.column === 'id'
        ? { sql: ref, cast: '::uuid' }
        : { sql: `COALESCE(${ref}::text, '')`, cast: '::text' };
    case 'json':
    case 'tags':
    case 'text':
    case 'state':
      return { sql: `COALESCE(${ref}::text, '')`, cast: '::text' };
  }
};

/** The virtual sort key that puts a nullable column's NULLs where PostgreSQL puts them. */
const NULL_FLAG = '\u0000null';

/**
 * The sort keys as ordered: a nullable column's key is preceded by its NULL flag (`col IS NULL`) in
 * the same direction, so NULLs come last ascending and first descending, as PostgreSQL orders them
 * (and so as Mistral lists them: `sort_keys=state_info` puts executions without one after the
 * others), while the coalesced value keeps keyset pages exact around them. (Upstream's marker pages
 * across NULLs skip rows; these do not.)
 */
const withNullFlags = (table: RunTable, sort: readonly SortKey[]): SortKey[] =>
  sort.flatMap((k) =>
    columnOf(table, k.key).nullable ? [{ key: `${k.key}${NULL_FLAG}`, dir: k.dir }, k] : [k],
  );

/** The expression and marker cast of a sort key, NULL flags included. */
const keyExpr = (table: RunTable, key: string): { sql: string; cast: string } =>
  key.endsWith(NULL_FLAG)
    ? { sql: `(${q(columnOf(table, key.slice(0, -NULL_FLAG.length)).column)} IS NULL)`, cast: '::boolean' }
    : sortExpr(columnOf(table, key));

const columnOf = (table: RunTable, field: string): RunColumn => {
  const c = table.columns[field];
  if (!c) throw new Error(`unknown field ${field} of ${table.table}`);
  return c;
};

/**
 * Runs a list page: visibility, filters, keyset marker, order and limit in one indexed query. Rows
 * come back raw (the caller maps them), with `columns` only when given (what the caller's view
 * reads), else every column. A marker the caller may not see is a 404 of the table's model.
 */
export async function listRuns(
  db: SqlRunner,
  table: RunTable,
  query: RunListQuery,
  columns?: readonly string[],
): Promise<Record<string, unknown>[]> {
  const p = new SqlParams();
  const where: string[] = [];
  let widened = false;
  const projectIs = (projectId: string): string => {
    const own = `"project_id" = ${p.add(projectId)}`;
    if (widened || query.publicToo === undefined || projectId !== query.publicToo) return own;
    widened = true;
    return `(${own} OR "scope" = 'public')`;
  };
  if (query.projectFilter !== undefined) where.push(projectIs(query.projectFilter));
  if (query.project !== null) where.push(projectIs(query.project));
  // The scope columns hold uuids; Mistral compares them as strings, so anything else matches no row.
  if (query.scope)
    where.push(
      query.scope.value === null ? 'FALSE' : `${q(query.scope.column)} = ${p.add(query.scope.value, 'uuid')}`,
    );
  for (const field of query.nulls) where.push(`${q(columnOf(table, field).column)} IS NULL`);
  for (const f of query.filters) where.push(filterCondition(columnOf(table, f.field), f, p));
  if (query.excludeTransient) where.push('NOT "transient"');

  const sort = withNullFlags(table, query.sort);
  const exprOf = (key: string): string => keyExpr(table, key).sql;
  if (query.marker) {
    // Marker values travel as text and come back with their type: a timestamp keeps its microseconds.
    const select = sort.map((k, i) => `(${exprOf(k.key)})::text AS "k${i}"`).join(', ');
    const visible =
      query.markerProject === null
        ? ''
        : ` AND ("project_id" = $2${query.markerPublicToo ? ` OR "scope" = 'public'` : ''})`;
    const rows: Record<string, unknown>[] = await db.query(
      `SELECT ${select} FROM ${q(table.table)} WHERE "id" = $1::uuid${visible}`,
      query.markerProject === null ? [query.marker] : [query.marker, query.markerProject],
    );
    const m = rows[0];
    if (!m)
      throw new NotFoundError(table.model, query.marker, `${table.model} not found [id=${query.marker}]`);
    where.push(afterMarker(sort, exprOf, (key, i) => p.addCast(m[`k${i}`], keyExpr(table, key).cast)));
  }
  const select = columns ? columns.map(q).join(', ') : '*';
  const sql = `SELECT ${select} FROM ${q(table.table)} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ${pageTail(sort, exprOf, { limit: query.limit }, p)}`;
  return db.query(sql, p.values);
}
