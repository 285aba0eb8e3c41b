import {
  type ActionExecution,
  type EngineChanges,
  type ExecutionSnapshot,
  type ExpressionWorld,
  type ItemsRequest,
  type LoadedItems,
  type SubExecutionRef,
  type TaskItem,
  type TaskExecution,
  type WorkflowExecution,
  type WorkflowSpec,
  executionHistoryEvent,
  usesQueryFunctions,
} from '@osc/workflow-domain';

import { executionCreationAppendCall } from './execution-events';

/** Anything that runs SQL: a transaction's EntityManager, a QueryRunner or a DataSource. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

type Row = Record<string, unknown>;

const json = (v: unknown): string => JSON.stringify(v ?? null);
const parse = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** Columns of `workflow_executions` beyond the domain model. */
export interface ExecutionExtras {
  parentExecutionId?: string | null;
  sourceExecutionId?: string | null;
}

const EXECUTION_COLUMNS = `"id", "workflow_id", "workflow_name", "workflow_namespace", "description", "tags", "project_id",
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
  const insert = `INSERT INTO "workflow_executions" (${EXECUTION_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb, $13::jsonb, $14::jsonb, $15::jsonb,
             $16::jsonb, $17, $18, $19, $20, $21::timestamptz, $22::timestamptz)
     ON CONFLICT ("id") DO NOTHING RETURNING ${returning}`;
  const values: unknown[] = [
    ex.id,
    ex.workflowId,
    ex.workflowName,
    ex.workflowNamespace,
    ex.description,
    json(ex.tags),
    ex.projectId,
    ex.state,
    ex.stateInfo,
    json(ex.spec),
    json(ex.input),
    json(ex.output),
    json(ex.params),
    json(ex.context),
    json(ex.varNames),
    json(ex.deferred),
    ex.taskExecutionId,
    extras.parentExecutionId ?? null,
    ex.rootExecutionId,
    extras.sourceExecutionId ?? null,
    iso(ex.createdAt),
    iso(ex.updatedAt),
  ];
  const bind = (v: unknown): string => `$${values.push(v)}`;
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
  const rows: Row[] = await db.query(
    ctes.length === 1
      ? insert
      : `WITH ${ctes.join(', ')} SELECT "inserted".* FROM "inserted"${call ? `, "history"` : ''}`,
    values,
  );
  return rows[0] ?? null;
}

/**
 * Locks the execution row (`SELECT … FOR UPDATE`) and loads everything `decide` needs. Every engine
 * command of one execution runs under this lock, so decisions are serialised per execution across
 * any number of engine processes. Null when the execution does not exist (deleted).
 */
/**
 * Specs and large inputs by execution id: neither ever changes, so engines keep them across commands.
 * An input is kept once its stored size reaches {@link LARGE_INPUT_BYTES} (a with-items list passed as
 * input would otherwise be read and parsed by every transaction of its execution: O(N) per batch of
 * item results), up to `maxInputBytes` of stored input in all, oldest first out.
 */
export class SpecCache {
  private readonly map = new Map<string, WorkflowSpec>();
  private readonly inputs = new Map<string, { input: Record<string, unknown>; bytes: number }>();
  private inputBytes = 0;
  constructor(
    private readonly max = 5000,
    private readonly maxInputBytes = 32 * 1024 * 1024,
  ) {}
  get(id: string): WorkflowSpec | undefined {
    return this.map.get(id);
  }
  set(id: string, spec: WorkflowSpec): void {
    if (this.map.size >= this.max) {
      const first = this.map.keys().next();
      if (!first.done) this.map.delete(first.value);
    }
    this.map.set(id, spec);
  }
  getInput(id: string): Record<string, unknown> | undefined {
    return this.inputs.get(id)?.input;
  }
  /** Keeps `input` when its stored size (`pg_column_size`) makes reading it again worth avoiding. */
  setInput(id: string, input: Record<string, unknown>, bytes: number): void {
    if (bytes < LARGE_INPUT_BYTES || bytes > this.maxInputBytes || this.inputs.has(id)) return;
    while (this.inputBytes + bytes > this.maxInputBytes) {
      const first = this.inputs.entries().next();
      if (first.done) break;
      this.inputs.delete(first.value[0]);
      this.inputBytes -= first.value[1].bytes;
    }
    this.inputs.set(id, { input, bytes });
    this.inputBytes += bytes;
  }
}

/** Stored size from which an execution's input is kept by the engine rather than read again. */
export const LARGE_INPUT_BYTES = 8 * 1024;

/** The execution columns, the spec and the input left out for the executions whose copy is cached. */
const lockedColumns = (specsParam: string, inputsParam: string): string =>
  // replacer functions: the parameters may be literals, whose text must not be read as `$` patterns
  EXECUTION_COLUMNS.replace(
    '"spec", ',
    () => `CASE WHEN "id" = ANY(${specsParam}::uuid[]) THEN "spec" END AS "spec", `,
  ).replace(
    '"input", ',
    () =>
      `CASE WHEN "id" = ANY(${inputsParam}::uuid[]) THEN "input" END AS "input", pg_column_size("input") AS "input_size", `,
  );

/** Puts the cached spec and input into a locked row, and caches those it carried. */
function withCached(specs: SpecCache | undefined, exRow: Row): void {
  const id = String(exRow['id']);
  const spec = specs?.get(id);
  if (spec) exRow['spec'] = spec;
  else specs?.set(id, parse<WorkflowSpec>(exRow['spec']));
  const input = specs?.getInput(id);
  if (input) exRow['input'] = input;
  else if (exRow['input'] !== null && exRow['input'] !== undefined) {
    const parsed = parse<Record<string, unknown>>(exRow['input']);
    exRow['input'] = parsed;
    specs?.setInput(id, parsed, Number(exRow['input_size'] ?? 0));
  }
}

/**
 * The action executions the events of a decision name, and among them those the events complete with
 * ERROR (`failing`: the snapshot carries their position in their task). A plain list counts every named
 * action as failing.
 */
export interface NamedActions {
  ids: readonly string[];
  failing: readonly string[];
}

const namedParams = (
  named: readonly string[] | NamedActions,
): { ids: readonly string[]; failing: readonly string[] } =>
  Array.isArray(named) ? { ids: named, failing: named } : (named as NamedActions);

/**
 * With `actionIds` (the action executions the events of the decision name), the snapshot holds only
 * the action rows `decide` needs (see {@link ExecutionSnapshot.actions}): plain tasks' ones, those in
 * ERROR and the named ones, each with its ordinal; the RUNNING and SUCCESS items of a with-items task
 * stay in the database, so a batch of item results costs the same whatever the number of items.
 */
export async function lockSnapshot(
  db: SqlRunner,
  executionId: string,
  specs?: SpecCache,
  actionIds?: readonly string[] | NamedActions,
): Promise<ExecutionSnapshot | null> {
  return loadSnapshot(db, executionId, true, specs, actionIds);
}

/**
 * What {@link lockSnapshot} loads (every action execution), without the lock: for readers that
 * decide nothing (the expression playground). Null when the execution does not exist.
 */
export function readSnapshot(db: SqlRunner, executionId: string): Promise<ExecutionSnapshot | null> {
  return loadSnapshot(db, executionId, false);
}

async function loadSnapshot(
  db: SqlRunner,
  executionId: string,
  lock: boolean,
  specs?: SpecCache,
  actionIds?: readonly string[] | NamedActions,
): Promise<ExecutionSnapshot | null> {
  // Lock first, in its own statement: under READ COMMITTED a statement that waited for the row lock
  // still reads everything else from the snapshot taken before the wait, so tasks and actions are
  // loaded by a second statement that sees every commit made before the lock was granted.
  const locked: Row[] = await db.query(
    `SELECT ${lockedColumns('$2', '$3')} FROM "workflow_executions" WHERE "id" = $1${lock ? ' FOR UPDATE' : ''}`,
    [
      executionId,
      specs?.get(executionId) ? [] : [executionId],
      specs?.getInput(executionId) ? [] : [executionId],
    ],
  );
  const exRow = locked[0];
  if (!exRow) return null;
  withCached(specs, exRow);
  const rows: Row[] = await db.query(
    `SELECT
       (SELECT COALESCE(json_agg(t ORDER BY t."seq"), '[]') FROM "task_executions" t WHERE t."workflow_execution_id" = $1) AS "tasks",
       (${actionIds ? NEEDED_ACTIONS : ALL_ACTIONS}) AS "actions",
       (SELECT COALESCE(json_agg(json_build_object('id', s."id", 'task_execution_id', s."task_execution_id", 'state', s."state")), '[]')
          FROM "workflow_executions" s WHERE s."parent_execution_id" = $1) AS "subs"`,
    actionIds
      ? [
          executionId,
          JSON.stringify(namedParams(actionIds).ids),
          JSON.stringify(namedParams(actionIds).failing),
        ]
      : [executionId],
  );
  return toSnapshot(db, exRow, rows[0] ?? {});
}

/**
 * {@link lockSnapshot} for several executions in one transaction: the rows are locked in id order (so
 * two engines locking overlapping sets cannot deadlock), then everything `decide` needs is loaded by
 * one statement. `actionIds` names, per execution, the action executions its events name. Missing
 * (deleted) executions are absent from the result.
 */
export async function lockSnapshots(
  db: SqlRunner,
  executionIds: readonly string[],
  specs: SpecCache,
  actionIds: ReadonlyMap<string, readonly string[] | NamedActions>,
): Promise<Map<string, ExecutionSnapshot>> {
  const ids = [...new Set(executionIds)].sort();
  const lock = new Params();
  const locked: Row[] = await db.query(
    lockStatement(ids, specs, (v) => lock.add(v)),
    lock.values,
  );
  if (locked.length === 0) return new Map();
  const load = new Params();
  const loaded: Row[] = await db.query(
    loadStatement(
      locked.map((r) => String(r['id'])),
      actionIds,
      (v) => load.add(v),
    ),
    load.values,
  );
  return toSnapshots(db, specs, locked, loaded);
}

/**
 * A connection that runs several statements sent as one text in one round trip (PostgreSQL's simple
 * query protocol, values written into the text): `pg`'s client, which answers with one result per
 * statement.
 */
export interface StatementBatchRunner {
  query(text: string): Promise<unknown>;
  escapeLiteral(value: string): string;
}

/**
 * {@link lockSnapshots} in one round trip: the lock and the load travel together as two statements of
 * one simple query, after START TRANSACTION with `begin` (`opened` is called once the transaction is
 * open). Each statement of a simple query takes its own snapshot under READ COMMITTED, so the load
 * still sees every commit made before the lock was granted. `loads` runs any further read the
 * snapshots need (the expression world). The simple protocol binds no values: ids and JSON are written
 * into the text as literals escaped by the connection.
 */
export async function lockSnapshotsAtOnce(
  client: StatementBatchRunner,
  loads: SqlRunner,
  executionIds: readonly string[],
  specs: SpecCache,
  actionIds: ReadonlyMap<string, readonly string[] | NamedActions>,
  options: { begin?: boolean; opened?: () => void } = {},
): Promise<Map<string, ExecutionSnapshot>> {
  const ids = [...new Set(executionIds)].sort();
  const literal = (v: unknown): string =>
    Array.isArray(v)
      ? v.length === 0
        ? "'{}'"
        : `ARRAY[${v.map((x) => client.escapeLiteral(String(x))).join(', ')}]`
      : client.escapeLiteral(String(v));
  const text = [
    ...(options.begin ? ['START TRANSACTION'] : []),
    lockStatement(ids, specs, literal),
    loadStatement(ids, actionIds, literal),
  ].join(';\n');
  const results = (await client.query(text)) as { rows: Row[] }[];
  options.opened?.();
  const [locked, loaded] = results.slice(options.begin ? 1 : 0).map((r) => r.rows);
  if (!locked || locked.length === 0) return new Map();
  return toSnapshots(loads, specs, locked, loaded ?? []);
}

/** Locks the execution rows in id order and reads their columns (the spec and input when not cached). */
const lockStatement = (
  ids: readonly string[],
  specs: SpecCache,
  bind: (value: unknown) => string,
): string => {
  const all = bind(ids);
  const specsParam = bind(ids.filter((id) => !specs.get(id)));
  const inputsParam = bind(ids.filter((id) => !specs.getInput(id)));
  return `SELECT ${lockedColumns(specsParam, inputsParam)} FROM "workflow_executions" WHERE "id" = ANY(${all}::uuid[]) ORDER BY "id" FOR UPDATE`;
};

/** Reads the tasks, the needed actions and the sub-executions of each execution of `ids`. */
const loadStatement = (
  ids: readonly string[],
  actionIds: ReadonlyMap<string, readonly string[] | NamedActions>,
  bind: (value: unknown) => string,
): string => {
  const named = ids.map((id) => [id, namedParams(actionIds.get(id) ?? [])] as const);
  const all = bind(ids);
  const namedIds = bind(JSON.stringify(Object.fromEntries(named.map(([id, n]) => [id, n.ids]))));
  const failing = bind(JSON.stringify(Object.fromEntries(named.map(([id, n]) => [id, n.failing]))));
  return `SELECT x."id",
       (SELECT COALESCE(json_agg(t ORDER BY t."seq"), '[]') FROM "task_executions" t WHERE t."workflow_execution_id" = x."id") AS "tasks",
       (${NEEDED_ACTIONS.replaceAll('$1', 'x."id"')
         .replaceAll('$2::jsonb', () => `(${namedIds}::jsonb -> x."id"::text)`)
         .replaceAll('$3::jsonb', () => `(${failing}::jsonb -> x."id"::text)`)}) AS "actions",
       (SELECT COALESCE(json_agg(json_build_object('id', s."id", 'task_execution_id', s."task_execution_id", 'state', s."state")), '[]')
          FROM "workflow_executions" s WHERE s."parent_execution_id" = x."id") AS "subs"
     FROM unnest(${all}::uuid[]) AS x("id")`;
};

/** The snapshots of the locked rows, with the loaded rows of each. */
async function toSnapshots(
  db: SqlRunner,
  specs: SpecCache,
  locked: readonly Row[],
  loaded: readonly Row[],
): Promise<Map<string, ExecutionSnapshot>> {
  const out = new Map<string, ExecutionSnapshot>();
  const related = new Map(loaded.map((r) => [String(r['id']), r]));
  for (const exRow of locked) {
    const id = String(exRow['id']);
    withCached(specs, exRow);
    out.set(id, await toSnapshot(db, exRow, related.get(id) ?? {}));
  }
  return out;
}

async function toSnapshot(db: SqlRunner, exRow: Row, related: Row): Promise<ExecutionSnapshot> {
  const taskRows = parse<Row[]>(related['tasks']) ?? [];
  const actionRows = parse<Row[]>(related['actions']) ?? [];
  const subRows = parse<Row[]>(related['subs']) ?? [];
  const execution = toWorkflowExecution(exRow);
  return {
    execution,
    tasks: taskRows.map(toTaskExecution),
    actions: actionRows.map(toActionExecution),
    subExecutions: subRows.map((r): SubExecutionRef => ({
      id: String(r['id']),
      taskExecutionId: String(r['task_execution_id']),
      state: r['state'] as SubExecutionRef['state'],
    })),
    ...(usesQueryFunctions(execution.spec)
      ? { world: await loadExpressionWorld(db, execution.projectId) }
      : {}),
  };
}

/**
 * What `tasks()`/`executions()` may see (DSL-9.6): every execution of the project and their tasks, in
 * creation order. Loaded only for workflows whose expressions call those functions.
 */
export async function loadExpressionWorld(db: SqlRunner, projectId: string): Promise<ExpressionWorld> {
  const executions: Row[] = await db.query(
    `SELECT ${EXECUTION_COLUMNS} FROM "workflow_executions" WHERE "project_id" = $1 ORDER BY "created_at", "id"`,
    [projectId],
  );
  const tasks: Row[] = await db.query(
    `SELECT * FROM "task_executions" WHERE "project_id" = $1 ORDER BY "created_at", "seq"`,
    [projectId],
  );
  return { executions: executions.map(toWorkflowExecution), tasks: tasks.map(toTaskExecution) };
}

const ALL_ACTIONS = `SELECT COALESCE(json_agg(a ORDER BY a."seq"), '[]') FROM "action_executions" a WHERE a."workflow_execution_id" = $1`;

/**
 * Plain tasks' action rows, those in ERROR and those named by $2 (a JSON array of ids, found by their
 * primary key: an array the planner looks up id by id, and an execution test it cannot turn into a
 * walk of the execution's index — without statistics, PGlite's planner did either, reading every
 * item action of a with-items execution in every transaction). `ordinal`, the position in the task, is computed only for the tasks of the with-items
 * rows that need it: those in ERROR and those named by $3 (the ids the decision's events complete with
 * ERROR) — the failure summary's `idx`. A batch of successful item results so costs neither a window
 * over every action of the task nor a scan of the id list per row.
 */
const NEEDED_ACTIONS = `SELECT COALESCE(json_agg(a ORDER BY a."seq"), '[]') FROM (
    WITH sel AS (
      SELECT a.* FROM "action_executions" a WHERE a."workflow_execution_id" = $1 AND (a."item_index" IS NULL OR a."state" = 'ERROR')
      UNION ALL
      SELECT a.* FROM "action_executions" a
       WHERE a."id" = ANY(ARRAY(SELECT (jsonb_array_elements_text($2::jsonb))::uuid)) AND (a."workflow_execution_id" = $1) IS TRUE
         AND a."item_index" IS NOT NULL AND a."state" <> 'ERROR'),
    ord AS (
      SELECT "id", row_number() OVER (PARTITION BY "task_execution_id" ORDER BY "seq") - 1 AS "ordinal" FROM "action_executions"
       WHERE "task_execution_id" IN (
         SELECT "task_execution_id" FROM sel WHERE "item_index" IS NOT NULL AND ("state" = 'ERROR' OR jsonb_exists($3::jsonb, "id"::text))))
    SELECT sel.*, ord."ordinal" FROM sel LEFT JOIN ord ON ord."id" = sel."id") a`;

const TASK_INSERT_COLUMNS = `"id", "name", "workflow_execution_id", "workflow_id", "workflow_name", "workflow_namespace", "project_id",
  "type", "tags", "state", "state_info", "in_context", "published", "published_global", "runtime_context", "result",
  "processed", "next_tasks", "error_handled", "started_at", "finished_at", "created_at", "updated_at"`;

/** Rows per statement: 23 parameters per created task at most, so 2,000 rows stay under 65,535. */
const ROWS_PER_STATEMENT = 2000;

class Params {
  readonly values: unknown[] = [];
  add(v: unknown, cast = ''): string {
    this.values.push(v);
    return `$${this.values.length}${cast}`;
  }
}

/**
 * Writes the rows of one decision (inside the transaction that holds the execution lock) in a single
 * statement: data-modifying CTEs for the execution update, task and action inserts and updates.
 */
export async function applyChanges(
  db: SqlRunner,
  ex: WorkflowExecution,
  changes: EngineChanges,
  before?: ExecutionSnapshot,
): Promise<void> {
  // item results alone (a batch of with-items results) go in the same statement as the rows
  const itemsOnlyUpdated =
    !changes.itemsDeleted?.length && !changes.itemsCreated?.length && !!changes.itemsUpdated?.length;
  await applyRowChanges(
    db,
    ex,
    changes,
    before ? new Map(before.tasks.map((t) => [t.id, t])) : undefined,
    itemsOnlyUpdated ? changes.itemsUpdated : undefined,
  );
  if (!itemsOnlyUpdated) await applyItemChanges(db, changes);
}

const itemRowsJson = (items: readonly Omit<TaskItem, 'vars'>[], vars: boolean): string =>
  JSON.stringify(
    items.map((r) => ({
      t: r.taskExecutionId,
      i: r.index,
      s: r.state,
      r: r.result ?? null,
      ...(vars ? { v: (r as TaskItem).vars } : {}),
    })),
  );

/** Sets the state and result of the item rows of `$n` (a JSON array, see {@link itemRowsJson}). */
const itemUpdateSql = (
  param: string,
): string => `UPDATE "task_execution_items" AS i SET "state" = u.s, "result" = u.r
         FROM (SELECT (r->>'t')::uuid AS t, (r->>'i')::integer AS n, r->>'s' AS s, r->'r' AS r FROM jsonb_array_elements(${param}::jsonb) AS r) AS u
        WHERE i."task_execution_id" = u.t AND i."idx" = u.n`;

/**
 * Writes the with-items rows of a decision after its task rows: deletions, new lists, then the items
 * that started or completed — each a row of its own, whatever the length of the list. Rows travel
 * as one JSON parameter per statement (no limit on bound parameters).
 */
async function applyItemChanges(db: SqlRunner, changes: EngineChanges): Promise<void> {
  if (changes.itemsDeleted?.length) {
    await db.query(`DELETE FROM "task_execution_items" WHERE "task_execution_id" = ANY($1::uuid[])`, [
      changes.itemsDeleted,
    ]);
  }
  const rows = itemRowsJson;
  if (changes.itemsCreated?.length) {
    await db.query(
      `INSERT INTO "task_execution_items" ("task_execution_id", "idx", "vars", "state", "result")
       SELECT (r->>'t')::uuid, (r->>'i')::integer, r->'v', r->>'s', r->'r' FROM jsonb_array_elements($1::jsonb) AS r`,
      [rows(changes.itemsCreated, true)],
    );
  }
  if (changes.itemsUpdated?.length) {
    await db.query(itemUpdateSql('$1'), [rows(changes.itemsUpdated, false)]);
  }
}

/**
 * The with-items rows decisions asked for (see `ItemsNeeded`): every item of a task, or the next ones
 * waiting to start from an index, found by the primary key.
 */
export async function loadTaskItems(
  db: SqlRunner,
  requests: readonly ItemsRequest[],
): Promise<LoadedItems[]> {
  const out: LoadedItems[] = [];
  for (const r of requests) {
    const found: Row[] =
      r.count === 'all'
        ? await db.query(
            `SELECT "idx", "vars", "state", "result" FROM "task_execution_items" WHERE "task_execution_id" = $1::uuid ORDER BY "idx"`,
            [r.taskExecutionId],
          )
        : await db.query(
            `SELECT "idx", "vars", "state", "result" FROM "task_execution_items"
              WHERE "task_execution_id" = $1::uuid AND "idx" >= $2 AND "state" IS NULL ORDER BY "idx" LIMIT $3`,
            [r.taskExecutionId, r.from, r.count],
          );
    out.push({
      ...r,
      rows: found.map((x) => ({
        taskExecutionId: r.taskExecutionId,
        index: Number(x['idx']),
        vars: parse<Record<string, unknown>>(x['vars']) ?? {},
        state: (x['state'] as TaskItem['state']) ?? null,
        result: x['result'] ?? null,
      })),
    });
  }
  return out;
}

/**
 * `before`: the task rows as loaded. A task's inbound context, published values and result that are
 * the very objects loaded (decide replaces them when it changes them, never edits them) are not
 * written again: a with-items task's inbound context may hold its whole list.
 */
async function applyRowChanges(
  db: SqlRunner,
  ex: WorkflowExecution,
  changes: EngineChanges,
  before?: ReadonlyMap<string, TaskExecution>,
  itemsUpdated?: readonly Omit<TaskItem, 'vars'>[],
): Promise<void> {
  // set-based changes first: the row updates that follow carry the final state of the rows decide held
  for (const u of changes.actionsUnaccepted ?? []) {
    await db.query(
      `UPDATE "action_executions" SET "accepted" = false, "updated_at" = now()
        WHERE "task_execution_id" = $1 AND "accepted" AND ($2::jsonb IS NULL OR jsonb_exists($2::jsonb, "state"))`,
      [u.taskExecutionId, u.states ? JSON.stringify(u.states) : null],
    );
  }
  // PostgreSQL binds at most 65,535 parameters per statement: a large with-items decision (10,000
  // actions created) is written as the execution and task rows first, then the actions in chunks.
  const rows =
    changes.tasksCreated.length +
    changes.tasksUpdated.length +
    changes.actionsCreated.length +
    changes.actionsUpdated.length;
  if (rows > ROWS_PER_STATEMENT) {
    const none = { tasksCreated: [], tasksUpdated: [], actionsCreated: [], actionsUpdated: [] };
    await applyRowChanges(db, ex, {
      ...none,
      ...(changes.execution ? { execution: changes.execution } : {}),
      tasksCreated: changes.tasksCreated,
    });
    for (let i = 0; i < changes.tasksUpdated.length; i += ROWS_PER_STATEMENT) {
      await applyRowChanges(
        db,
        ex,
        { ...none, tasksUpdated: changes.tasksUpdated.slice(i, i + ROWS_PER_STATEMENT) },
        before,
      );
    }
    for (let i = 0; i < changes.actionsCreated.length; i += ROWS_PER_STATEMENT) {
      await applyRowChanges(db, ex, {
        ...none,
        actionsCreated: changes.actionsCreated.slice(i, i + ROWS_PER_STATEMENT),
      });
    }
    for (let i = 0; i < changes.actionsUpdated.length; i += ROWS_PER_STATEMENT) {
      await applyRowChanges(db, ex, {
        ...none,
        actionsUpdated: changes.actionsUpdated.slice(i, i + ROWS_PER_STATEMENT),
      });
    }
    if (itemsUpdated?.length) await db.query(itemUpdateSql('$1'), [itemRowsJson(itemsUpdated, false)]);
    return;
  }
  const p = new Params();
  const parts = rowChangeParts(p, ex, changes, before, itemsUpdated);
  if (parts.length === 0) return;
  if (parts.length === 1) {
    await db.query(parts[0]!, p.values);
    return;
  }
  const ctes = parts.map((sql, i) => `w${i} AS (${sql})`).join(',\n');
  await db.query(`WITH ${ctes} SELECT 1`, p.values);
}

/** The data-modifying statements of one decision's rows, their values bound in `p` (see {@link applyChanges}). */
function rowChangeParts(
  p: Params,
  ex: WorkflowExecution,
  changes: EngineChanges,
  before?: ReadonlyMap<string, TaskExecution>,
  itemsUpdated?: readonly Omit<TaskItem, 'vars'>[],
): string[] {
  const parts: string[] = [];
  const e = changes.execution;
  if (e) {
    parts.push(`UPDATE "workflow_executions" SET "state" = ${p.add(e.state)}, "state_info" = ${p.add(e.stateInfo)},
      "output" = ${p.add(json(e.output), '::jsonb')}, "params" = ${p.add(json(e.params), '::jsonb')},
      "context" = ${p.add(json(e.context), '::jsonb')}, "var_names" = ${p.add(json(e.varNames), '::jsonb')},
      "deferred" = ${p.add(json(e.deferred), '::jsonb')}, "updated_at" = ${p.add(iso(e.updatedAt), '::timestamptz')}
      WHERE "id" = ${p.add(e.id, '::uuid')} RETURNING 1`);
  }
  if (changes.tasksCreated.length) {
    const values = changes.tasksCreated.map(
      (t) =>
        `(${[
          p.add(t.id, '::uuid'),
          p.add(t.name),
          p.add(t.executionId, '::uuid'),
          p.add(ex.workflowId),
          p.add(ex.workflowName),
          p.add(ex.workflowNamespace),
          p.add(ex.projectId),
          p.add(t.type),
          p.add(json(t.tags), '::jsonb'),
          p.add(t.state),
          p.add(t.stateInfo),
          p.add(json(t.inContext), '::jsonb'),
          p.add(json(t.published), '::jsonb'),
          p.add(json(t.publishedGlobal), '::jsonb'),
          p.add(json(t.runtimeContext), '::jsonb'),
          p.add(json(t.result), '::jsonb'),
          p.add(t.processed, '::boolean'),
          p.add(json(t.nextTasks), '::jsonb'),
          p.add(t.errorHandled, '::boolean'),
          p.add(iso(t.startedAt), '::timestamptz'),
          p.add(iso(t.finishedAt), '::timestamptz'),
          p.add(iso(t.createdAt), '::timestamptz'),
          p.add(iso(t.updatedAt), '::timestamptz'),
        ].join(', ')})`,
    );
    parts.push(
      `INSERT INTO "task_executions" (${TASK_INSERT_COLUMNS}) VALUES ${values.join(', ')} RETURNING 1`,
    );
  }
  if (changes.tasksUpdated.length) {
    // null: unchanged, the column keeps its value
    const changed = (
      t: TaskExecution,
      k: 'inContext' | 'published' | 'publishedGlobal' | 'result',
    ): string | null => {
      const old = before?.get(t.id);
      return old && old[k] === t[k] && typeof t[k] === 'object' && t[k] !== null ? null : json(t[k]);
    };
    const values = changes.tasksUpdated.map(
      (t) =>
        `(${[
          p.add(t.id, '::uuid'),
          p.add(t.state, '::varchar'),
          p.add(t.stateInfo, '::text'),
          p.add(changed(t, 'inContext'), '::jsonb'),
          p.add(changed(t, 'published'), '::jsonb'),
          p.add(changed(t, 'publishedGlobal'), '::jsonb'),
          p.add(json(t.runtimeContext), '::jsonb'),
          p.add(changed(t, 'result'), '::jsonb'),
          p.add(t.processed, '::boolean'),
          p.add(json(t.nextTasks), '::jsonb'),
          p.add(t.errorHandled, '::boolean'),
          p.add(iso(t.startedAt), '::timestamptz'),
          p.add(iso(t.finishedAt), '::timestamptz'),
          p.add(iso(t.updatedAt), '::timestamptz'),
        ].join(', ')})`,
    );
    parts.push(`UPDATE "task_executions" AS t SET "state" = v.state, "state_info" = v.state_info, "in_context" = COALESCE(v.in_context, t."in_context"),
      "published" = COALESCE(v.published, t."published"), "published_global" = COALESCE(v.published_global, t."published_global"),
      "runtime_context" = v.runtime_context, "result" = CASE WHEN v.result IS NULL THEN t."result" ELSE v.result END, "processed" = v.processed, "next_tasks" = v.next_tasks, "error_handled" = v.error_handled,
      "started_at" = v.started_at, "finished_at" = v.finished_at, "updated_at" = v.updated_at
      FROM (VALUES ${values.join(', ')}) AS v(id, state, state_info, in_context, published, published_global, runtime_context,
        result, processed, next_tasks, error_handled, started_at, finished_at, updated_at)
      WHERE t."id" = v.id RETURNING 1`);
  }
  if (changes.actionsCreated.length) {
    const taskNames = new Map<string, string>();
    for (const t of [...changes.tasksCreated, ...changes.tasksUpdated]) taskNames.set(t.id, t.name);
    const values = changes.actionsCreated.map(
      (a) =>
        `(${[
          p.add(a.id, '::uuid'),
          p.add(a.name, '::varchar'),
          p.add(a.executionId, '::uuid'),
          p.add(a.taskExecutionId, '::uuid'),
          p.add(taskNames.get(a.taskExecutionId) ?? null, '::varchar'),
          p.add(a.state, '::varchar'),
          p.add(a.stateInfo, '::text'),
          p.add(json(a.input), '::jsonb'),
          p.add(a.output === null ? null : json(a.output), '::jsonb'),
          p.add(a.accepted, '::boolean'),
          p.add(a.itemIndex, '::integer'),
          p.add(iso(a.createdAt), '::timestamptz'),
          p.add(iso(a.updatedAt), '::timestamptz'),
        ].join(', ')})`,
    );
    const wf = p.add(ex.workflowName);
    const ns = p.add(ex.workflowNamespace);
    const project = p.add(ex.projectId);
    parts.push(`INSERT INTO "action_executions" ("id", "name", "workflow_execution_id", "task_execution_id", "task_name", "state",
        "state_info", "input", "output", "accepted", "item_index", "created_at", "updated_at", "workflow_name", "workflow_namespace", "project_id")
      SELECT v.id, v.name, v.wf_ex, v.task_ex, COALESCE(v.task_name, (SELECT "name" FROM "task_executions" WHERE "id" = v.task_ex)),
        v.state, v.state_info, v.input, v.output, v.accepted, v.item_index, v.created_at, v.updated_at, ${wf}, ${ns}, ${project}
      FROM (VALUES ${values.join(', ')}) AS v(id, name, wf_ex, task_ex, task_name, state, state_info, input, output, accepted,
        item_index, created_at, updated_at)
      RETURNING 1`);
  }
  if (changes.actionsUpdated.length) {
    const values = changes.actionsUpdated.map(
      (a) =>
        `(${[
          p.add(a.id, '::uuid'),
          p.add(a.state, '::varchar'),
          p.add(a.stateInfo, '::text'),
          p.add(a.output === null ? null : json(a.output), '::jsonb'),
          p.add(a.accepted, '::boolean'),
          p.add(iso(a.updatedAt), '::timestamptz'),
        ].join(', ')})`,
    );
    parts.push(`UPDATE "action_executions" AS a SET "state" = v.state, "state_info" = v.state_info, "output" = v.output,
        "accepted" = v.accepted, "updated_at" = v.updated_at
      FROM (VALUES ${values.join(', ')}) AS v(id, state, state_info, output, accepted, updated_at)
      WHERE a."id" = v.id RETURNING 1`);
  }
  if (itemsUpdated?.length)
    parts.push(`${itemUpdateSql(p.add(itemRowsJson(itemsUpdated, false)))} RETURNING 1`);
  return parts;
}

/** Bound parameters per combined statement, under PostgreSQL's 65,535. */
const PARAMS_PER_STATEMENT = 30_000;

/** One decision's rows to write: what {@link applyChanges} takes. */
export interface DecisionRows {
  ex: WorkflowExecution;
  changes: EngineChanges;
  before?: ExecutionSnapshot;
}

/**
 * {@link applyChanges} for the decisions of several executions in one transaction (an engine's group
 * transaction): the rows of every small decision go in one statement (one round trip and one plan
 * instead of one per execution); a decision with set-based or with-items row changes, or many rows,
 * is written on its own as before. The executions' rows are disjoint, so their order does not matter.
 * `alongside`, given a binder for its values, is an SQL expression (a void function's call, e.g. the
 * history append of `executionEventsAppendCall`) evaluated exactly once in the last statement, or in
 * one of its own when there are no rows to write; null: none.
 */
export async function applyChangesOfMany(
  db: SqlRunner,
  decisions: readonly DecisionRows[],
  alongside?: (bind: (value: unknown) => string) => string | null,
): Promise<void> {
  let p = new Params();
  let parts: string[] = [];
  const flush = async (call: string | null = null): Promise<void> => {
    if (call && parts.length === 0) await db.query(`SELECT ${call}`, p.values);
    else if (parts.length === 1 && !call) await db.query(parts[0]!, p.values);
    else if (parts.length > 0) {
      const ctes = parts.map((sql, i) => `w${i} AS (${sql})`);
      // the main query reads the call's CTE: a non-modifying CTE runs only when referenced
      if (call) ctes.push(`"alongside" AS MATERIALIZED (SELECT ${call})`);
      await db.query(`WITH ${ctes.join(',\n')} SELECT 1${call ? ` FROM "alongside"` : ''}`, p.values);
    }
    p = new Params();
    parts = [];
  };
  for (const d of decisions) {
    const c = d.changes;
    const rows =
      c.tasksCreated.length + c.tasksUpdated.length + c.actionsCreated.length + c.actionsUpdated.length;
    const small = rows <= ROWS_PER_STATEMENT / 10;
    if (
      !small ||
      c.actionsUnaccepted?.length ||
      c.itemsDeleted?.length ||
      c.itemsCreated?.length ||
      c.itemsUpdated?.length
    ) {
      await applyChanges(db, d.ex, c, d.before);
      continue;
    }
    if (p.values.length > PARAMS_PER_STATEMENT) await flush();
    parts.push(
      ...rowChangeParts(p, d.ex, c, d.before ? new Map(d.before.tasks.map((t) => [t.id, t])) : undefined),
    );
  }
  await flush(alongside?.((v) => p.add(v)) ?? null);
}

/** The execution a task execution belongs to (routing a child's completion to its parent). */
export async function findExecutionIdOfTask(db: SqlRunner, taskExecutionId: string): Promise<string | null> {
  const rows: Row[] = await db.query(
    `SELECT "workflow_execution_id" FROM "task_executions" WHERE "id" = $1`,
    [taskExecutionId],
  );
  return rows[0] ? String(rows[0]['workflow_execution_id']) : null;
}
