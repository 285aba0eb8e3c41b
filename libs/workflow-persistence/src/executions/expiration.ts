import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { SqlRunner } from './execution-store';
import { deleteExecutionHistory } from './execution-events';

/** Mistral's execution expiration policy settings (`[execution_expiration_policy]`). */
export interface ExpirationSettings {
  /** Completed root executions last updated before this time are removed (`older_than`). */
  readonly expireBefore?: Date;
  /** Keep only this many completed root executions, the most recently updated (`max_finished_executions`); 0 = no limit. */
  readonly maxFinishedExecutions: number;
  /** Executions removed per transaction (`batch_size`); 0 = all in one. */
  readonly batchSize: number;
  /** Completed states never removed (`ignored_states`). */
  readonly ignoredStates: readonly string[];
}

/** The states the policy considers (Mistral's completed states); `ignoredStates` must be among them. */
export const EXPIRABLE_STATES = ['SUCCESS', 'ERROR', 'CANCELLED'] as const;
const COMPLETED = EXPIRABLE_STATES;

/**
 * Root executions the policy may remove: completed (and not ignored), not a sub-workflow of a task
 * (those go with their root), and with no descendant still unfinished. Served by the partial index of
 * `IndexCompletedRootExecutions`.
 */
const candidates = (states: readonly string[]): string =>
  // the states are written out (from COMPLETED, never from input) so the planner can prove the
  // partial index's predicate
  `w."task_execution_id" IS NULL AND w."state" IN (${states.map((st) => `'${st}'`).join(', ')})
   AND NOT EXISTS (SELECT 1 FROM "workflow_executions" d WHERE d."root_execution_id" = w."id"
                    AND d."state" NOT IN ('SUCCESS', 'ERROR', 'CANCELLED'))`;

/**
 * One batch of the policy in the caller's transaction: the ids of the executions it removed (with
 * their sub-executions, tasks and action executions, by cascade), oldest first; empty when there is
 * nothing (more) to remove. Expired ones (`expireBefore`) go first, then the ones beyond
 * `maxFinishedExecutions`, as Mistral's policy does.
 */
export async function expireExecutionsBatch(em: SqlRunner, s: ExpirationSettings): Promise<string[]> {
  const states = COMPLETED.filter((st) => !s.ignoredStates.includes(st));
  if (states.length === 0) return [];
  const limit = s.batchSize > 0 ? s.batchSize : null;
  let ids: string[] = [];
  if (s.expireBefore) {
    const rows: { id: string }[] = await em.query(
      `SELECT w."id" FROM "workflow_executions" w
        WHERE ${candidates(states)} AND w."updated_at" < $1::timestamptz
        ORDER BY w."updated_at", w."id" LIMIT $2`,
      [s.expireBefore.toISOString(), limit],
    );
    ids = rows.map((r) => String(r.id));
  }
  if (ids.length === 0 && s.maxFinishedExecutions > 0) {
    const rows: { id: string }[] = await em.query(
      `SELECT w."id" FROM "workflow_executions" w
        WHERE ${candidates(states)} AND w."updated_at" IS NOT NULL
        ORDER BY w."updated_at" DESC, w."id" DESC OFFSET $1 LIMIT $2`,
      [s.maxFinishedExecutions, limit],
    );
    ids = rows.map((r) => String(r.id));
  }
  if (ids.length === 0) return [];
  const list = JSON.stringify(ids);
  await deleteExecutionHistory(em, ids.map((id) => ({ id, rootExecutionId: null })));
  await em.query(`DELETE FROM "workflow_executions" WHERE "root_execution_id" IN (SELECT (jsonb_array_elements_text($1::jsonb))::uuid)`, [list]);
  await em.query(`DELETE FROM "workflow_executions" WHERE "id" IN (SELECT (jsonb_array_elements_text($1::jsonb))::uuid)`, [list]);
  return ids;
}

/**
 * The expiration policy's scans (completed root executions by `updated_at`, oldest first for
 * `older_than`, newest first for `max_finished_executions`) stay flat as history grows.
 */
export class IndexCompletedRootExecutions1764500000000 implements MigrationInterface {
  name = 'IndexCompletedRootExecutions1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_completed_roots" ON "workflow_executions" ("updated_at", "id")
        WHERE "task_execution_id" IS NULL AND "state" IN ('SUCCESS', 'ERROR', 'CANCELLED')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_workflow_executions_completed_roots"`);
  }
}
