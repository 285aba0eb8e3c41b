import { type SortKey, pageTail } from '@osc/list-query';
import { type FieldFilter, SqlParams as Params, filterCondition } from '../lists/list-filters';
import type { ColumnKind, DefinitionColumn, DefinitionTable } from './definition-tables';
import { acceptedWorkflowSql } from './member-store';

/** Anything that runs SQL: a DataSource, or the EntityManager of an open transaction. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** Who may see rows: everything (admins) or one project's rows plus public ones. */
export type Visibility = { readonly kind: 'all' } | { readonly kind: 'project'; readonly projectId: string };

export interface ListQuery {
  readonly visibility: Visibility;
  readonly filters: readonly FieldFilter[];
  /** Sort keys (wire names) ending with a unique key (`id`), so pages are a total order. */
  readonly sort: readonly SortKey[];
  readonly limit: number;
  /** The row to continue after, as returned by {@link markerValues}. */
  readonly after?: Readonly<Record<string, string | null>>;
  /** Wire fields to return; all when empty. */
  readonly fields: readonly string[];
}

/** A row as the API shows it: wire names, timestamps formatted, `tags` an array. */
export type DefinitionRow = Record<string, unknown>;

const q = (ident: string): string => `"${ident}"`;

const columnOf = (table: DefinitionTable, field: string): DefinitionColumn => {
  const c = table.columns[field];
  if (!c) throw new Error(`unknown field ${field} of ${table.table}`);
  return c;
};

/** SELECT list for wire fields; timestamps rendered in UTC with whole seconds, as Mistral shows them. */
export const selectList = (table: DefinitionTable, fields: readonly string[]): string =>
  (fields.length ? fields : table.fields)
    .map((f) => {
      const c = columnOf(table, f);
      // Stored times have whole seconds, so the UTC timestamp's text form is `YYYY-MM-DD HH:MM:SS`.
      return c.kind === 'timestamp'
        ? `(${q(c.column)} AT TIME ZONE 'UTC')::text AS ${q(f)}`
        : `${q(c.column)} AS ${q(f)}`;
    })
    .join(', ');

/** Owner's and public rows; for workflows also those shared with (and accepted by) the project. */
const visibilitySql = (v: Visibility, p: Params, table: DefinitionTable): string => {
  if (v.kind === 'all') return 'TRUE';
  const project = p.add(v.projectId);
  const shared = table.table === 'workflow_definitions' ? ` OR ${acceptedWorkflowSql(project)}` : '';
  return `("project_id" = ${project} OR "scope" = 'public'${shared})`;
};

const filterSql = (table: DefinitionTable, f: FieldFilter, p: Params): string =>
  filterCondition(columnOf(table, f.field), f, p);

/**
 * Keyset condition "after the marker row" for any mix of directions. PostgreSQL orders NULLs last
 * ascending and first descending; the condition follows that so pages never skip or repeat rows.
 */
const afterSql = (table: DefinitionTable, query: ListQuery, p: Params): string | undefined => {
  const after = query.after;
  if (!after) return undefined;
  const keys = query.sort.map((s) => ({ ...s, c: columnOf(table, s.key), m: after[s.key] ?? null }));
  const sameDir = keys.every((k) => k.dir === keys[0]?.dir);
  if (sameDir && keys.every((k) => !k.c.nullable && k.m !== null)) {
    const cols = keys.map((k) => q(k.c.column)).join(', ');
    const vals = keys.map((k) => p.add(k.m, k.c.kind)).join(', ');
    return `(${cols}) ${keys[0]?.dir === 'desc' ? '<' : '>'} (${vals})`;
  }
  const ors: string[] = [];
  keys.forEach((k, i) => {
    const ands: string[] = [];
    for (const prev of keys.slice(0, i)) {
      ands.push(
        prev.m === null
          ? `${q(prev.c.column)} IS NULL`
          : `${q(prev.c.column)} = ${p.add(prev.m, prev.c.kind)}`,
      );
    }
    const ref = q(k.c.column);
    if (k.dir === 'asc') {
      if (k.m === null) return;
      ands.push(
        k.c.nullable
          ? `(${ref} > ${p.add(k.m, k.c.kind)} OR ${ref} IS NULL)`
          : `${ref} > ${p.add(k.m, k.c.kind)}`,
      );
    } else {
      ands.push(k.m === null ? `${ref} IS NOT NULL` : `${ref} < ${p.add(k.m, k.c.kind)}`);
    }
    ors.push(`(${ands.join(' AND ')})`);
  });
  return ors.length ? `(${ors.join(' OR ')})` : 'FALSE';
};

const pageSql = (table: DefinitionTable, query: ListQuery, p: Params): string => {
  const where = [
    visibilitySql(query.visibility, p, table),
    ...query.filters.map((f) => filterSql(table, f, p)),
  ];
  const after = afterSql(table, query, p);
  if (after) where.push(after);
  // Qualified: a bare name would sort by the output column of the same name (the rendered text).
  const tail = pageTail(
    query.sort,
    (key) => `${q(table.table)}.${q(columnOf(table, key).column)}`,
    { limit: query.limit },
    p,
  );
  return `SELECT ${selectList(table, query.fields)} FROM ${q(table.table)} WHERE ${where.join(' AND ')} ${tail}`;
};

/** One page of a definitions table: visibility, filters, keyset marker, order and limit in one indexed query. */
export async function listDefinitions(
  db: SqlRunner,
  table: DefinitionTable,
  query: ListQuery,
): Promise<DefinitionRow[]> {
  const p = new Params();
  return db.query(pageSql(table, query, p), p.values);
}

/** A page already rendered as a JSON array text, with what a `next` link needs. */
export interface JsonPage {
  /** JSON array of the rows in wire form (`[]` when empty). */
  readonly json: string;
  readonly count: number;
  readonly lastId: string | null;
}

/**
 * The same page as {@link listDefinitions}, rendered to JSON by the database: the API passes the text
 * through, so a list costs the server no row parsing and no serialisation (the lists' hot path).
 */
export async function listDefinitionsJson(
  db: SqlRunner,
  table: DefinitionTable,
  query: ListQuery,
): Promise<JsonPage> {
  const p = new Params();
  const rows: { json: string | null; count: number; last_id: string | null }[] = await db.query(
    `SELECT json_agg(page)::text AS "json", count(*)::int AS "count", (array_agg(page."id"::text))[count(*)] AS "last_id" FROM (${pageSql(table, query, p)}) page`,
    p.values,
  );
  const row = rows[0];
  return { json: row?.json ?? '[]', count: row?.count ?? 0, lastId: row?.last_id ?? null };
}

/**
 * The sort-key values of a visible row, as text, to continue a list after it; null when the row does
 * not exist or is not visible.
 */
export async function markerValues(
  db: SqlRunner,
  table: DefinitionTable,
  id: string,
  keys: readonly string[],
  visibility: Visibility,
): Promise<Record<string, string | null> | null> {
  const p = new Params();
  const select = keys.map((k) => `${q(columnOf(table, k).column)}::text AS ${q(k)}`).join(', ');
  const rows: Record<string, string | null>[] = await db.query(
    `SELECT ${select} FROM ${q(table.table)} WHERE "id" = ${p.add(id, 'uuid')} AND ${visibilitySql(visibility, p, table)}`,
    p.values,
  );
  return rows[0] ?? null;
}

export interface FindOptions {
  /** Name or UUID; UUID-like identifiers match `id` in any namespace (as the reference does). */
  readonly identifier: string;
  readonly identifierIsId: boolean;
  /** Namespaces to try for a name, in order of preference. */
  readonly namespaces: readonly string[];
  readonly visibility: Visibility;
  /** Preferred owner when several projects' rows match (admins, public rows). */
  readonly callerProjectId: string;
  readonly fields?: readonly string[];
  readonly forUpdate?: boolean;
}

/** One row by name (in the given namespaces) or id, preferring the namespace order, then the caller's own row. */
export async function findDefinition(
  db: SqlRunner,
  table: DefinitionTable,
  o: FindOptions,
): Promise<DefinitionRow | null> {
  const p = new Params();
  const byName = o.namespaces.length
    ? `("name" = ${p.add(o.identifier)} AND "namespace" IN (${o.namespaces.map((ns) => p.add(ns)).join(', ')}))`
    : 'FALSE';
  const match = o.identifierIsId ? `("id" = ${p.add(o.identifier, 'uuid')} OR ${byName})` : byName;
  const order = [
    ...(o.namespaces.length > 1
      ? [
          `CASE "namespace" ${o.namespaces.map((ns, i) => `WHEN ${p.add(ns)} THEN ${i}`).join(' ')} ELSE ${o.namespaces.length} END`,
        ]
      : []),
    `("project_id" IS NOT DISTINCT FROM ${p.add(o.callerProjectId)}) DESC`,
  ];
  const sql =
    `SELECT ${selectList(table, o.fields ?? [])} FROM ${q(table.table)} WHERE ${match} AND ${visibilitySql(o.visibility, p, table)} ` +
    `ORDER BY ${order.join(', ')} LIMIT 1` +
    (o.forUpdate ? ' FOR UPDATE' : '');
  const rows: DefinitionRow[] = await db.query(sql, p.values);
  return rows[0] ?? null;
}

/** Column values for a write, keyed by column name; `kind` drives the parameter cast. */
export type ColumnValues = Readonly<
  Record<string, { readonly value: unknown; readonly kind?: ColumnKind | 'json' }>
>;

const castOf = (kind: ColumnKind | 'json' | undefined): ColumnKind =>
  kind === 'json' ? 'tags' : (kind ?? 'text');
const encode = (v: { value: unknown; kind?: ColumnKind | 'json' }): unknown =>
  v.kind === 'json' || v.kind === 'tags' ? (v.value === null ? null : JSON.stringify(v.value)) : v.value;

/**
 * INSERT that yields the new row, or null when a unique index (project, namespace, name) already has
 * one: the transaction stays usable and the caller reports the conflict.
 */
export async function insertDefinition(
  db: SqlRunner,
  table: DefinitionTable,
  values: ColumnValues,
): Promise<DefinitionRow | null> {
  const p = new Params();
  const cols = Object.keys(values);
  const vals = cols.map((c) => p.add(encode(values[c]!), castOf(values[c]!.kind)));
  const rows: DefinitionRow[] = await db.query(
    `INSERT INTO ${q(table.table)} (${cols.map(q).join(', ')}) VALUES (${vals.join(', ')}) ON CONFLICT DO NOTHING RETURNING ${selectList(table, [])}`,
    p.values,
  );
  return rows[0] ?? null;
}

/**
 * INSERT, or UPDATE the row with the same (project, namespace, name): `insertOnly` columns (creation
 * time) are written only by the INSERT, `updateOnly` ones (update time) only by the UPDATE.
 */
export async function upsertDefinition(
  db: SqlRunner,
  table: DefinitionTable,
  values: ColumnValues,
  insertOnly: ColumnValues,
  updateOnly: ColumnValues,
): Promise<DefinitionRow> {
  const p = new Params();
  const all = { ...values, ...insertOnly };
  const cols = Object.keys(all);
  const vals = cols.map((c) => p.add(encode(all[c]!), castOf(all[c]!.kind)));
  const sets = [
    ...Object.keys(values).map((c) => `${q(c)} = EXCLUDED.${q(c)}`),
    ...Object.keys(updateOnly).map(
      (c) => `${q(c)} = ${p.add(encode(updateOnly[c]!), castOf(updateOnly[c]!.kind))}`,
    ),
  ];
  const rows: DefinitionRow[] = await db.query(
    `INSERT INTO ${q(table.table)} (${cols.map(q).join(', ')}) VALUES (${vals.join(', ')}) ON CONFLICT ${table.uniqueKey} DO UPDATE SET ${sets.join(', ')} RETURNING ${selectList(table, [])}`,
    p.values,
  );
  return rows[0]!;
}

/** UPDATE one row by id; returns the updated row (null: gone, or a unique index would be violated). */
export async function updateDefinition(
  db: SqlRunner,
  table: DefinitionTable,
  id: string,
  values: ColumnValues,
): Promise<DefinitionRow | null> {
  const p = new Params();
  const sets = Object.keys(values).map(
    (c) => `${q(c)} = ${p.add(encode(values[c]!), castOf(values[c]!.kind))}`,
  );
  // A CTE makes every driver return plain rows for UPDATE ... RETURNING.
  const rows: DefinitionRow[] = await db.query(
    `WITH u AS (UPDATE ${q(table.table)} SET ${sets.join(', ')} WHERE "id" = ${p.add(id, 'uuid')} RETURNING *) SELECT ${selectList(table, [])} FROM u`,
    p.values,
  );
  return rows[0] ?? null;
}

/** True when another row than `exceptId` already has (project, namespace, name). */
export async function nameTaken(
  db: SqlRunner,
  table: DefinitionTable,
  key: { projectId: string | null; namespace: string; name: string },
  exceptId?: string,
): Promise<boolean> {
  const p = new Params();
  const rows: unknown[] = await db.query(
    `SELECT 1 FROM ${q(table.table)} WHERE "project_id" IS NOT DISTINCT FROM ${p.add(key.projectId)} AND "namespace" = ${p.add(key.namespace)} AND "name" = ${p.add(key.name)}` +
      (exceptId ? ` AND "id" <> ${p.add(exceptId, 'uuid')}` : ''),
    p.values,
  );
  return rows.length > 0;
}

/** DELETE one row by id; true when a row was removed. */
export async function deleteDefinition(db: SqlRunner, table: DefinitionTable, id: string): Promise<boolean> {
  const p = new Params();
  const rows: unknown[] = await db.query(
    `WITH d AS (DELETE FROM ${q(table.table)} WHERE "id" = ${p.add(id, 'uuid')} RETURNING "id") SELECT "id" FROM d`,
    p.values,
  );
  return rows.length > 0;
}
