/**
 * Execution rows: the driver's view of them (row mappers) and the insert of a new execution.
 */
import {
  type ActionExecution,
  type TaskExecution,
  type WorkflowExecution,
  type WorkflowSpec,
  executionHistoryEvent,
} from '@osc/workflow-domain';

import { executionCreationAppendCall } from './execution-events';
import { queryNamed } from './prepared-statements';

/** Anything that runs SQL: a transaction's EntityManager, a QueryRunner or a DataSource. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** A row as the driver returns it. */
export type Row = Record<string, unknown>;

export const json = (v: unknown): string => JSON.stringify(v ?? null);
export const parse = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
export const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** Columns of `workflow_executions` beyond the domain model. */
export interface ExecutionExtras {
  parentExecutionId?: string | null;
  sourceExecutionId?: string | null;
}

export const EXECUTION_COLUMNS = `"id", "workflow_id", "workflow_name", "workflow_namespace", "description", "tags", "project_id",
  "state", "state_info", "spec", "input", "output", "params", "context", "var_names", "deferred",
  "task_execution_id", "parent_execution_id", "root_execution_id", "source_execution_id", "created_at", "updated_at"`;

export const toWorkflowExecution = (r: Row): WorkflowExecution => ({
  id: String(r['id']),
  workflowId: String(r['workflow_id']),
  workflowName: String(r['workflow_name']),
  workflowNamespace: String(r['workflow_namespace'] ?? ''),
  spec: parse<WorkflowSpec>(r['spec']),
  description: String(r['description'] ?? ''),
  tags: parse<string[]>(r['tags']) ?? [],
  projectId: String(r['project_id']),
  state: r['state'] as WorkflowExecution['state'],
  stateInfo: (r['state_info'] as string | null) ?? null,
  input: parse(r['input']) ?? {},
  output: parse(r['output']) ?? {},
  params: parse(r['params']) ?? {},
  context: parse(r['context']) ?? {},
  varNames: parse<string[]>(r['var_names']) ?? [],
  taskExecutionId: (r['task_execution_id'] as string | null) ?? null,
  rootExecutionId: (r['root_execution_id'] as string | null) ?? null,
  deferred: parse(r['deferred']) ?? [],
  createdAt: date(r['created_at'])!,
  updatedAt: date(r['updated_at']),
});

export const toTaskExecution = (r: Row): TaskExecution => ({
  id: String(r['id']),
  name: String(r['name']),
  executionId: String(r['workflow_execution_id']),
  type: r['type'] as TaskExecution['type'],
  tags: parse<string[]>(r['tags']) ?? [],
  state: r['state'] as TaskExecution['state'],
  stateInfo: (r['state_info'] as string | null) ?? null,
  inContext: parse(r['in_context']) ?? {},
  published: parse(r['published']) ?? {},
  publishedGlobal: parse(r['published_global']) ?? {},
  runtimeContext: parse(r['runtime_context']) ?? {},
  // `result` holds any JSON value (a string too): both drivers already decode jsonb, so no re-parse.
  result: r['result'] ?? null,
  processed: Boolean(r['processed']),
  nextTasks: parse(r['next_tasks']) ?? [],
  errorHandled: Boolean(r['error_handled']),
  startedAt: date(r['started_at']),
  finishedAt: date(r['finished_at']),
  createdAt: date(r['created_at'])!,
  updatedAt: date(r['updated_at']),
});

export const toActionExecution = (r: Row): ActionExecution => ({
  id: String(r['id']),
  taskExecutionId: String(r['task_execution_id']),
  executionId: String(r['workflow_execution_id']),
  name: String(r['name']),
  state: r['state'] as ActionExecution['state'],
  stateInfo: (r['state_info'] as string | null) ?? null,
  input: parse(r['input']) ?? {},
  output: parse(r['output']) ?? null,
  accepted: Boolean(r['accepted']),
  itemIndex: r['item_index'] === null || r['item_index'] === undefined ? null : Number(r['item_index']),
  ...(r['ordinal'] === null || r['ordinal'] === undefined ? {} : { ordinal: Number(r['ordinal']) }),
  createdAt: date(r['created_at'])!,
  updatedAt: date(r['updated_at']),
});

/** Inserts a new execution row (the API's create, or a sub-workflow start). Returns false if the id exists. */
export async function insertExecution(
  db: SqlRunner,
  ex: WorkflowExecution,
  extras: ExecutionExtras = {},
): Promise<boolean> {
  return (await insertExecutionRow(db, ex, extras, '"id"')) !== null;
}

/** The columns of an execution's list view (no spec, context or variables): what POST /v2/executions answers with. */
const EXECUTION_VIEW_COLUMNS = `"id", "workflow_id", "workflow_name", "workflow_namespace", "description", "tags", "params",
  "task_execution_id", "root_execution_id", "state", "state_info", "input", "output", "created_at", "updated_at", "project_id"`;

/**
 * `insertExecution` that returns the stored row's view columns (as the database holds them: jsonb
 * key order, timestamp precision), or null if the id exists — the API's answer without reading the
 * row back.
 */
export function insertExecutionReturning(
  db: SqlRunner,
  ex: WorkflowExecution,
  extras: ExecutionExtras = {},
  alongside?: AlongsideInsert,
): Promise<Row | null> {
  return insertExecutionRow(db, ex, extras, EXECUTION_VIEW_COLUMNS, alongside);
}

/**
 * A statement written with the execution row, in the same round trip (the API's start command in the
 * outbox): given a binder for its values and the SQL condition "the execution row was inserted", the
 * statement to run only then, or null for none.
 */
export type AlongsideInsert = (bind: (value: unknown) => string, inserted: string) => string | null;

async function insertExecutionRow(
  db: SqlRunner,
  ex: WorkflowExecution,
  extras: ExecutionExtras,
  returning: string,
  alongside?: AlongsideInsert,
): Promise<Row | null> {
  const p = new Params();
  const row = [
    p.add(ex.id),
    p.add(ex.workflowId),
    p.add(ex.workflowName),
    p.add(ex.workflowNamespace),
    p.add(ex.description),
    p.add(json(ex.tags), '::jsonb'),
    p.add(ex.projectId),
    p.add(ex.state),
    p.add(ex.stateInfo),
    ...[ex.spec, ex.input, ex.output, ex.params, ex.context, ex.varNames, ex.deferred].map((v) =>
      p.add(json(v), '::jsonb'),
    ),
    p.add(ex.taskExecutionId),
    p.add(extras.parentExecutionId ?? null),
    p.add(ex.rootExecutionId),
    p.add(extras.sourceExecutionId ?? null),
    p.add(iso(ex.createdAt), '::timestamptz'),
    p.add(iso(ex.updatedAt), '::timestamptz'),
  ];
  const insert = `INSERT INTO "workflow_executions" (${EXECUTION_COLUMNS}) VALUES (${row.join(', ')})
     ON CONFLICT ("id") DO NOTHING RETURNING ${returning}`;
  const bind = p.bind;
  const also = alongside?.(bind, `EXISTS (SELECT 1 FROM "inserted")`);
  // the creation's history entry in the same statement, appended only where the row was inserted:
  // the CTE reads "inserted" (so the insert, and its row lock, come first) and the main query reads
  // the CTE (a non-modifying CTE runs only when referenced)
  const call = executionCreationAppendCall(ex, executionHistoryEvent(ex, null), ex.createdAt, bind);
  const ctes = [
    `"inserted" AS (${insert})`,
    ...(also ? [`"alongside" AS (${also})`] : []),
    ...(call ? [`"history" AS MATERIALIZED (SELECT ${call} FROM "inserted")`] : []),
  ];
  // the API's every POST /v2/executions: a named statement, planned once (`queryNamed`)
  const rows: Row[] = await queryNamed(
    db,
    ctes.length === 1
      ? insert
      : `WITH ${ctes.join(', ')} SELECT "inserted".* FROM "inserted"${call ? `, "history"` : ''}`,
    p.values,
  );
  return rows[0] ?? null;
}

/** Positional parameters of a statement built in parts: each value bound once, in order. */
export class Params {
  readonly values: unknown[] = [];
  add(v: unknown, cast = ''): string {
    this.values.push(v);
    return `$${this.values.length}${cast}`;
  }
  /** `add` without a cast, as a function of its own (for builders that take a binder). */
  readonly bind = (v: unknown): string => this.add(v);
}
