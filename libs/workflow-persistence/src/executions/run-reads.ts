import { EXECUTION_EVENTS_CHANNEL } from './execution-events';
import type { SqlRunner } from './execution-rows';

/**
 * The workflow API's reads and small writes of the run-time tables (workflow, task and action
 * executions): GETs, the rows a PUT checks, the polls that wait for the engine, deletes and the
 * execution report's tree walk. Rows come back raw (column names, driver types); the API maps them.
 */
export type RunRow = Record<string, unknown>;

/**
 * Whose rows a lookup sees: the caller's project, or every project's (null, admins). Ids are UUID
 * text in PostgreSQL's output form, checked by the caller: `"id" = $1::uuid` uses the primary key.
 */
export type RunOwner = string | null;

const byIdOf = (owner: RunOwner): string => (owner === null ? '' : 'AND "project_id" = $2');
const paramsOf = (id: string, owner: RunOwner): unknown[] => (owner === null ? [id] : [id, owner]);

/** `SELECT *` of one row by primary key, as `owner` may see it. */
async function findVisibleRow(
  db: SqlRunner,
  table: 'workflow_executions' | 'task_executions' | 'action_executions',
  id: string,
  owner: RunOwner,
  options: { readonly condition?: string; readonly lock?: boolean } = {},
): Promise<RunRow | undefined> {
  const rows: RunRow[] = await db.query(
    `SELECT * FROM "${table}" WHERE "id" = $1::uuid ${options.condition ?? ''}${byIdOf(owner)}${options.lock ? ' FOR UPDATE' : ''}`,
    paramsOf(id, owner),
  );
  return rows[0];
}

/** A workflow execution visible to `owner`; `lock` takes its row lock (inside a transaction). */
export const findWorkflowExecutionRow = (
  db: SqlRunner,
  id: string,
  owner: RunOwner,
  lock = false,
): Promise<RunRow | undefined> => findVisibleRow(db, 'workflow_executions', id, owner, { lock });

/** A task execution visible to `owner`. */
export const findTaskExecutionRow = (
  db: SqlRunner,
  id: string,
  owner: RunOwner,
): Promise<RunRow | undefined> => findVisibleRow(db, 'task_executions', id, owner);

/**
 * An action execution visible to `owner`; transient rows (a synchronous standalone run whose result
 * is not kept) are never visible.
 */
export const findActionExecutionRow = (
  db: SqlRunner,
  id: string,
  owner: RunOwner,
): Promise<RunRow | undefined> =>
  findVisibleRow(db, 'action_executions', id, owner, { condition: 'AND NOT "transient" ' });

/** Any action execution by id, transient ones included (the API waiting for its own standalone run). */
export async function readActionExecutionRow(db: SqlRunner, id: string): Promise<RunRow | undefined> {
  const rows: RunRow[] = await db.query(`SELECT * FROM "action_executions" WHERE "id" = $1`, [id]);
  return rows[0];
}

/** The `state` of one row by primary key (polls), undefined when gone; `lock` takes its row lock. */
async function readStateOf(
  db: SqlRunner,
  table: 'workflow_executions' | 'action_executions',
  id: string,
  lock = false,
): Promise<string | undefined> {
  const rows: { state: string }[] = await db.query(
    `SELECT "state" FROM "${table}" WHERE "id" = $1${lock ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0]?.state;
}

/** The state of a workflow execution (one primary-key read, for polls), undefined when gone. */
export const readWorkflowExecutionState = (db: SqlRunner, id: string): Promise<string | undefined> =>
  readStateOf(db, 'workflow_executions', id);

/**
 * Takes the execution's row lock (the engine holds the same lock while it decides) and returns its
 * state; undefined when gone.
 */
export const lockWorkflowExecutionState = (db: SqlRunner, id: string): Promise<string | undefined> =>
  readStateOf(db, 'workflow_executions', id, true);

/** A task's state and last update (polled while the engine applies a rerun or skip). */
export async function readTaskExecutionProgress(
  db: SqlRunner,
  id: string,
): Promise<{ state: string; updated_at: unknown } | undefined> {
  const rows: { state: string; updated_at: unknown }[] = await db.query(
    `SELECT "state", "updated_at" FROM "task_executions" WHERE "id" = $1`,
    [id],
  );
  return rows[0];
}

/** The state of an action execution (polled while the engine applies a PUT). */
export const readActionExecutionState = (db: SqlRunner, id: string): Promise<string | undefined> =>
  readStateOf(db, 'action_executions', id);

/**
 * Marks a task in ERROR as claimed by the control command `commandId` (rerun or skip), under the
 * runtime-context key `key`, unless another command claimed it already; whether this call claimed
 * it. The engine clears the claim when it handles the command.
 */
export async function claimTaskForControl(
  db: SqlRunner,
  taskId: string,
  key: string,
  commandId: string,
): Promise<boolean> {
  const claimed: unknown[] = await db.query(
    `WITH claim AS (UPDATE "task_executions" SET "runtime_context" = "runtime_context" || jsonb_build_object($2::text, $3::text)
          WHERE "id" = $1 AND "state" = 'ERROR' AND "runtime_context" -> $2::text IS NULL RETURNING "id") SELECT "id" FROM claim`,
    [taskId, key, commandId],
  );
  return claimed.length > 0;
}

/** Deletes one action execution row. */
export async function deleteActionExecution(db: SqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "action_executions" WHERE "id" = $1`, [id]);
}

/** `PUT /v2/executions/{id}` with a description. */
export async function setWorkflowExecutionDescription(
  db: SqlRunner,
  id: string,
  description: string,
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE "workflow_executions" SET "description" = $2, "updated_at" = $3::timestamptz WHERE "id" = $1`,
    [id, description, now.toISOString()],
  );
}

/** Replaces an execution's params (an env update, under the execution's row lock). */
export async function setWorkflowExecutionParams(
  db: SqlRunner,
  id: string,
  params: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await db.query(
    `UPDATE "workflow_executions" SET "params" = $2::jsonb, "updated_at" = $3::timestamptz WHERE "id" = $1`,
    [id, JSON.stringify(params), now.toISOString()],
  );
}

/**
 * Deletes an execution and every sub-execution of its tree (their tasks and actions go with them
 * through the foreign keys); the history is deleted first by `deleteExecutionHistory`.
 */
export async function deleteWorkflowExecutionTree(db: SqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "workflow_executions" WHERE "root_execution_id" = $1`, [id]);
  await db.query(`DELETE FROM "workflow_executions" WHERE "id" = $1`, [id]);
}

/** The sub-workflow executions a task started, oldest first. */
export async function listSubExecutionsOfTask(db: SqlRunner, taskId: unknown): Promise<RunRow[]> {
  return db.query(
    `SELECT * FROM "workflow_executions" WHERE "task_execution_id" = $1 ORDER BY "created_at", "seq"`,
    [taskId],
  );
}

/** Id and state of an execution's sub-workflow tasks, in creation order. */
export async function listWorkflowTasksOfExecution(
  db: SqlRunner,
  executionId: unknown,
): Promise<{ id: string; state: string }[]> {
  return db.query(
    `SELECT "id", "state" FROM "task_executions" WHERE "workflow_execution_id" = $1 AND "type" = 'WORKFLOW' ORDER BY "seq"`,
    [executionId],
  );
}

/** Every task of an execution, in creation order. */
export async function listTasksOfExecution(db: SqlRunner, executionId: unknown): Promise<RunRow[]> {
  return db.query(`SELECT * FROM "task_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`, [
    executionId,
  ]);
}

/** Every action execution of a task, in creation order. */
export async function listActionsOfTask(db: SqlRunner, taskId: unknown): Promise<RunRow[]> {
  return db.query(`SELECT * FROM "action_executions" WHERE "task_execution_id" = $1 ORDER BY "seq"`, [
    taskId,
  ]);
}

/** Creation and last update of up to `limit` earliest successful executions of a workflow. */
export async function listSuccessfulRunTimes(
  db: SqlRunner,
  workflowId: unknown,
  limit: number,
): Promise<{ created_at: unknown; updated_at: unknown }[]> {
  return db.query(
    `SELECT "created_at", "updated_at" FROM "workflow_executions" WHERE "workflow_id" = $1 AND "state" = 'SUCCESS' ORDER BY "created_at", "seq" LIMIT ${Math.trunc(limit)}`,
    [workflowId],
  );
}

/** Subscribes a dedicated connection to the engines' history announcements (`NOTIFY`). */
export async function listenForExecutionEvents(connection: SqlRunner): Promise<void> {
  await connection.query(`LISTEN ${EXECUTION_EVENTS_CHANNEL}`);
}

/**
 * Registers (or keeps registered) a listening process for `ttlSeconds`: engines announce history
 * with NOTIFY only while an unexpired registration exists (AnnounceOnlyToListeners1766100000000).
 * Runs on its own (committed when it returns). Returns the transactions in progress right after it
 * committed (64-bit ids as text): one that announced nothing because it checked before the
 * registration is among them, so a listener reads again once {@link stillRunning} finds none left.
 * Registrations expired for a minute are removed on the way.
 */
export async function registerStreamListener(
  db: SqlRunner,
  listenerId: string,
  ttlSeconds: number,
): Promise<string[]> {
  await db.query(
    `WITH "gone" AS (DELETE FROM "execution_stream_listeners" WHERE "expires_at" < now() - interval '1 minute')
     INSERT INTO "execution_stream_listeners" ("id", "expires_at") VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT ("id") DO UPDATE SET "expires_at" = EXCLUDED."expires_at"`,
    [listenerId, ttlSeconds],
  );
  const rows: { x: string }[] = await db.query(
    `SELECT "x"::text AS "x" FROM pg_snapshot_xip(pg_current_snapshot()) AS "x"`,
  );
  return rows.map((r) => r.x);
}

/** Of these transactions (64-bit ids as text), those still in progress. */
export async function stillRunning(db: SqlRunner, xids: readonly string[]): Promise<string[]> {
  if (xids.length === 0) return [];
  const rows: { x: string }[] = await db.query(
    `SELECT "x"::text AS "x" FROM unnest($1::xid8[]) AS "x" WHERE pg_xact_status("x") = 'in progress'`,
    [xids],
  );
  return rows.map((r) => r.x);
}

/** Ends a listener's registration: engines stop announcing once no other is left. */
export async function unregisterStreamListener(db: SqlRunner, listenerId: string): Promise<void> {
  await db.query(`DELETE FROM "execution_stream_listeners" WHERE "id" = $1`, [listenerId]);
}

/** Ends every subscription of a connection before it goes back to the pool. */
export async function stopListening(connection: SqlRunner): Promise<void> {
  await connection.query(`UNLISTEN *`);
}
