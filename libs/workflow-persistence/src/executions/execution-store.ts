/**
 * The writes of a decision: task, action and item rows and the execution row, one decision or a group
 * of them per statement.
 */
import {
  type EngineChanges,
  type ItemsRequest,
  type LoadedItems,
  type ExecutionSnapshot,
  type TaskExecution,
  type TaskItem,
  type WorkflowExecution,
} from '@osc/workflow-domain';
import { ROWS_AS_VALUES, type RowColumn, rowSource, unnestOf, valuesOf } from '@osc/persistence';
import { Params, type Row, type SqlRunner, iso, json, parse } from './execution-rows';
import { executeBuilt, transactionBatchRunner } from './prepared-statements';

/** Values (array elements) per row at most (a created task's), and of an execution's update. */
const VALUES_PER_ROW = 23;
const VALUES_PER_EXECUTION = 9;

/** Rows per statement: bounds a statement's size (each row {@link VALUES_PER_ROW} values at most). */
const ROWS_PER_STATEMENT = 2000;

/** The task, action row inserts and updates of a decision. */
const rowCount = (c: EngineChanges): number =>
  c.tasksCreated.length + c.tasksUpdated.length + c.actionsCreated.length + c.actionsUpdated.length;

/** The snapshot's task rows by id (what the row writes compare against). */
const tasksById = (snapshot: ExecutionSnapshot | undefined): Map<string, TaskExecution> | undefined =>
  snapshot ? new Map(snapshot.tasks.map((t) => [t.id, t])) : undefined;

/**
 * Sends data-modifying statements as one (CTEs of a statement when there are several) with their
 * values; `call`, an SQL expression evaluated exactly once (in a CTE of its own, or alone). In a
 * transaction whose connection runs statement batches, the statement is prepared once per session
 * and run with a generic plan (`executeBuilt`): planning it afresh had cost about a quarter as much
 * as running it.
 */
async function sendParts(
  db: SqlRunner,
  parts: readonly string[],
  values: unknown[],
  call: string | null = null,
): Promise<void> {
  let text: string;
  if (call && parts.length === 0) text = `SELECT ${call}`;
  else if (parts.length === 1 && !call) text = parts[0]!;
  else if (parts.length > 0) {
    const ctes = parts.map((sql, i) => `w${i} AS (${sql})`);
    // the main query reads the call's CTE: a non-modifying CTE runs only when referenced
    if (call) ctes.push(`"alongside" AS MATERIALIZED (SELECT ${call})`);
    text = `WITH ${ctes.join(',\n')} SELECT 1${call ? ` FROM "alongside"` : ''}`;
  } else return;
  const client = transactionBatchRunner(db);
  if (!client || !(await executeBuilt(client, text, values))) await db.query(text, values);
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
    tasksById(before),
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
  // A large with-items decision (10,000 actions created) is written as the execution and task rows
  // first, then the actions in chunks of ROWS_PER_STATEMENT: no statement grows without bound.
  if (rowCount(changes) > ROWS_PER_STATEMENT) {
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
  await sendParts(db, rowChangeParts(p, [{ ex, changes, before }], itemsUpdated), p.values);
}

/** One execution's row changes: the decision's, and its task rows as loaded (see {@link applyChanges}). */
interface RowChanges {
  ex: WorkflowExecution;
  changes: EngineChanges;
  before?: ReadonlyMap<string, TaskExecution> | undefined;
}

type CreatedTask = { t: TaskExecution; ex: WorkflowExecution };
/** A created task's columns, named as in the table (the insert takes them in this order). */
const TASK_INSERT: readonly RowColumn<CreatedTask>[] = [
  ['id', 'uuid', ({ t }) => t.id],
  ['name', 'varchar', ({ t }) => t.name],
  ['workflow_execution_id', 'uuid', ({ t }) => t.executionId],
  ['workflow_id', 'varchar', ({ ex }) => ex.workflowId],
  ['workflow_name', 'varchar', ({ ex }) => ex.workflowName],
  ['workflow_namespace', 'varchar', ({ ex }) => ex.workflowNamespace],
  ['project_id', 'varchar', ({ ex }) => ex.projectId],
  ['type', 'varchar', ({ t }) => t.type],
  ['tags', 'jsonb', ({ t }) => json(t.tags)],
  ['state', 'varchar', ({ t }) => t.state],
  ['state_info', 'text', ({ t }) => t.stateInfo],
  ['in_context', 'jsonb', ({ t }) => json(t.inContext)],
  ['published', 'jsonb', ({ t }) => json(t.published)],
  ['published_global', 'jsonb', ({ t }) => json(t.publishedGlobal)],
  ['runtime_context', 'jsonb', ({ t }) => json(t.runtimeContext)],
  ['result', 'jsonb', ({ t }) => json(t.result)],
  ['processed', 'boolean', ({ t }) => t.processed],
  ['next_tasks', 'jsonb', ({ t }) => json(t.nextTasks)],
  ['error_handled', 'boolean', ({ t }) => t.errorHandled],
  ['started_at', 'timestamptz', ({ t }) => iso(t.startedAt)],
  ['finished_at', 'timestamptz', ({ t }) => iso(t.finishedAt)],
  ['created_at', 'timestamptz', ({ t }) => iso(t.createdAt)],
  ['updated_at', 'timestamptz', ({ t }) => iso(t.updatedAt)],
];

/**
 * The data-modifying statements of the rows of one or more executions' decisions, their values bound
 * in `p`: at most one statement per kind of change (execution updates, task inserts, task updates,
 * action inserts, action updates) whatever the number of executions, each binding its rows
 * as `rowSource` does. Rows keep their order within each kind (a sequence numbers
 * inserted rows in that order; `VALUES` and `unnest` yield them in order).
 */
function rowChangeParts(
  p: Params,
  members: readonly RowChanges[],
  itemsUpdated?: readonly Omit<TaskItem, 'vars'>[],
): string[] {
  const parts: string[] = [];
  const executions = members.flatMap((m) => (m.changes.execution ? [m.changes.execution] : []));
  if (executions.length) {
    const v = rowSource(
      executions,
      [
        ['id', 'uuid', (e) => e.id],
        ['state', 'varchar', (e) => e.state],
        ['state_info', 'text', (e) => e.stateInfo],
        ['output', 'jsonb', (e) => json(e.output)],
        ['params', 'jsonb', (e) => json(e.params)],
        ['context', 'jsonb', (e) => json(e.context)],
        ['var_names', 'jsonb', (e) => json(e.varNames)],
        ['deferred', 'jsonb', (e) => json(e.deferred)],
        ['updated_at', 'timestamptz', (e) => iso(e.updatedAt)],
      ],
      p.bind,
    );
    parts.push(`UPDATE "workflow_executions" AS e SET "state" = v.state, "state_info" = v.state_info, "output" = v.output,
      "params" = v.params, "context" = v.context, "var_names" = v.var_names, "deferred" = v.deferred, "updated_at" = v.updated_at
      FROM ${v} WHERE e."id" = v.id RETURNING 1`);
  }
  const tasksCreated = members.flatMap((m) => m.changes.tasksCreated.map((t) => ({ t, ex: m.ex })));
  if (tasksCreated.length) {
    parts.push(
      `INSERT INTO "task_executions" (${TASK_INSERT.map(([name]) => `"${name}"`).join(', ')}) ${
        // a few rows as the insert's own VALUES: planned a little faster than a subquery's
        tasksCreated.length <= ROWS_AS_VALUES
          ? valuesOf(tasksCreated, TASK_INSERT, p.bind)
          : `SELECT * FROM ${unnestOf(tasksCreated, TASK_INSERT, p.bind)}`
      } RETURNING 1`,
    );
  }
  const tasksUpdated = members.flatMap((m) => m.changes.tasksUpdated.map((t) => ({ t, before: m.before })));
  if (tasksUpdated.length) {
    type Updated = (typeof tasksUpdated)[number];
    // null: unchanged, the column keeps its value
    const changed =
      (k: 'inContext' | 'published' | 'publishedGlobal' | 'result') =>
      ({ t, before }: Updated): string | null => {
        const old = before?.get(t.id);
        return old && old[k] === t[k] && typeof t[k] === 'object' && t[k] !== null ? null : json(t[k]);
      };
    const v = rowSource(
      tasksUpdated,
      [
        ['id', 'uuid', ({ t }) => t.id],
        ['state', 'varchar', ({ t }) => t.state],
        ['state_info', 'text', ({ t }) => t.stateInfo],
        ['in_context', 'jsonb', changed('inContext')],
        ['published', 'jsonb', changed('published')],
        ['published_global', 'jsonb', changed('publishedGlobal')],
        ['runtime_context', 'jsonb', ({ t }) => json(t.runtimeContext)],
        ['result', 'jsonb', changed('result')],
        ['processed', 'boolean', ({ t }) => t.processed],
        ['next_tasks', 'jsonb', ({ t }) => json(t.nextTasks)],
        ['error_handled', 'boolean', ({ t }) => t.errorHandled],
        ['started_at', 'timestamptz', ({ t }) => iso(t.startedAt)],
        ['finished_at', 'timestamptz', ({ t }) => iso(t.finishedAt)],
        ['updated_at', 'timestamptz', ({ t }) => iso(t.updatedAt)],
      ],
      p.bind,
    );
    parts.push(`UPDATE "task_executions" AS t SET "state" = v.state, "state_info" = v.state_info, "in_context" = COALESCE(v.in_context, t."in_context"),
      "published" = COALESCE(v.published, t."published"), "published_global" = COALESCE(v.published_global, t."published_global"),
      "runtime_context" = v.runtime_context, "result" = CASE WHEN v.result IS NULL THEN t."result" ELSE v.result END, "processed" = v.processed, "next_tasks" = v.next_tasks, "error_handled" = v.error_handled,
      "started_at" = v.started_at, "finished_at" = v.finished_at, "updated_at" = v.updated_at
      FROM ${v} WHERE t."id" = v.id RETURNING 1`);
  }
  const actionsCreated = members.flatMap((m) => m.changes.actionsCreated.map((a) => ({ a, ex: m.ex })));
  if (actionsCreated.length) {
    const taskNames = new Map<string, string>();
    for (const m of members)
      for (const t of [...m.changes.tasksCreated, ...m.changes.tasksUpdated]) taskNames.set(t.id, t.name);
    const v = rowSource(
      actionsCreated,
      [
        ['id', 'uuid', ({ a }) => a.id],
        ['name', 'varchar', ({ a }) => a.name],
        ['wf_ex', 'uuid', ({ a }) => a.executionId],
        ['task_ex', 'uuid', ({ a }) => a.taskExecutionId],
        ['task_name', 'varchar', ({ a }) => taskNames.get(a.taskExecutionId) ?? null],
        ['state', 'varchar', ({ a }) => a.state],
        ['state_info', 'text', ({ a }) => a.stateInfo],
        ['input', 'jsonb', ({ a }) => json(a.input)],
        ['output', 'jsonb', ({ a }) => (a.output === null ? null : json(a.output))],
        ['accepted', 'boolean', ({ a }) => a.accepted],
        ['item_index', 'integer', ({ a }) => a.itemIndex],
        ['created_at', 'timestamptz', ({ a }) => iso(a.createdAt)],
        ['updated_at', 'timestamptz', ({ a }) => iso(a.updatedAt)],
        ['wf', 'varchar', ({ ex }) => ex.workflowName],
        ['ns', 'varchar', ({ ex }) => ex.workflowNamespace],
        ['project', 'varchar', ({ ex }) => ex.projectId],
      ],
      p.bind,
    );
    parts.push(`INSERT INTO "action_executions" ("id", "name", "workflow_execution_id", "task_execution_id", "task_name", "state",
        "state_info", "input", "output", "accepted", "item_index", "created_at", "updated_at", "workflow_name", "workflow_namespace", "project_id")
      SELECT v.id, v.name, v.wf_ex, v.task_ex, COALESCE(v.task_name, (SELECT "name" FROM "task_executions" WHERE "id" = v.task_ex)),
        v.state, v.state_info, v.input, v.output, v.accepted, v.item_index, v.created_at, v.updated_at, v.wf, v.ns, v.project
      FROM ${v} RETURNING 1`);
  }
  const actionsUpdated = members.flatMap((m) => m.changes.actionsUpdated);
  if (actionsUpdated.length) {
    const v = rowSource(
      actionsUpdated,
      [
        ['id', 'uuid', (a) => a.id],
        ['state', 'varchar', (a) => a.state],
        ['state_info', 'text', (a) => a.stateInfo],
        ['output', 'jsonb', (a) => (a.output === null ? null : json(a.output))],
        ['accepted', 'boolean', (a) => a.accepted],
        ['updated_at', 'timestamptz', (a) => iso(a.updatedAt)],
      ],
      p.bind,
    );
    parts.push(`UPDATE "action_executions" AS a SET "state" = v.state, "state_info" = v.state_info, "output" = v.output,
        "accepted" = v.accepted, "updated_at" = v.updated_at
      FROM ${v} WHERE a."id" = v.id RETURNING 1`);
  }
  if (itemsUpdated?.length)
    parts.push(`${itemUpdateSql(p.add(itemRowsJson(itemsUpdated, false)))} RETURNING 1`);
  return parts;
}

/** Values per combined statement (the rows' arrays' elements): bounds its size. */
const VALUES_PER_STATEMENT = 30_000;

/** One decision's rows to write: what {@link applyChanges} takes. */
export interface DecisionRows {
  ex: WorkflowExecution;
  changes: EngineChanges;
  before?: ExecutionSnapshot;
}

/**
 * {@link applyChanges} for the decisions of several executions in one transaction (an engine's group
 * transaction): the rows of every small decision go in one statement (one round trip and one plan
 * instead of one per execution), each kind of row change of them all in one part of it
 * ({@link rowChangeParts}); a decision with set-based or with-items row changes, or many rows,
 * is written on its own as before. The executions' rows are disjoint, so their order does not matter.
 * `alongside`, given a binder for its values, is an SQL expression (a void function's call, e.g. the
 * history append of `executionEventsAppendCall`) evaluated exactly once in the last statement, or in
 * one of its own when there are no rows to write; null: none. `writes`, given the same binder (called
 * after `alongside`, right before the last statement is sent), are data-modifying statements of other
 * tables (e.g. the group's outbox rows, `OutboxWriter.addAlong`) that run as CTEs of that last
 * statement (or as one of their own when there is nothing else to write): they must not touch the
 * rows written here, since all the statement's parts see the same snapshot. Their parameters come on
 * top of the rows' (a few hundred at most, see `rowSource`): keep them under ~60,000 (PostgreSQL
 * binds 65,535 at most).
 */
export async function applyChangesOfMany(
  db: SqlRunner,
  decisions: readonly DecisionRows[],
  alongside?: (bind: (value: unknown) => string) => string | null,
  writes?: (bind: (value: unknown) => string) => readonly string[],
): Promise<void> {
  let pending: RowChanges[] = [];
  let pendingValues = 0;
  /** The pending rows in one statement; the last one also carries `alongside` and `writes`. */
  const flush = async (last: boolean): Promise<void> => {
    const p = new Params();
    const parts = rowChangeParts(p, pending);
    pending = [];
    pendingValues = 0;
    const call = last ? (alongside?.(p.bind) ?? null) : null;
    await sendParts(db, [...parts, ...(last ? (writes?.(p.bind) ?? []) : [])], p.values, call);
  };
  for (const d of decisions) {
    const c = d.changes;
    const rows = rowCount(c);
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
    const values = rows * VALUES_PER_ROW + (c.execution ? VALUES_PER_EXECUTION : 0);
    if (pending.length > 0 && pendingValues + values > VALUES_PER_STATEMENT) await flush(false);
    pending.push({ ex: d.ex, changes: c, before: tasksById(d.before) });
    pendingValues += values;
  }
  await flush(true);
}

/** The execution a task execution belongs to (routing a child's completion to its parent). */
export async function findExecutionIdOfTask(db: SqlRunner, taskExecutionId: string): Promise<string | null> {
  const rows: Row[] = await db.query(
    `SELECT "workflow_execution_id" FROM "task_executions" WHERE "id" = $1`,
    [taskExecutionId],
  );
  return rows[0] ? String(rows[0]['workflow_execution_id']) : null;
}
