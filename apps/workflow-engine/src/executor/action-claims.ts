import type { DataSource } from 'typeorm';

/** The outcome of a claim: `null` when the action was free, the previous claim time when it was not. */
export interface Claim {
  prev: Date | string | null;
}

interface Waiter {
  id: string;
  resolve: (claim: Claim | undefined) => void;
  reject: (e: unknown) => void;
}

/**
 * Claims action runs for an executor, many per statement: the claims asked for while a statement
 * runs go together into the next one, so a with-items task of 10,000 items costs a few hundred
 * commits instead of 10,000. A claim is the same compare-and-set as one at a time: the action must
 * still be RUNNING and accepted (a standalone one, outside any workflow, is accepted only once done); the answer says whether a previous run had claimed it already
 * (DSL-6.10). Rows are locked in id order, so two executors' batches cannot deadlock.
 */
export class ActionClaims {
  private queue: Waiter[] = [];
  private busy = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly maxPerStatement = 500,
  ) {}

  /** Resolves to the claim, or undefined when the action is completed or superseded. */
  claim(actionExecutionId: string): Promise<Claim | undefined> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: actionExecutionId, resolve, reject });
      if (!this.busy) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxPerStatement);
        try {
          const ids = [...new Set(batch.map((w) => w.id))];
          const rows: { id: string; prev: Date | string | null }[] = await this.dataSource.query(
            `WITH p AS (SELECT "id", "claimed_at" AS prev FROM "action_executions"
                         WHERE "id" IN (SELECT (jsonb_array_elements_text($1::jsonb))::uuid) ORDER BY "id" FOR UPDATE),
                  c AS (UPDATE "action_executions" a SET "claimed_at" = now() FROM p
                         WHERE a."id" = p."id" AND a."state" = 'RUNNING' AND (a."accepted" OR a."workflow_execution_id" IS NULL)
                         RETURNING a."id", p.prev)
             SELECT "id", prev FROM c`,
            [JSON.stringify(ids)],
          );
          const byId = new Map(rows.map((r) => [String(r.id), r.prev]));
          const seen = new Set<string>();
          for (const w of batch) {
            if (!byId.has(w.id)) w.resolve(undefined);
            // the same action twice in one batch: the second finds it claimed, as it would one statement later
            else if (seen.has(w.id)) w.resolve({ prev: 'claimed in the same batch' });
            else w.resolve({ prev: byId.get(w.id) ?? null });
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
}
