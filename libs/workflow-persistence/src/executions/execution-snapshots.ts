/**
 * An execution's snapshot: its row locked and everything `decide` needs loaded, with the specs and
 * large inputs engines keep across commands.
 */
import {
  type ExecutionSnapshot,
  type ExpressionWorld,
  type SubExecutionRef,
  type WorkflowSpec,
  usesQueryFunctions,
} from '@osc/workflow-domain';
import {
  GENERIC_PLANS,
  type PreparedStatement,
  type StatementBatchRunner,
  USUAL_PLANS,
  executeStatement,
  prepareStatements,
} from './prepared-statements';
import {
  EXECUTION_COLUMNS,
  type Row,
  type SqlRunner,
  parse,
  toActionExecution,
  toTaskExecution,
  toWorkflowExecution,
} from './execution-rows';

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
 * Locks the execution row (`SELECT … FOR UPDATE`) and loads everything `decide` needs. Every engine
 * command of one execution runs under this lock, so decisions are serialised per execution across
 * any number of engine processes. Null when the execution does not exist (deleted). *
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
  const locked: Row[] = await db.query(LOCK_SQL, lockArgs(ids, specs));
  if (locked.length === 0) return new Map();
  const loaded: Row[] = await db.query(
    LOAD_SQL,
    loadArgs(
      locked.map((r) => String(r['id'])),
      actionIds,
    ),
  );
  return toSnapshots(db, specs, locked, loaded);
}

/**
 * {@link lockSnapshots} in one round trip: the lock and the load travel together as two statements of
 * one simple query, after START TRANSACTION with `begin` (`opened` is called once the transaction is
 * open). Each statement of a simple query takes its own snapshot under READ COMMITTED, so the load
 * still sees every commit made before the lock was granted. `loads` runs any further read the
 * snapshots need (the expression world). The simple protocol binds no values: ids and JSON are written
 * into the text as literals escaped by the connection.
 *
 * Both statements are prepared once per session and run by `EXECUTE` with generic plans that read by
 * index (`prepared-statements.ts`): planning the load had cost more than running it (its actions part,
 * ~0.7 ms of planning and ~0.3 ms of execution for a group of three executions).
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
  await prepareStatements(client, SNAPSHOT_STATEMENTS);
  const text = [
    ...(options.begin ? ['START TRANSACTION'] : []),
    ...GENERIC_PLANS,
    executeStatement(LOCK_STATEMENT, lockArgs(ids, specs)),
    executeStatement(LOAD_STATEMENT, loadArgs(ids, actionIds)),
    ...USUAL_PLANS,
  ].join(';\n');
  const results = (await client.query(text)) as { rows: Row[] }[];
  options.opened?.();
  const skipped = (options.begin ? 1 : 0) + GENERIC_PLANS.length;
  const [locked, loaded] = results.slice(skipped).map((r) => r.rows);
  if (!locked || locked.length === 0) return new Map();
  return toSnapshots(loads, specs, locked, loaded ?? []);
}

const LOCK_STATEMENT = 'osc_snapshot_lock';
const LOAD_STATEMENT = 'osc_snapshot_load';

/** {@link LOCK_SQL}'s values: the ids, those whose spec is not cached, those whose input is not. */
const lockArgs = (ids: readonly string[], specs: SpecCache): string[][] => [
  [...ids],
  ids.filter((id) => !specs.get(id)),
  ids.filter((id) => !specs.getInput(id)),
];

/** {@link LOAD_SQL}'s values: the ids, and per execution the actions its events name and fail. */
const loadArgs = (
  ids: readonly string[],
  actionIds: ReadonlyMap<string, readonly string[] | NamedActions>,
): (string | string[])[] => {
  const named = ids.map((id) => [id, namedParams(actionIds.get(id) ?? [])] as const);
  return [
    [...ids],
    JSON.stringify(Object.fromEntries(named.map(([id, n]) => [id, n.ids]))),
    JSON.stringify(Object.fromEntries(named.map(([id, n]) => [id, n.failing]))),
  ];
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
 * Plain tasks' action rows (but not the successful ones of tasks that succeeded: nothing decides on
 * them again, and loading them made every transaction of a sequence of n tasks read all the earlier
 * ones, n²/2 rows over the execution), those in ERROR and those named by $2 (a JSON array of ids, found by their
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
         AND NOT (a."state" = 'SUCCESS' AND a."task_execution_id" = ANY(ARRAY(
           SELECT t."id" FROM "task_executions" t WHERE t."workflow_execution_id" = $1 AND t."state" = 'SUCCESS')))
      UNION ALL
      SELECT a.* FROM "action_executions" a
       WHERE a."id" = ANY(ARRAY(SELECT (jsonb_array_elements_text($2::jsonb))::uuid)) AND (a."workflow_execution_id" = $1) IS TRUE
         AND a."item_index" IS NOT NULL AND a."state" <> 'ERROR'),
    ord AS (
      SELECT "id", row_number() OVER (PARTITION BY "task_execution_id" ORDER BY "seq") - 1 AS "ordinal" FROM "action_executions"
       WHERE "task_execution_id" IN (
         SELECT "task_execution_id" FROM sel WHERE "item_index" IS NOT NULL AND ("state" = 'ERROR' OR jsonb_exists($3::jsonb, "id"::text))))
    SELECT sel.*, ord."ordinal" FROM sel LEFT JOIN ord ON ord."id" = sel."id") a`;

/**
 * Locks the execution rows of `$1` in id order and reads their columns: the spec only for those in
 * `$2`, the input only for those in `$3` (the others' are cached).
 */
const LOCK_SQL = `SELECT ${lockedColumns('$2', '$3')} FROM "workflow_executions" WHERE "id" = ANY($1::uuid[]) ORDER BY "id" FOR UPDATE`;

/**
 * Reads the tasks, the needed actions and the sub-executions of each execution of `$1`; `$2` and
 * `$3` map each execution's id to the action ids its events name and fail ({@link NEEDED_ACTIONS}).
 */
const LOAD_SQL = `SELECT x."id",
       (SELECT COALESCE(json_agg(t ORDER BY t."seq"), '[]') FROM "task_executions" t WHERE t."workflow_execution_id" = x."id") AS "tasks",
       (${NEEDED_ACTIONS.replaceAll('$1', 'x."id"')
         .replaceAll('$2::jsonb', '($2::jsonb -> x."id"::text)')
         .replaceAll('$3::jsonb', '($3::jsonb -> x."id"::text)')}) AS "actions",
       (SELECT COALESCE(json_agg(json_build_object('id', s."id", 'task_execution_id', s."task_execution_id", 'state', s."state")), '[]')
          FROM "workflow_executions" s WHERE s."parent_execution_id" = x."id") AS "subs"
     FROM unnest($1::uuid[]) AS x("id")`;

/** The lock and load, prepared on each session for {@link lockSnapshotsAtOnce}. */
const SNAPSHOT_STATEMENTS: readonly PreparedStatement[] = [
  { name: LOCK_STATEMENT, text: LOCK_SQL },
  { name: LOAD_STATEMENT, text: LOAD_SQL },
];
