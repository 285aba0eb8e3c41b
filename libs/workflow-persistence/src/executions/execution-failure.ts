import { returnedRows } from '@osc/persistence';
import {
  type ExecutionState,
  type HistoryEvent,
  allowedExecutionSources,
  isCompleted,
} from '@osc/workflow-domain';
import { appendExecutionEvents } from './execution-events';
import type { SqlRunner } from './execution-rows';

/** Sources of the last-resort ERROR: the unfinished states that may move to ERROR (a finished execution, ERROR included, keeps its state and first reason). */
const FAILABLE: readonly ExecutionState[] = allowedExecutionSources('ERROR').filter((s) => !isCompleted(s));

/**
 * Ends an execution in ERROR without its snapshot: the last resort when the engine cannot apply a
 * command and cannot load or decide the execution either (so `decide`'s own `force-state` is out of
 * reach), or when even the command that would have failed it was dead-lettered. Compare-and-set from the states the domain lets move to ERROR; `output` becomes
 * `{"result": stateInfo}` as a failed execution's does (DSL-13.7), and the change is appended to the
 * execution's history (and so announced to its streams). Returns whether the row changed.
 */
export async function failExecutionRow(
  db: SqlRunner,
  executionId: string,
  stateInfo: string,
  now: Date,
): Promise<boolean> {
  const result: unknown = await db.query(
    `WITH "old" AS (SELECT "id", "state" FROM "workflow_executions" WHERE "id" = $1 AND "state" = ANY($5::text[]) FOR UPDATE)
     UPDATE "workflow_executions" w
        SET "state" = 'ERROR', "state_info" = $2, "output" = $3::jsonb, "updated_at" = $4
       FROM "old" WHERE w."id" = "old"."id"
      RETURNING w."id", w."root_execution_id", w."project_id", w."workflow_name", "old"."state" AS "previous_state"`,
    [executionId, stateInfo, JSON.stringify({ result: stateInfo }), now.toISOString(), FAILABLE],
  );
  const row = returnedRows(result)[0] as Record<string, unknown> | undefined;
  if (!row) return false;
  // the change is the execution's like any other: in its history and its streams
  const ex = {
    id: executionId,
    rootExecutionId: (row['root_execution_id'] as string | null) ?? null,
    projectId: String(row['project_id']),
  };
  const change: HistoryEvent = {
    subject: 'execution',
    executionId,
    taskExecutionId: null,
    actionExecutionId: null,
    name: String(row['workflow_name']),
    state: 'ERROR',
    previousState: String(row['previous_state']),
    stateInfo,
    details: {},
  };
  await appendExecutionEvents(db, ex, [change], now);
  return true;
}
