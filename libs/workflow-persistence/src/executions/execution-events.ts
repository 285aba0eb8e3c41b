import { EventEmitter } from 'node:events';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { HistoryEvent, WorkflowExecution } from '@osc/workflow-domain';

/** Anything that runs SQL (a transaction's EntityManager, a DataSource). */
interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** The PostgreSQL channel on which engines announce new history entries (payload: `{"p": project, "r": root}`). */
export const EXECUTION_EVENTS_CHANNEL = 'osc_execution_events';

/**
 * Announcements of new history entries inside this process, emitted after the engine's commit (event
 * `events` with `{ projectId, rootExecutionId }`). Embedded mode has no other way to hear them; in
 * distributed mode they also arrive over PostgreSQL NOTIFY from engines in other processes.
 */
export const localExecutionEvents = new EventEmitter().setMaxListeners(0);

export interface ExecutionEventSignal {
  readonly projectId: string;
  readonly rootExecutionId: string;
}

/** A stored history entry as the API shows it (our extension of the Mistral API). */
export interface StoredExecutionEvent {
  seq: number;
  root_execution_id: string;
  execution_id: string;
  subject: string;
  task_execution_id: string | null;
  action_execution_id: string | null;
  name: string;
  state: string;
  previous_state: string | null;
  state_info: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

/**
 * Appends history entries of one execution tree in the caller's transaction, numbered from the
 * tree's counter (one row per root execution, locked until commit, so entries of a tree commit in
 * sequence order and a reader resuming after `seq` never misses a later-committing smaller one),
 * and announces them with NOTIFY (delivered at commit). Returns how many were written.
 */
export async function appendExecutionEvents(db: SqlRunner, ex: Pick<WorkflowExecution, 'id' | 'rootExecutionId' | 'projectId'>, events: readonly HistoryEvent[], now: Date): Promise<number> {
  if (events.length === 0) return 0;
  const root = ex.rootExecutionId ?? ex.id;
  const rows = events.map((e) => ({
    x: e.executionId,
    s: e.subject,
    t: e.taskExecutionId,
    a: e.actionExecutionId,
    n: e.name,
    st: e.state,
    ps: e.previousState,
    si: e.stateInfo,
    d: e.details,
  }));
  // one statement: the counter, the rows and the announcement (NOTIFY is delivered at commit)
  await db.query(
    `WITH "c" AS (
       INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq") VALUES ($1, $2)
       ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + $2
       RETURNING "last_seq"),
     "i" AS (
       INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
         "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at")
       SELECT $1, "c"."last_seq" - $2 + "e"."ord", ("e"."v"->>'x')::uuid, $3, "e"."v"->>'s', ("e"."v"->>'t')::uuid, ("e"."v"->>'a')::uuid,
              "e"."v"->>'n', "e"."v"->>'st', "e"."v"->>'ps', "e"."v"->>'si', COALESCE("e"."v"->'d', '{}'::jsonb), $5::timestamptz
         FROM "c", jsonb_array_elements($4::jsonb) WITH ORDINALITY AS "e"("v", "ord"))
     SELECT pg_notify($6, $7)`,
    [root, events.length, ex.projectId, JSON.stringify(rows), now.toISOString(), EXECUTION_EVENTS_CHANNEL, JSON.stringify({ p: ex.projectId, r: root })],
  );
  return events.length;
}

/**
 * A page of an execution's history, after `marker` (a sequence number), oldest first. A root
 * execution's history includes its sub-workflows' entries; a sub-workflow's, only its own.
 */
export async function listExecutionEvents(
  db: SqlRunner,
  ex: { id: string; rootExecutionId: string | null },
  after: number,
  limit: number,
): Promise<StoredExecutionEvent[]> {
  const where = ex.rootExecutionId === null ? `"root_execution_id" = $1` : `"execution_id" = $1`;
  const rows: Record<string, unknown>[] = await db.query(
    `SELECT "seq", "root_execution_id", "execution_id", "subject", "task_execution_id", "action_execution_id", "name", "state",
            "previous_state", "state_info", "details", "created_at"
       FROM "execution_events" WHERE ${where} AND "seq" > $2 ORDER BY "seq" LIMIT $3`,
    [ex.id, after, limit],
  );
  return rows.map((r) => ({
    seq: Number(r['seq']),
    root_execution_id: String(r['root_execution_id']),
    execution_id: String(r['execution_id']),
    subject: String(r['subject']),
    task_execution_id: (r['task_execution_id'] as string | null) ?? null,
    action_execution_id: (r['action_execution_id'] as string | null) ?? null,
    name: String(r['name']),
    state: String(r['state']),
    previous_state: (r['previous_state'] as string | null) ?? null,
    state_info: (r['state_info'] as string | null) ?? null,
    details: (typeof r['details'] === 'string' ? JSON.parse(r['details']) : r['details']) as Record<string, unknown>,
    created_at: (r['created_at'] instanceof Date ? r['created_at'] : new Date(String(r['created_at']))).toISOString(),
  }));
}

/**
 * Execution history (our extension): one row per change, numbered per execution tree. Rows go with
 * their execution (cascade), so the history follows the execution's retention.
 */
export class CreateExecutionEvents1764600000000 implements MigrationInterface {
  name = 'CreateExecutionEvents1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "execution_events" (
        "root_execution_id" uuid NOT NULL,
        "seq" bigint NOT NULL,
        "execution_id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "subject" varchar(16) NOT NULL,
        "task_execution_id" uuid,
        "action_execution_id" uuid,
        "name" text NOT NULL,
        "state" varchar(16) NOT NULL,
        "previous_state" varchar(16),
        "state_info" text,
        "details" jsonb NOT NULL DEFAULT '{}',
        "created_at" timestamptz NOT NULL,
        CONSTRAINT "PK_execution_events" PRIMARY KEY ("root_execution_id", "seq"),
        CONSTRAINT "FK_execution_events_execution" FOREIGN KEY ("execution_id")
          REFERENCES "workflow_executions" ("id") ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX "IDX_execution_events_execution" ON "execution_events" ("execution_id", "seq")`);
    await q.query(`
      CREATE TABLE "execution_event_counters" (
        "root_execution_id" uuid NOT NULL,
        "last_seq" bigint NOT NULL,
        CONSTRAINT "PK_execution_event_counters" PRIMARY KEY ("root_execution_id"),
        CONSTRAINT "FK_execution_event_counters_root" FOREIGN KEY ("root_execution_id")
          REFERENCES "workflow_executions" ("id") ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "execution_event_counters"`);
    await q.query(`DROP TABLE "execution_events"`);
  }
}
