import { InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { WorkflowPolicy } from '../policy/workflow-policy';
import { isCanonicalUuid, isUuid, MAX_PAGE_SIZE, parseTimestamp } from '../definitions/list-params';
import { type QueryBag, invalidField, parseBool, queryValue } from '../definitions/query-values';

/**
 * Lists of the run-time collections (executions, tasks, action executions): Mistral's list dialect
 * (workflow-api.md §4) over tables without `scope` — rows are visible to their project, or to an
 * admin asking for all projects.
 */
export type RunColumnKind = 'text' | 'uuid' | 'timestamp' | 'bool' | 'json' | 'tags' | 'state';

export interface RunColumn {
  readonly column: string;
  readonly kind: RunColumnKind;
  readonly nullable?: boolean;
}

export interface RunListSpec {
  readonly collection: 'executions' | 'tasks' | 'action_executions';
  readonly table: string;
  readonly model: string;
  /** Wire fields in response order (what `fields` may name). */
  readonly fields: readonly string[];
  /** Filterable / sortable fields and their columns. */
  readonly columns: Readonly<Record<string, RunColumn>>;
  /** Extra accepted query parameters (handled by the caller). */
  readonly extraParams: readonly string[];
  readonly adminFilters: boolean;
  /**
   * `project_id` needs the `list:all_projects` rule too (Mistral's executions); otherwise it is a
   * filter that reaches other projects only for admins (Mistral's cron triggers).
   */
  readonly projectFilterNeedsAllProjects?: boolean;
  readonly policy: string;
  /** A fixed condition on a uuid column (e.g. the execution of `/executions/{id}/tasks`). */
  readonly scope?: { column: string; value: string };
}

export interface RunListRequest {
  readonly allProjects: boolean;
  readonly projectFilter?: string;
  readonly where: string[];
  readonly params: unknown[];
  readonly sort: { key: string; dir: 'asc' | 'desc' }[];
  readonly limit: number;
  readonly marker?: string;
  /**
   * Whose rows a marker may name: the caller's project (or also public rows), or any when null
   * (admins, all_projects). Mistral loads the marker through the project-scoped query, so another
   * project's id is a 404 and its sort values never steer this project's page.
   */
  readonly markerProject: string | null;
  readonly markerPublicToo?: boolean;
  readonly fields: string[];
  readonly link: [string, string][];
}

const q = (name: string) => `"${name}"`;
const FILTER_OPS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'nin', 'has'] as const;

const commaList = (raw: string): string[] => {
  const out: string[] = [];
  for (const item of raw.split(',')) {
    const v = item.trim().toLowerCase();
    if (v && !out.includes(v)) out.push(v);
  }
  return out;
};

class Params {
  readonly values: unknown[] = [];
  add(v: unknown, cast = ''): string {
    this.values.push(v);
    return `$${this.values.length}${cast}`;
  }
}

const castOf = (kind: RunColumnKind): string =>
  kind === 'timestamp'
    ? '::timestamptz'
    : kind === 'json' || kind === 'tags'
      ? '::jsonb'
      : kind === 'uuid'
        ? '::uuid'
        : '';

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

/** Parses a list request (filters, paging, sorting, fields), checking every parameter. */
export function parseRunList(
  spec: RunListSpec,
  query: QueryBag,
  ctx: RequestContext,
  policy: WorkflowPolicy,
): RunListRequest {
  const allowed = new Set<string>([
    'marker',
    'limit',
    'sort_keys',
    'sort_dirs',
    'fields',
    ...Object.keys(spec.columns).filter((c) => c !== 'id'),
    ...spec.extraParams,
    ...(spec.adminFilters ? ['all_projects', 'project_id'] : []),
  ]);
  for (const name of Object.keys(query))
    if (!allowed.has(name)) throw new InvalidInputError(`Unknown argument: "${name}"`);
  const get = (name: string) => queryValue(query, name);
  const p = new Params();
  const where: string[] = [];
  const link: [string, string][] = [];

  let allProjects = false;
  if (spec.adminFilters) {
    const all = get('all_projects');
    if (all !== undefined && parseBool('all_projects', all)) {
      policy.enforce(`${spec.policy}:list:all_projects`, ctx);
      allProjects = true;
    }
    const project = get('project_id');
    if (project !== undefined) {
      if (spec.projectFilterNeedsAllProjects && !allProjects)
        policy.enforce(`${spec.policy}:list:all_projects`, ctx);
      // Without that rule (cron triggers) the filter stays within the caller's own rows unless admin.
      if (spec.projectFilterNeedsAllProjects || ctx.isAdmin) allProjects = true;
      where.push(`"project_id" = ${p.add(project)}`);
      link.push(['project_id', `eq:${project}`]);
    }
  }
  if (!allProjects && !ctx.isAdmin) where.push(`"project_id" = ${p.add(ctx.projectId)}`);
  else if (!allProjects) where.push(`"project_id" = ${p.add(ctx.projectId)}`);
  // The scope columns hold uuids; Mistral compares them as strings, so anything else matches no row.
  if (spec.scope)
    where.push(
      isCanonicalUuid(spec.scope.value)
        ? `${q(spec.scope.column)} = ${p.add(spec.scope.value)}::uuid`
        : 'FALSE',
    );

  const nulls = spec.extraParams.includes('nulls') ? get('nulls') : undefined;
  if (nulls !== undefined) {
    for (const f of commaList(nulls)) {
      const c = spec.columns[f];
      if (!c) throw new InvalidInputError(`Unknown argument: "${f}"`);
      where.push(`${q(c.column)} IS NULL`);
    }
  }

  for (const [field, c] of Object.entries(spec.columns)) {
    if (field === 'id') continue;
    const raw = get(field);
    if (raw === undefined) continue;
    let op: (typeof FILTER_OPS)[number] = 'eq';
    let value = raw;
    for (const o of FILTER_OPS) {
      if (raw.startsWith(`${o}:`)) {
        op = o;
        value = raw.slice(o.length + 1);
        break;
      }
    }
    link.push([field, `${op}:${value}`]);
    const ref = q(c.column);
    if (c.kind === 'tags') {
      const tags = value
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      where.push(`${ref} @> ${p.add(JSON.stringify(tags), '::jsonb')}`);
      continue;
    }
    if (op === 'has') {
      const shown =
        c.kind === 'timestamp'
          ? `to_char(${ref} AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')`
          : `${ref}::text`;
      where.push(`${shown} LIKE ${p.add(`%${value}%`)}`);
      continue;
    }
    const convert = (v: string): unknown => {
      switch (c.kind) {
        case 'bool':
          return parseBool(field, v);
        case 'timestamp':
          return parseTimestamp(field, v);
        case 'uuid':
          if (!isUuid(v)) throw invalidField(field, v, 'Invalid UUID');
          return v;
        case 'json':
          try {
            return JSON.stringify(JSON.parse(v));
          } catch {
            throw invalidField(field, v, 'Invalid JSON');
          }
        case 'state':
        case 'tags':
        case 'text':
          return v;
      }
    };
    if (op === 'in' || op === 'nin') {
      const items = value.split(',').map((v) => p.add(convert(v), castOf(c.kind)));
      where.push(
        op === 'in'
          ? `${ref} IN (${items.join(', ')})`
          : `(${ref} IS NULL OR ${ref} NOT IN (${items.join(', ')}))`,
      );
      continue;
    }
    const v = p.add(convert(value), castOf(c.kind));
    const sqlOp = { eq: '=', neq: 'IS DISTINCT FROM', gt: '>', gte: '>=', lt: '<', lte: '<=' }[op];
    where.push(`${ref} ${sqlOp} ${v}`);
  }

  const rawLimit = get('limit');
  let limit = MAX_PAGE_SIZE;
  if (rawLimit !== undefined) {
    if (!/^[+-]?\d+$/.test(rawLimit.trim()))
      throw invalidField('limit', rawLimit, 'unable to convert to int');
    limit = Number(rawLimit.trim());
    if (limit <= 0) throw new InvalidInputError('Limit must be positive.');
    limit = Math.min(limit, MAX_PAGE_SIZE);
  }
  const marker = get('marker');
  if (marker !== undefined && !isUuid(marker.trim())) throw invalidField('marker', marker, 'Invalid UUID');

  const keys = commaList(get('sort_keys') ?? 'created_at');
  const dirs = commaList(get('sort_dirs') ?? 'asc');
  if (keys.length === 0) keys.push('created_at');
  if (keys.length < dirs.length)
    throw new InvalidInputError('Length of sort_keys must be equal or greater than sort_dirs.');
  while (dirs.length < keys.length) dirs.push('asc');
  for (const d of dirs)
    if (d !== 'asc' && d !== 'desc')
      throw new InvalidInputError("Unknown sort direction, must be 'desc' or 'asc'.");
  for (const k of keys)
    if (!spec.columns[k]) throw new InvalidInputError(`Sort key supplied is invalid: ${k}`);
  const sort = keys.map((key, i) => ({ key, dir: dirs[i] as 'asc' | 'desc' }));
  if (!keys.includes('id')) sort.push({ key: 'id', dir: 'asc' });

  const fields: string[] = [];
  const rawFields = get('fields');
  if (rawFields !== undefined) {
    for (const f of commaList(rawFields)) if (!fields.includes(f)) fields.push(f);
    const unknown = fields.filter((f) => !spec.fields.includes(f));
    if (unknown.length) {
      throw new InvalidInputError(
        `Some fields do not exist  [${unknown.join(', ')}], please choose from [${spec.fields.join(', ')}]`,
      );
    }
    if (fields.length && !fields.includes('id')) fields.unshift('id');
  }
  const markerProject = allProjects || ctx.isAdmin ? null : ctx.projectId;
  return {
    allProjects,
    where,
    params: p.values,
    sort,
    limit,
    marker: marker?.trim(),
    markerProject,
    fields,
    link,
  };
}

export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Runs a parsed list: one indexed keyset query. Rows come back raw (the caller maps them), with
 * `columns` only when given (what the caller's view reads), else every column.
 */
export async function runList(
  db: SqlRunner,
  spec: RunListSpec,
  req: RunListRequest,
  columns?: readonly string[],
): Promise<Record<string, unknown>[]> {
  const p = new Params();
  p.values.push(...req.params);
  const where = [...req.where];
  const cols = req.sort.map((s) => ({ ...s, c: spec.columns[s.key]! }));
  if (req.marker) {
    // Marker values travel as text and come back with their type: a timestamp keeps its microseconds.
    const select = cols.map((k, i) => `(${sortExpr(k.c).sql})::text AS "k${i}"`).join(', ');
    const visible =
      req.markerProject === null
        ? ''
        : ` AND ("project_id" = $2${req.markerPublicToo ? ` OR "scope" = 'public'` : ''})`;
    const rows: Record<string, unknown>[] = await db.query(
      `SELECT ${select} FROM ${q(spec.table)} WHERE "id" = $1::uuid${visible}`,
      req.markerProject === null ? [req.marker] : [req.marker, req.markerProject],
    );
    const m = rows[0];
    if (!m) throw new NotFoundError(spec.model, req.marker, `${spec.model} not found [id=${req.marker}]`);
    const value = (c: RunColumn, i: number): string => p.add(m[`k${i}`], sortExpr(c).cast);
    const ors: string[] = [];
    cols.forEach((k, i) => {
      const ands = cols.slice(0, i).map((prev, j) => `${sortExpr(prev.c).sql} = ${value(prev.c, j)}`);
      ands.push(`${sortExpr(k.c).sql} ${k.dir === 'asc' ? '>' : '<'} ${value(k.c, i)}`);
      ors.push(`(${ands.join(' AND ')})`);
    });
    // The same bound on the first key alone is implied by the ORs and is what an index can seek to:
    // the 1,000th page starts at the marker instead of reading the 999 pages before it.
    const [first] = cols;
    if (first)
      where.push(`${sortExpr(first.c).sql} ${first.dir === 'asc' ? '>=' : '<='} ${value(first.c, 0)}`);
    where.push(`(${ors.join(' OR ')})`);
  }
  const order = cols.map((k) => `${sortExpr(k.c).sql} ${k.dir.toUpperCase()}`).join(', ');
  const select = columns ? columns.map(q).join(', ') : '*';
  const sql = `SELECT ${select} FROM ${q(spec.table)} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ${order} LIMIT ${p.add(req.limit)}`;
  return db.query(sql, p.values);
}

/** `next` link when the page is full (workflow-api.md §4). */
export function runNextLink(
  baseUrl: string,
  spec: RunListSpec,
  req: RunListRequest,
  items: readonly { id?: unknown }[],
): string | undefined {
  if (items.length === 0 || items.length < req.limit) return undefined;
  const last = items[items.length - 1]!;
  const parts = [
    `sort_keys=${req.sort.map((s) => s.key).join(',')}`,
    `sort_dirs=${req.sort.map((s) => s.dir).join(',')}`,
    ...req.link.map(([k, v]) => `${k}=${v}`),
    `limit=${req.limit}`,
    `marker=${String(last.id)}`,
    ...(req.fields.length ? [`fields=${req.fields.join(',')}`] : []),
  ];
  return `${baseUrl}/v2/${spec.collection}?${parts.join('&')}`;
}

/** Keeps only the requested fields (all when none were asked for). */
export const pickFields = <T extends Record<string, unknown>>(
  obj: T,
  fields: readonly string[],
): Record<string, unknown> =>
  fields.length ? Object.fromEntries(fields.filter((f) => f in obj).map((f) => [f, obj[f]])) : obj;
