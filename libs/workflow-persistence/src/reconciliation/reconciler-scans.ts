import { returnedRows } from '@osc/persistence';
import type { SqlRunner } from '../executions/execution-rows';

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
const parse = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

/** Key of the advisory lock that lets one reconciler pass run at a time across every replica. */
const RECONCILER_LOCK_KEY = 7_715_041_515;

/**
 * Takes the reconciler's transaction-scoped advisory lock; false when another replica's pass holds
 * it (this pass is then skipped: passes never overlap, so a resolution is decided once).
 */
export async function tryLockReconciler(db: SqlRunner): Promise<boolean> {
  const rows: Row[] = await db.query(`SELECT pg_try_advisory_xact_lock($1::bigint) AS "ok"`, [
    RECONCILER_LOCK_KEY,
  ]);
  return rows[0]?.['ok'] === true;
}

/** The database clock: heartbeats are written with it, so it is the one to judge them by. */
export async function databaseNow(db: SqlRunner): Promise<Date> {
  const rows: Row[] = await db.query(`SELECT now() AS "now"`);
  return date(rows[0]?.['now']) ?? new Date();
}

/**
 * Executions with a command or job still waiting in the outbox (not yet handed to the bus or the job
 * queue): nothing about them is stuck yet. The outbox holds only undelivered rows, so this reads a
 * handful of rows, never history.
 */
export async function executionsWithPendingOutbox(db: SqlRunner): Promise<Set<string>> {
  const rows: Row[] = await db.query(
    `SELECT DISTINCT COALESCE("payload"->'payload'->>'executionId', "payload"->'data'->>'executionId',
                              "payload"->'data'->'runs'->0->>'executionId') AS "id"
       FROM "outbox"`,
  );
  return new Set(rows.map((r) => r['id']).filter((id): id is string => typeof id === 'string' && id !== ''));
}

/** A RUNNING action claimed by an executor instance that stopped heartbeating (or is gone). */
export interface LostExecutorAction {
  readonly actionExecutionId: string;
  /** Null for a standalone run (`POST /v2/action_executions`). */
  readonly executionId: string | null;
  readonly taskExecutionId: string | null;
  readonly executorId: string;
  /** Null when the instance row is gone. */
  readonly lastHeartbeat: Date | null;
  /** The claimed job of a safe-rerun task, to enqueue again. */
  readonly rerunJob: unknown;
}

/** RUNNING actions whose executor's last heartbeat is older than `deadAfterSeconds` (partial index on executor_id). */
export async function findLostExecutorActions(
  db: SqlRunner,
  deadAfterSeconds: number,
  limit: number,
): Promise<LostExecutorAction[]> {
  const rows: Row[] = await db.query(
    `SELECT a."id", a."workflow_execution_id", a."task_execution_id", a."executor_id", a."rerun_job", s."heartbeat_at"
       FROM "action_executions" a
       LEFT JOIN "workflow_service_instances" s ON s."id" = a."executor_id"
      WHERE a."state" = 'RUNNING' AND a."executor_id" IS NOT NULL
        AND (s."id" IS NULL OR s."heartbeat_at" < now() - make_interval(secs => $1))
      ORDER BY a."claimed_at" LIMIT $2`,
    [deadAfterSeconds, limit],
  );
  return rows.map((r) => ({
    actionExecutionId: String(r['id']),
    executionId: (r['workflow_execution_id'] as string | null) ?? null,
    taskExecutionId: (r['task_execution_id'] as string | null) ?? null,
    executorId: String(r['executor_id']),
    lastHeartbeat: date(r['heartbeat_at']),
    rerunJob: parse(r['rerun_job']) ?? null,
  }));
}

/**
 * Gives a lost claim up so that a new run can claim the action afresh (safe-rerun). A compare-and-set
 * on the dead executor: false when the action moved on or was claimed again meanwhile.
 */
export async function releaseLostClaim(
  db: SqlRunner,
  actionExecutionId: string,
  executorId: string,
): Promise<boolean> {
  const rows = returnedRows<Row>(
    await db.query(
      `UPDATE "action_executions" SET "executor_id" = NULL, "claimed_at" = NULL
      WHERE "id" = $1 AND "executor_id" = $2 AND "state" = 'RUNNING' RETURNING "id"`,
      [actionExecutionId, executorId],
    ),
  );
  return rows.length > 0;
}

/**
 * Locks a RUNNING execution for a resolution, skipping it when an engine holds it (it is being worked
 * on, so it is not stuck). False when locked elsewhere or no longer RUNNING.
 */
export async function lockRunningExecution(db: SqlRunner, executionId: string): Promise<boolean> {
  const rows: Row[] = await db.query(
    `SELECT "id" FROM "workflow_executions" WHERE "id" = $1 AND "state" = 'RUNNING' FOR UPDATE SKIP LOCKED`,
    [executionId],
  );
  return rows.length > 0;
}

/**
 * Tasks RUNNING, DELAYED or WAITING in RUNNING executions, unchanged for `stuckAfterSeconds`, oldest
 * first. The scan walks the unfinished tasks' index by last change up to the cut-off
 * (IndexUnfinishedTasksByLastChange1766200000000) and looks up each candidate's execution by its
 * primary key (a subquery, not a join: joined, PostgreSQL could start from the RUNNING executions and
 * search the tasks' index once for each).
 */
export async function findStuckTaskCandidates(
  db: SqlRunner,
  stuckAfterSeconds: number,
  limit: number,
): Promise<{ taskExecutionId: string; executionId: string }[]> {
  const rows: Row[] = await db.query(
    `SELECT t."id", t."workflow_execution_id" FROM "task_executions" t
      WHERE t."state" IN ('RUNNING', 'DELAYED', 'WAITING')
        AND COALESCE(t."updated_at", t."created_at") < now() - make_interval(secs => $1)
        AND (SELECT x."state" FROM "workflow_executions" x WHERE x."id" = t."workflow_execution_id") = 'RUNNING'
      ORDER BY COALESCE(t."updated_at", t."created_at") LIMIT $2`,
    [stuckAfterSeconds, limit],
  );
  return rows.map((r) => ({
    taskExecutionId: String(r['id']),
    executionId: String(r['workflow_execution_id']),
  }));
}

/** The accepted RUNNING actions of a task, grouped by whether and by whom they were claimed. */
export interface ActionGroup {
  readonly claimed: boolean;
  /** Null for unclaimed actions and for async actions handed over to their external system. */
  readonly executorId: string | null;
  readonly lastHeartbeat: Date | null;
  readonly count: number;
  /** One of the group's actions (the oldest). */
  readonly sampleActionExecutionId: string;
  readonly itemActions: boolean;
}

/** A sub-execution a task started and still counts on. */
export interface SubExecutionFacts {
  readonly id: string;
  /** Null when the child row is gone. */
  readonly state: string | null;
  readonly output: Record<string, unknown>;
  readonly stateInfo: string | null;
}

/** What the reconciler needs to know about one task (read under its execution's row lock). */
export interface TaskFactsRow {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly type: string;
  readonly updatedAt: Date;
  readonly timer: { id: string; kind: string; dueAt: string } | null;
  readonly withItems: boolean;
  readonly actions: ActionGroup[];
  readonly subExecutions: SubExecutionFacts[];
}

export async function loadTaskFacts(db: SqlRunner, taskExecutionId: string): Promise<TaskFactsRow | null> {
  const tasks: Row[] = await db.query(
    `SELECT "id", "name", "state", "type", COALESCE("updated_at", "created_at") AS "updated_at",
            "runtime_context"->'timer' AS "timer", "runtime_context"->'sub_executions' AS "subs",
            ("runtime_context"->'with_items') IS NOT NULL AND "runtime_context"->'with_items' <> 'null'::jsonb AS "with_items"
       FROM "task_executions" WHERE "id" = $1`,
    [taskExecutionId],
  );
  const t = tasks[0];
  if (!t) return null;
  const groups: Row[] = await db.query(
    `SELECT a."claimed_at" IS NOT NULL AS "claimed", a."executor_id", max(s."heartbeat_at") AS "heartbeat_at", count(*)::int AS "n",
            (array_agg(a."id" ORDER BY a."seq"))[1] AS "sample", bool_or(a."item_index" IS NOT NULL) AS "items"
       FROM "action_executions" a LEFT JOIN "workflow_service_instances" s ON s."id" = a."executor_id"
      WHERE a."task_execution_id" = $1 AND a."accepted" AND a."state" = 'RUNNING'
      GROUP BY 1, 2`,
    [taskExecutionId],
  );
  const units = (parse<{ id: string; state: string; accepted: boolean }[] | null>(t['subs']) ?? []).filter(
    (u) => u.accepted && !['SUCCESS', 'ERROR', 'CANCELLED'].includes(u.state),
  );
  let subExecutions: SubExecutionFacts[] = [];
  if (units.length > 0) {
    const children: Row[] = await db.query(
      `SELECT "id", "state", "output", "state_info" FROM "workflow_executions" WHERE "task_execution_id" = $1`,
      [taskExecutionId],
    );
    const byId = new Map(children.map((c) => [String(c['id']), c]));
    subExecutions = units.map((u) => {
      const c = byId.get(u.id);
      return {
        id: u.id,
        state: c ? String(c['state']) : null,
        output: (c ? parse<Record<string, unknown>>(c['output']) : null) ?? {},
        stateInfo: c ? ((c['state_info'] as string | null) ?? null) : null,
      };
    });
  }
  return {
    id: String(t['id']),
    name: String(t['name']),
    state: String(t['state']),
    type: String(t['type']),
    updatedAt: date(t['updated_at']) ?? new Date(0),
    timer: parse<TaskFactsRow['timer']>(t['timer']) ?? null,
    withItems: t['with_items'] === true,
    actions: groups.map((g) => ({
      claimed: g['claimed'] === true,
      executorId: (g['executor_id'] as string | null) ?? null,
      lastHeartbeat: date(g['heartbeat_at']),
      count: Number(g['n']),
      sampleActionExecutionId: String(g['sample']),
      itemActions: g['items'] === true,
    })),
    subExecutions,
  };
}

/** What the reconciler needs to know about a RUNNING execution none of whose tasks is active. */
export interface ExecutionFactsRow {
  readonly id: string;
  readonly started: boolean;
  readonly taskCount: number;
  /** The latest change of the execution or any of its tasks. */
  readonly lastChange: Date;
}

/**
 * A RUNNING execution none of whose tasks is active. The tasks are looked at per execution, through
 * their execution's index: written as a plain `NOT EXISTS`, PostgreSQL turned it into an anti-join
 * that read the whole `task_executions` table, the finished history with it, at every pass (181 ms
 * at 500,000 task rows, growing with history).
 */
const IDLE_EXECUTION = `x."state" = 'RUNNING'
        AND NOT (SELECT EXISTS (SELECT 1 FROM "task_executions" t WHERE t."workflow_execution_id" = x."id"
                         AND (t."state" IN ('RUNNING', 'DELAYED', 'PAUSED', 'IDLE') OR t."runtime_context" ? 'timer')))`;

const EXECUTION_FACTS = `SELECT x."id", (x."context" ? '__execution') AS "started",
       (SELECT count(*)::int FROM "task_executions" t WHERE t."workflow_execution_id" = x."id") AS "tasks",
       GREATEST(COALESCE(x."updated_at", x."created_at"),
                (SELECT max(COALESCE(t."updated_at", t."created_at")) FROM "task_executions" t WHERE t."workflow_execution_id" = x."id")) AS "last_change"
     FROM "workflow_executions" x`;

const toExecutionFacts = (r: Row): ExecutionFactsRow => ({
  id: String(r['id']),
  started: r['started'] === true,
  taskCount: Number(r['tasks']),
  lastChange: date(r['last_change']) ?? new Date(0),
});

/**
 * RUNNING executions unchanged for `stuckAfterSeconds` with no active task, oldest first: the
 * RUNNING executions through their partial index, the tasks of each through their execution's index
 * — a cost that grows with the executions running, not with the history.
 */
export async function findIdleRunningExecutions(
  db: SqlRunner,
  stuckAfterSeconds: number,
  limit: number,
): Promise<ExecutionFactsRow[]> {
  const rows: Row[] = await db.query(
    `${EXECUTION_FACTS}
      WHERE ${IDLE_EXECUTION} AND COALESCE(x."updated_at", x."created_at") < now() - make_interval(secs => $1)
      ORDER BY COALESCE(x."updated_at", x."created_at") LIMIT $2`,
    [stuckAfterSeconds, limit],
  );
  return rows.map(toExecutionFacts);
}

/** {@link findIdleRunningExecutions} for one execution, read again under its row lock. */
export async function loadIdleExecutionFacts(
  db: SqlRunner,
  executionId: string,
): Promise<ExecutionFactsRow | null> {
  const rows: Row[] = await db.query(`${EXECUTION_FACTS} WHERE x."id" = $1 AND ${IDLE_EXECUTION}`, [
    executionId,
  ]);
  return rows[0] ? toExecutionFacts(rows[0]) : null;
}

/**
 * Claims an action that no executor picked up on the reconciler's behalf before failing it, so a job
 * delivered late finds it claimed and does not start it (DSL-6.10). False when an executor claimed it.
 */
export async function claimUnpickedAction(db: SqlRunner, actionExecutionId: string): Promise<boolean> {
  const rows = returnedRows<Row>(
    await db.query(
      `UPDATE "action_executions" SET "claimed_at" = now()
      WHERE "id" = $1 AND "claimed_at" IS NULL AND "state" = 'RUNNING' RETURNING "id"`,
      [actionExecutionId],
    ),
  );
  return rows.length > 0;
}
