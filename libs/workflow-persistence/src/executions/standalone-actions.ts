import type { SqlRunner } from './execution-rows';

/** A new standalone action execution (`POST /v2/action_executions`), RUNNING until its executor reports. */
export interface NewStandaloneAction {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly projectId: string;
  readonly description: string;
  readonly input: Record<string, unknown>;
  readonly params: Record<string, unknown>;
  /** Only the API's answer needs the result: the row is hidden from reads and deleted after. */
  readonly transient: boolean;
  readonly createdAt: Date;
}

/** How a standalone run ended: Mistral stores `{"result": <value or error>}` as the output either way. */
export interface StandaloneOutcome {
  readonly state: 'SUCCESS' | 'ERROR' | 'CANCELLED';
  readonly result?: unknown;
  readonly error?: unknown;
}

export async function insertStandaloneAction(db: SqlRunner, a: NewStandaloneAction): Promise<void> {
  await db.query(
    `INSERT INTO "action_executions" ("id", "name", "workflow_execution_id", "task_execution_id", "workflow_namespace", "project_id",
       "description", "state", "input", "params", "accepted", "transient", "created_at")
     VALUES ($1, $2, NULL, NULL, $3, $4, $5, 'RUNNING', $6::jsonb, $7::jsonb, false, $8, $9::timestamptz)`,
    [
      a.id,
      a.name,
      a.namespace,
      a.projectId,
      a.description,
      JSON.stringify(a.input),
      JSON.stringify(a.params),
      a.transient,
      a.createdAt.toISOString(),
    ],
  );
}

/**
 * Completes a standalone action execution (its executor's report, or `PUT /v2/action_executions/{id}`
 * for an asynchronous action). Only a RUNNING or PAUSED row outside any workflow changes; returns
 * whether this call completed it (a second report changes nothing).
 */
export async function completeStandaloneAction(
  db: SqlRunner,
  id: string,
  outcome: StandaloneOutcome,
  now: Date,
): Promise<boolean> {
  const value =
    outcome.state === 'SUCCESS'
      ? (outcome.result ?? null)
      : outcome.state === 'ERROR'
        ? (outcome.error ?? null)
        : null;
  const rows: unknown[] = await db.query(
    `UPDATE "action_executions" SET "state" = $2, "output" = $3::jsonb, "accepted" = true, "updated_at" = $4::timestamptz
      WHERE "id" = $1 AND "workflow_execution_id" IS NULL AND "state" IN ('RUNNING', 'PAUSED') RETURNING "id"`,
    [id, outcome.state, JSON.stringify({ result: value }), now.toISOString()],
  );
  return rows.length > 0;
}

/** Moves a standalone asynchronous action execution between RUNNING and PAUSED. */
export async function setStandaloneActionState(
  db: SqlRunner,
  id: string,
  state: 'RUNNING' | 'PAUSED',
  now: Date,
): Promise<boolean> {
  const rows: unknown[] = await db.query(
    `UPDATE "action_executions" SET "state" = $2, "updated_at" = $3::timestamptz
      WHERE "id" = $1 AND "workflow_execution_id" IS NULL AND "state" IN ('RUNNING', 'PAUSED') RETURNING "id"`,
    [id, state, now.toISOString()],
  );
  return rows.length > 0;
}

/** Removes transient rows older than `before` (left behind when the API stopped while waiting). */
export async function sweepTransientActions(db: SqlRunner, before: Date): Promise<void> {
  await db.query(`DELETE FROM "action_executions" WHERE "transient" AND "created_at" < $1::timestamptz`, [
    before.toISOString(),
  ]);
}
