import { returnedRows } from '@osc/persistence';
import { type ExecutionState, allowedExecutionSources, isCompleted } from '@osc/workflow-domain';
import type { SqlRunner } from './execution-store';

/** Sources of the last-resort ERROR: the unfinished states that may move to ERROR (a finished execution, ERROR included, keeps its state and first reason). */
const FAILABLE: readonly ExecutionState[] = allowedExecutionSources('ERROR').filter((s) => !isCompleted(s));

/**
 * Ends an execution in ERROR without its snapshot: the last resort when the engine cannot apply a
 * command and cannot load or decide the execution either (so `decide`'s own `force-state` is out of
 * reach), or when even the command that would have failed it was dead-lettered. Compare-and-set from the states the domain lets move to ERROR; `output` becomes
 * `{"result": stateInfo}` as a failed execution's does (DSL-13.7). Returns whether the row changed.
 */
export async function failExecutionRow(db: SqlRunner, executionId: string, stateInfo: string, now: Date): Promise<boolean> {
  const result: unknown = await db.query(
    `UPDATE "workflow_executions"
        SET "state" = 'ERROR', "state_info" = $2, "output" = $3::jsonb, "updated_at" = $4
      WHERE "id" = $1 AND "state" = ANY($5::text[])
      RETURNING "id"`,
    [executionId, stateInfo, JSON.stringify({ result: stateInfo }), now.toISOString(), FAILABLE],
  );
  return returnedRows(result).length > 0;
}
