import { InvalidInputError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import {
  type FieldFilter,
  type RunColumn,
  type RunListQuery,
  type RunTable,
  listRuns,
} from '@osc/workflow-persistence';
import type { WorkflowPolicy } from '../policy/workflow-policy';
import {
  isCanonicalUuid,
  isUuid,
  parsePaging,
  parseTimestamp,
  splitFilterOp,
} from '../definitions/list-params';
import { type QueryBag, invalidField, parseBool, queryValue } from '../definitions/query-values';

/**
 * Lists of the run-time collections (executions, tasks, action executions) and the other
 * project-owned collections: Mistral's list dialect (workflow-api.md §4) over tables without a
 * definitions-style visibility — rows are visible to their project, or to an admin asking for all
 * projects. The query itself is `listRuns` of the workflow persistence.
 */
export type { RunColumn } from '@osc/workflow-persistence';

export interface RunListSpec extends RunTable {
  readonly collection: 'executions' | 'tasks' | 'action_executions';
  /** Wire fields in response order (what `fields` may name). */
  readonly fields: readonly string[];
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

/** A parsed list request: the page query plus what the `next` link and the view need. */
export interface RunListRequest extends RunListQuery {
  readonly allProjects: boolean;
  readonly fields: string[];
  readonly link: [string, string][];
}

const commaList = (raw: string): string[] => {
  const out: string[] = [];
  for (const item of raw.split(',')) {
    const v = item.trim().toLowerCase();
    if (v && !out.includes(v)) out.push(v);
  }
  return out;
};

/** A filter's value as its column's kind wants it (checked: a bad boolean, time, UUID or JSON is a 400). */
const filterOf = (field: string, c: RunColumn, raw: string): FieldFilter => {
  const { op, value } = splitFilterOp(raw);
  if (c.kind === 'tags') {
    const tags = value
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    return { field, op: 'eq', value: tags };
  }
  if (op === 'has') return { field, op, value };
  const convert = (v: string): string | boolean => {
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
  if (op === 'in' || op === 'nin') return { field, op, value: value.split(',').map(convert) };
  return { field, op, value: convert(value) };
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
  const link: [string, string][] = [];

  let allProjects = false;
  let projectFilter: string | undefined;
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
      projectFilter = project;
      link.push(['project_id', `eq:${project}`]);
    }
  }
  // The scope columns hold uuids; Mistral compares them as strings, so anything else matches no row.
  const scope = spec.scope
    ? { column: spec.scope.column, value: isCanonicalUuid(spec.scope.value) ? spec.scope.value : null }
    : undefined;

  const nulls: string[] = [];
  const rawNulls = spec.extraParams.includes('nulls') ? get('nulls') : undefined;
  if (rawNulls !== undefined) {
    for (const f of commaList(rawNulls)) {
      if (!spec.columns[f]) throw new InvalidInputError(`Unknown argument: "${f}"`);
      nulls.push(f);
    }
  }

  const filters: FieldFilter[] = [];
  for (const [field, c] of Object.entries(spec.columns)) {
    if (field === 'id') continue;
    const raw = get(field);
    if (raw === undefined) continue;
    const { op, value } = splitFilterOp(raw);
    link.push([field, `${op}:${value}`]);
    filters.push(filterOf(field, c, raw));
  }

  const { limit, marker, sort, fields } = parsePaging(
    {
      defaultSortKey: 'created_at',
      fields: spec.fields,
      sortable: (k) => spec.columns[k] !== undefined,
    },
    get,
  );
  return {
    allProjects,
    ...(projectFilter !== undefined ? { projectFilter } : {}),
    project: allProjects ? null : ctx.projectId,
    ...(scope ? { scope } : {}),
    nulls,
    filters,
    sort,
    limit,
    ...(marker !== undefined ? { marker } : {}),
    markerProject: allProjects || ctx.isAdmin ? null : ctx.projectId,
    fields,
    link,
  };
}

/**
 * Runs a parsed list: one indexed keyset query. Rows come back raw (the caller maps them), with
 * `columns` only when given (what the caller's view reads), else every column.
 */
export const runList = (
  db: Parameters<typeof listRuns>[0],
  spec: RunListSpec,
  req: RunListRequest,
  columns?: readonly string[],
): Promise<Record<string, unknown>[]> => listRuns(db, spec, req, columns);

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
