import { returnedRows } from '@osc/persistence';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { SqlRunner } from './execution-rows';
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
  /**
   * The newest execution beyond `maxFinishedExecutions` as an earlier batch of the same pass found
   * it (`ExpirationBatch.cutoff`): the batch removes from the oldest up to it instead of counting the
   * kept executions again. Executions finishing since only push the true limit later, so an earlier
   * cutoff never removes one that should be kept.
   */
  readonly cutoff?: ExpirationCutoff;
}

/** A position in the candidates' order (`updated_at`, `id`); `updatedAt` as PostgreSQL prints it (microseconds). */
export interface ExpirationCutoff {
  readonly updatedAt: string;
  readonly id: string;
}

/** The states the policy considers (Mistral's completed states); `ignoredStates` must be among them. */
export const EXPIRABLE_STATES = ['SUCCESS', 'ERROR', 'CANCELLED'] as const;
const COMPLETED = EXPIRABLE_STATES;

/**
 * Root executions the policy may remove: completed (and not ignored), not a sub-workflow of a task
 * (those go with their root), and with no descendant still unfinished. Served by the partial indexes
 * of `IndexCompletedRootExecutions` (the candidates by `updated_at`) and `IndexUnfinishedByRoot` (the
 * descendants check: a probe of the few unfinished executions instead of every sub-execution).
 */
const candidates = (states: readonly string[]): string =>
  // the states are written out (from COMPLETED, never from input) so the planner can prove the
  // partial index's predicate
  `w."task_execution_id" IS NULL AND w."state" IN (${states.map((st) => `'${st}'`).join(', ')})
   AND NOT EXISTS (SELECT 1 FROM "workflow_executions" d WHERE d."root_execution_id" = w."id"
                    AND d."state" NOT IN ('SUCCESS', 'ERROR', 'CANCELLED'))`;

/** What one batch did. */
export interface ExpirationBatch {
  /** The root executions removed (with their sub-executions, tasks and action executions), oldest first. */
  readonly removed: string[];
  /**
   * Whether more may be due now: the scan filled the batch, or it removed expired executions and
   * `maxFinishedExecutions` has not been looked at yet. False: what was due when the batch scanned is
   * gone; executions finishing since wait for the next pass.
   */
  readonly more: boolean;
  /** The `maxFinishedExecutions` cutoff this batch used, for the next batch of the pass (`ExpirationSettings.cutoff`). */
  readonly cutoff?: ExpirationCutoff;
}

/**
 * One batch of the policy in the caller's transaction. Expired ones (`expireBefore`) go first, then
 * the ones beyond `maxFinishedExecutions`, oldest first, as Mistral's policy does. Finding the limit
 * reads the kept executions' index entries once (O(`maxFinishedExecutions`)); a pass hands it on
 * (`cutoff`) so its next batches cost O(`batchSize`). The scans read without locks; the DELETE
 * re-checks each root under its row lock (still completed, no unfinished descendant), so an
 * execution an engine transaction brought back to life since the scan (a rerun of a failed one) is
 * skipped, never removed.
 */
export async function expireExecutionsBatch(em: SqlRunner, s: ExpirationSettings): Promise<ExpirationBatch> {
  const states = COMPLETED.filter((st) => !s.ignoredStates.includes(st));
  if (states.length === 0) return { removed: [], more: false };
  const limit = s.batchSize > 0 ? s.batchSize : null;
  let ids: string[] = [];
  let expiredPhase = false;
  let cutoff = s.cutoff;
  if (s.expireBefore) {
    const rows: { id: string }[] = await em.query(
      `SELECT w."id" FROM "workflow_executions" w
        WHERE ${candidates(states)} AND w."updated_at" < $1::timestamptz
        ORDER BY w."updated_at", w."id" LIMIT $2`,
      [s.expireBefore.toISOString(), limit],
    );
    ids = rows.map((r) => String(r.id));
    expiredPhase = ids.length > 0;
  }
  if (ids.length === 0 && s.maxFinishedExecutions > 0) {
    if (!cutoff) {
      const [newestBeyond] = (await em.query(
        `SELECT w."updated_at"::text AS "updatedAt", w."id"::text AS "id" FROM "workflow_executions" w
          WHERE ${candidates(states)} AND w."updated_at" IS NOT NULL
          ORDER BY w."updated_at" DESC, w."id" DESC OFFSET $1 LIMIT 1`,
        [s.maxFinishedExecutions],
      )) as ExpirationCutoff[];
      if (!newestBeyond) return { removed: [], more: false };
      cutoff = { updatedAt: String(newestBeyond.updatedAt), id: String(newestBeyond.id) };
    }
    const rows: { id: string }[] = await em.query(
      `SELECT w."id" FROM "workflow_executions" w
        WHERE ${candidates(states)} AND (w."updated_at", w."id") <= ($1::timestamptz, $2::uuid)
        ORDER BY w."updated_at", w."id" LIMIT $3`,
      [cutoff.updatedAt, cutoff.id, limit],
    );
    ids = rows.map((r) => String(r.id));
  }
  if (ids.length === 0) return { removed: [], more: false, cutoff };
  const more = (limit !== null && ids.length === limit) || (expiredPhase && s.maxFinishedExecutions > 0);
  const removedRows = returnedRows<{ id: string }>(
    await em.query(
      // = ANY(uuid[]): a primary-key lookup per id. `IN (SELECT jsonb_array_elements_text(…))` let the
      // planner, with statistics stale after a burst of finishes, re-expand the list for every
      // candidate row (a nested loop: 1 s for 500 of 1,000 candidates, 20 s per batch of 500 with
      // 20,000 waiting in the benchmark)
      `DELETE FROM "workflow_executions" w
        WHERE w."id" = ANY($1::uuid[]) AND ${candidates(states)}
        RETURNING w."id"`,
      [ids],
    ),
  );
  const gone = new Set(removedRows.map((r) => String(r.id)));
  const removed = ids.filter((id) => gone.has(id));
  if (removed.length > 0) {
    // the history has no foreign key: a root's whole tree's entries go with it
    await deleteExecutionHistory(
      em,
      removed.map((id) => ({ id, rootExecutionId: null })),
    );
    await em.query(`DELETE FROM "workflow_executions" WHERE "root_execution_id" = ANY($1::uuid[])`, [
      removed,
    ]);
  }
  return { removed, more, cutoff };
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

/**
 * The policy's descendants check (no unfinished execution under a candidate root) probes only the
 * unfinished executions: through `IDX_workflow_executions_root` it read every sub-execution's row, and
 * with a long history the planner chose a sequential scan of the whole table per batch (EXPLAIN on
 * 200,000 completed executions, `max_finished_executions` 100,000: 960 ms, 250 ms with this index,
 * 1 ms at 1,000).
 */
export class IndexUnfinishedByRoot1765400000000 implements MigrationInterface {
  name = 'IndexUnfinishedByRoot1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(
      `CREATE INDEX "IDX_workflow_executions_unfinished_root" ON "workflow_executions" ("root_execution_id")
        WHERE "root_execution_id" IS NOT NULL AND "state" NOT IN ('SUCCESS', 'ERROR', 'CANCELLED')`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_workflow_executions_unfinished_root"`);
  }
}
