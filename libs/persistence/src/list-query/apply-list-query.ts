import { InternalError, NotFoundError } from '@osc/errors';
import { type ObjectLiteral, type SelectQueryBuilder } from 'typeorm';
import {
  type FieldFilter,
  type ListField,
  type ListFilter,
  type ListPage,
  type ListQuery,
  type ListSpec,
} from './list-query.types';

export interface ApplyListOptions {
  /**
   * Select only the columns of the requested `fields` (plus the id and sort keys) instead of whole
   * rows. Only for query builders without joined selections.
   */
  readonly selectFields?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Column {
  /** `"alias"."column"` on the main alias. */
  readonly expr: string;
  /** `"column"` alone, for the marker subquery. */
  readonly bare: string;
  readonly property: string;
  readonly field: ListField;
}

/**
 * Runs a list query on `qb` (already scoped by the caller, e.g. to a project) and returns one page.
 *
 * Filters become WHERE conditions; the order is the query's sort keys (ASC NULLS LAST / DESC NULLS
 * FIRST: NULL ranks above every value in both directions, as PostgreSQL's default indexes do) and
 * the page continues strictly after the marker row by keyset comparison on (sort keys…, id), so
 * paging never loses or repeats rows whatever the order, duplicates or NULLs. The marker is looked
 * up through the caller's scope without the list filters: an id the caller cannot see is a
 * NotFoundError for `spec.resource`. One extra row is fetched to tell whether more rows follow; a
 * COUNT runs only for `withCount`.
 */
export async function applyListQuery<T extends ObjectLiteral>(
  qb: SelectQueryBuilder<T>,
  spec: ListSpec,
  query: ListQuery,
  options: ApplyListOptions = {},
): Promise<ListPage<T>> {
  const mainAlias = qb.expressionMap.mainAlias;
  if (!mainAlias?.hasMetadata) throw new InternalError('applyListQuery needs a query builder on an entity');
  const metadata = mainAlias.metadata;
  const esc = (name: string): string => qb.connection.driver.escape(name);
  const column = (name: string): Column => {
    const field = spec.fields[name];
    const meta = field?.property ? metadata.findColumnWithPropertyPath(field.property) : undefined;
    if (!field || !meta) throw new InternalError(`List spec of ${spec.resource}: ${name} has no column`);
    return {
      expr: `${esc(qb.alias)}.${esc(meta.databaseName)}`,
      bare: esc(meta.databaseName),
      property: meta.propertyPath,
      field,
    };
  };
  const idName = spec.idField ?? 'id';
  const id = column(idName);
  const scope = qb.clone();
  const params = new ParamNames();

  for (const filter of query.filters) {
    const { sql, values } = filterSql(filter, column, params);
    qb.andWhere(sql, values);
  }

  const count = query.withCount ? await qb.clone().orderBy().getCount() : undefined;
  if (query.limit <= 0) return { items: [], hasMore: false, ...(count === undefined ? {} : { count }) };

  const keys = query.sort.map((s) => ({ ...s, column: column(s.key) }));
  if (!keys.some((k) => k.key === idName)) keys.push({ key: idName, dir: 'asc', column: id });

  if (query.marker !== undefined) {
    const marker = query.marker;
    const notFound = (): NotFoundError => new NotFoundError(spec.resource, marker);
    if ((id.field.type ?? 'string') === 'uuid' && !UUID.test(marker)) throw notFound();
    const markerParam = params.next();
    const nulls = keys.map((_, i) => `lq_null_${i}`);
    const row = (await scope
      .select(keys.map((k, i) => `${k.column.expr} IS NULL AS ${nulls[i]}`).join(', '))
      .andWhere(`${id.expr} = :${markerParam}`, { [markerParam]: marker })
      .orderBy()
      .limit(1)
      .getRawOne()) as Record<string, unknown> | undefined;
    if (!row) throw notFound();
    const table = metadata.schema
      ? `${esc(metadata.schema)}.${esc(metadata.tableName)}`
      : esc(metadata.tableName);
    const markerSelect = (exprs: string): string =>
      `(SELECT ${exprs} FROM ${table} lq_m WHERE lq_m.${id.bare} = :${markerParam})`;
    const isNull = keys.map((_, i) => row[nulls[i]!] === true);
    qb.andWhere(afterMarker(keys, isNull, markerSelect), { [markerParam]: marker });
  }

  keys.forEach((k, i) => {
    const dir = k.dir === 'asc' ? 'ASC' : 'DESC';
    const nulls = k.dir === 'asc' ? 'NULLS LAST' : 'NULLS FIRST';
    const property = `${qb.alias}.${k.column.property}`;
    if (i === 0) qb.orderBy(property, dir, nulls);
    else qb.addOrderBy(property, dir, nulls);
  });
  if (options.selectFields && query.fields) {
    const props = new Set<string>([id.property, ...keys.map((k) => k.column.property)]);
    for (const name of query.fields) {
      const field = spec.fields[name];
      if (field?.property) props.add(column(name).property);
    }
    qb.select([...props].map((p) => `${qb.alias}.${p}`));
  }
  if (query.offset > 0) qb.offset(query.offset);
  qb.limit(query.limit + 1);
  const rows = await qb.getMany();
  const hasMore = rows.length > query.limit;
  return {
    items: hasMore ? rows.slice(0, query.limit) : rows,
    hasMore,
    ...(count === undefined ? {} : { count }),
  };
}

/**
 * Rows strictly after the marker in the order of `keys` (the last key is the unique id):
 * OR over i of (keys before i equal to the marker's AND key i after the marker's). NULL sorts last
 * ascending and first descending, i.e. above every value.
 */
function afterMarker(
  keys: readonly { dir: 'asc' | 'desc'; column: Column }[],
  isNull: readonly boolean[],
  markerSelect: (exprs: string) => string,
): string {
  const valueOf = (c: Column): string => markerSelect(`lq_m.${c.bare}`);
  const sameDir = keys.every((k) => k.dir === keys[0]!.dir);
  const noNulls = keys.every((k, i) => !k.column.field.nullable && !isNull[i]);
  if (sameDir && noNulls) {
    // Row comparison: one index range scan on a matching composite index.
    const cols = keys.map((k) => k.column.expr).join(', ');
    const vals = keys.map((k) => `lq_m.${k.column.bare}`).join(', ');
    return `(${cols}) ${keys[0]!.dir === 'asc' ? '>' : '<'} ${markerSelect(vals)}`;
  }
  const equal = (i: number): string => {
    const c = keys[i]!.column;
    return isNull[i] ? `${c.expr} IS NULL` : `${c.expr} = ${valueOf(c)}`;
  };
  const after = (i: number): string | undefined => {
    const k = keys[i]!;
    const c = k.column;
    if (k.dir === 'asc') {
      if (isNull[i]) return undefined;
      return c.field.nullable
        ? `(${c.expr} > ${valueOf(c)} OR ${c.expr} IS NULL)`
        : `${c.expr} > ${valueOf(c)}`;
    }
    return isNull[i] ? `${c.expr} IS NOT NULL` : `${c.expr} < ${valueOf(c)}`;
  };
  const terms: string[] = [];
  keys.forEach((_, i) => {
    const last = after(i);
    if (last === undefined) return;
    terms.push(`(${[...keys.slice(0, i).map((__, j) => equal(j)), last].join(' AND ')})`);
  });
  if (terms.length === 0) return 'FALSE';
  const first = keys[0]!;
  // Implied by the terms; stated so an index led by the first key bounds the scan.
  const bound =
    !first.column.field.nullable && !isNull[0]
      ? `${first.column.expr} ${first.dir === 'asc' ? '>=' : '<='} ${valueOf(first.column)} AND `
      : '';
  return `(${bound}(${terms.join(' OR ')}))`;
}

class ParamNames {
  private n = 0;
  next(): string {
    this.n += 1;
    return `lq_p${this.n}`;
  }
}

function filterSql(
  filter: ListFilter,
  column: (name: string) => Column,
  params: ParamNames,
): { sql: string; values: Record<string, unknown> } {
  if ('anyOf' in filter) {
    const parts = filter.anyOf.map((f) => filterSql(f, column, params));
    return {
      sql: parts.length > 0 ? `(${parts.map((p) => p.sql).join(' OR ')})` : 'FALSE',
      values: Object.assign({}, ...parts.map((p) => p.values)) as Record<string, unknown>,
    };
  }
  return fieldFilterSql(filter, column(filter.field), params);
}

const COMPARE = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function fieldFilterSql(
  filter: FieldFilter,
  c: Column,
  params: ParamNames,
): { sql: string; values: Record<string, unknown> } {
  const type = c.field.type ?? 'string';
  const p = params.next();
  const { op, value } = filter;
  if (op === 'has') {
    const escaped = String(value).replace(/[\\%_]/g, (ch) => `\\${ch}`);
    const expr = type === 'string' ? c.expr : `${c.expr}::text`;
    return { sql: `${expr} LIKE :${p}`, values: { [p]: `%${escaped}%` } };
  }
  if (value === null) {
    return { sql: `${c.expr} ${op === 'neq' ? 'IS NOT NULL' : 'IS NULL'}`, values: {} };
  }
  if (type === 'json' || type === 'tags') {
    const cmp = type === 'tags' ? '@>' : '=';
    const sql = `${c.expr}::jsonb ${cmp} CAST(:${p} AS jsonb)`;
    return { sql: op === 'neq' ? `NOT (${sql})` : sql, values: { [p]: JSON.stringify(value) } };
  }
  if (op === 'in' || op === 'nin') {
    let list = value as readonly unknown[];
    if (type === 'uuid') list = list.filter((v) => UUID.test(String(v)));
    if (list.length === 0) return { sql: op === 'in' ? 'FALSE' : 'TRUE', values: {} };
    return { sql: `${c.expr} ${op === 'in' ? 'IN' : 'NOT IN'} (:...${p})`, values: { [p]: list } };
  }
  if (type === 'uuid' && !UUID.test(String(value))) {
    if (op === 'eq') return { sql: 'FALSE', values: {} };
    if (op === 'neq') return { sql: `${c.expr} IS NOT NULL`, values: {} };
    return { sql: `${c.expr}::text ${COMPARE[op]} :${p}`, values: { [p]: value } };
  }
  return { sql: `${c.expr} ${COMPARE[op]} :${p}`, values: { [p]: value } };
}
