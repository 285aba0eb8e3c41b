import type { DataSource } from 'typeorm';
import {
  GENERIC_PLANS,
  type PreparedStatement,
  type StatementBatchRunner,
  executeStatement,
  prepareStatements,
} from '@osc/workflow-persistence';

/**
 * The outcome of a claim: `prev` is `null` when the action was free, the previous claim time when it
 * was not; then `prevExecutorId` names the executor instance that held it (null if unknown or if it
 * was an async action handed over) and `prevHeartbeat` its last heartbeat (null when gone).
 */
export interface Claim {
  prev: Date | string | null;
  prevExecutorId?: string | null;
  prevHeartbeat?: Date | null;
}

interface ClaimRow {
  id: string;
  prev: Date | string | null;
  prev_executor: string | null;
  prev_heartbeat: Date | null;
}

/**
 * The compare-and-set of {@link ActionClaims}: `$1` the action ids, `$2` the executor, `$3` the rerun
 * jobs by action id. The rows are locked in id order.
 */
const CLAIM_STATEMENT: PreparedStatement = {
  name: 'osc_action_claim',
  text: `WITH p AS (SELECT "id", "claimed_at" AS prev, "executor_id" AS prev_executor FROM "action_executions"
                  WHERE "id" = ANY($1::uuid[]) ORDER BY "id" FOR UPDATE),
           c AS (UPDATE "action_executions" a SET "claimed_at" = now(), "executor_id" = $2::uuid, "rerun_job" = $3::jsonb -> a."id"::text
                  FROM p
                  WHERE a."id" = ANY($1::uuid[]) AND a."id" = p."id" AND a."state" = 'RUNNING' AND (a."accepted" OR a."workflow_execution_id" IS NULL)
                  RETURNING a."id", p.prev, p.prev_executor)
      SELECT c."id", c.prev, c.prev_executor, s."heartbeat_at" AS prev_heartbeat
        FROM c LEFT JOIN "workflow_service_instances" s ON s."id" = c.prev_executor`,
};

interface Waiter {
  id: string;
  rerunJob?: unknown;
  resolve: (claim: Claim | undefined) => void;
  reject: (e: unknown) => void;
}

/**
 * Claims action runs for an executor, many per statement: the claims asked in one turn of the event
 * loop (the runs of a batch job, started in one loop) share a statement, and those asked while a
 * statement runs go together into the next one, so a with-items task of 10,000 items costs a few hundred
 * commits instead of 10,000. A claim is the same compare-and-set as one at a time: the action must
 * still be RUNNING and accepted (a standalone one, outside any workflow, is accepted only once done); the answer says whether a previous run had claimed it already
 * (DSL-6.10). Rows are locked in id order, so two executors' batches cannot deadlock.
 */
export class ActionClaims {
  private queue: Waiter[] = [];
  /** A drain is scheduled or running: it takes every claim queued until it ends. */
  private busy = false;

  /**
   * `executorId`: the executor instance whose heartbeat vouches for the claimed runs (issue #15); the
   * reconciler judges a RUNNING action by it. Null leaves claims without an owner (tests).
   */
  constructor(
    private readonly dataSource: DataSource,
    private readonly maxPerStatement = 500,
    private readonly executorId: string | null = null,
  ) {}

  /**
   * Resolves to the claim, or undefined when the action is completed or superseded. `rerunJob`, the
   * job of a `safe-rerun` task, is stored with the claim so that the action can be enqueued again if
   * this executor dies.
   */
  claim(actionExecutionId: string, rerunJob?: unknown): Promise<Claim | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: actionExecutionId, rerunJob, resolve, reject });
      if (this.busy) return;
      // not at once: started inside the first claim() it took that claim alone (a batch job: 1 + 49)
      this.busy = true;
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxPerStatement);
        try {
          const ids = [...new Set(batch.map((w) => w.id))];
          const rerunJobs: Record<string, unknown> = {};
          for (const w of batch) if (w.rerunJob !== undefined) rerunJobs[w.id] = w.rerunJob;
          const rows = await this.run(ids, JSON.stringify(rerunJobs));
          const byId = new Map(rows.map((r) => [String(r.id), r]));
          const seen = new Set<string>();
          for (const w of batch) {
            const row = byId.get(w.id);
            if (!row) w.resolve(undefined);
            // the same action twice in one batch: the second finds it claimed, as it would one statement later
            else if (seen.has(w.id))
              w.resolve({
                prev: 'claimed in the same batch',
                prevExecutorId: this.executorId,
                prevHeartbeat: null,
              });
            else if (row.prev === null) w.resolve({ prev: null });
            else
              w.resolve({
                prev: row.prev,
                prevExecutorId: row.prev_executor,
                prevHeartbeat: row.prev_heartbeat ? new Date(row.prev_heartbeat) : null,
              });
            seen.add(w.id);
          }
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.busy = false;
    }
  }

  /**
   * One claim statement for `ids`: prepared once per session and run with a generic plan
   * (`prepared-statements.ts`; planning it afresh had cost about half as much as running it), in the
   * implicit transaction of one simple query.
   */
  private async run(ids: readonly string[], rerunJobs: string): Promise<ClaimRow[]> {
    const qr = this.dataSource.createQueryRunner();
    try {
      const client = (await qr.connect()) as StatementBatchRunner;
      await prepareStatements(client, [CLAIM_STATEMENT]);
      const results = (await client.query(
        [...GENERIC_PLANS, executeStatement(CLAIM_STATEMENT.name, [ids, this.executorId, rerunJobs])].join(
          ';\n',
        ),
      )) as { rows: ClaimRow[] }[];
      return results[GENERIC_PLANS.length]?.rows ?? [];
    } finally {
      await qr.release();
    }
  }

  /**
   * An async action left this executor's hands: its result comes from an external system, so the
   * executor's heartbeat no longer vouches for it (Mistral checks heartbeats of sync actions only).
   */
  async release(actionExecutionId: string): Promise<void> {
    if (this.executorId === null) return;
    await this.dataSource.query(
      `UPDATE "action_executions" SET "executor_id" = NULL WHERE "id" = $1 AND "executor_id" = $2`,
      [actionExecutionId, this.executorId],
    );
  }
}
