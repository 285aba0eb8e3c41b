import type { DataSource, QueryRunner } from 'typeorm';
import { stillRunning } from '@osc/workflow-persistence';

/**
 * The event hub's reads (execution-event-hub.ts): batched by key, on pooled connections of their own.
 */

/** Trees (or projects) read by one statement at most. */
const BATCH = 200;

/**
 * Reads of each kind (trees, projects) running at once: while one runs, the announcements that
 * arrive gather for the next, so under load one statement serves many trees. (Distributed, each
 * kind reads on a connection of its own, where a second statement would only queue.)
 */
const CONCURRENT_READS = 1;

/** Polls for transactions to end: first delay, doubling up to the last. */
const END_POLL_MS = [5, 10, 20, 40, 80, 160, 200] as const;

/**
 * Resolves once none of these transactions (64-bit ids as text) runs any more — true — or once
 * `stop` says to give up — false. A failed poll is tried again.
 */
export async function untilEnded(
  db: SqlRunner,
  xids: readonly string[],
  stop: () => boolean,
): Promise<boolean> {
  let left = xids;
  for (let attempt = 0; left.length > 0 && !stop(); attempt++) {
    await new Promise((r) => setTimeout(r, END_POLL_MS[Math.min(attempt, END_POLL_MS.length - 1)]));
    left = await stillRunning(db, left).catch(() => left);
  }
  return !stop();
}

/** Anything that runs SQL. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/**
 * A pooled connection kept for the hub's reads (distributed mode): the streams' reads never wait
 * behind the requests' transactions for a free connection of the pool (at a hundred
 * `POST /v2/executions` a second, a slow-committing burst held every connection and the streams'
 * reads queued behind it for seconds). Taken at the first read, given back and taken anew after
 * a failure.
 */
export class ReservedConnection implements SqlRunner {
  private runner?: Promise<QueryRunner>;

  constructor(private readonly db: () => DataSource) {}

  async query(sql: string, parameters?: unknown[]): Promise<any> {
    const taken = (this.runner ??= this.take());
    let runner: QueryRunner;
    try {
      runner = await taken;
    } catch (err) {
      if (this.runner === taken) this.runner = undefined;
      throw err;
    }
    try {
      return await runner.query(sql, parameters);
    } catch (err) {
      // the connection may be broken: the next read takes another
      if (this.runner === taken) {
        this.runner = undefined;
        await runner.release().catch(() => undefined);
      }
      throw err;
    }
  }

  async release(): Promise<void> {
    const taken = this.runner;
    this.runner = undefined;
    const runner = await taken?.catch(() => undefined);
    if (runner && !runner.isReleased) await runner.release().catch(() => undefined);
  }

  private async take(): Promise<QueryRunner> {
    const runner = this.db().createQueryRunner();
    await runner.connect();
    return runner;
  }
}

/**
 * Batches reads by key: a key asked for is read by the next batch that starts, never by two
 * batches at once (an entry is handed out once, in order); a key asked for again while its batch
 * runs is read once more after it.
 */
export class BatchedReads {
  private readonly wanted = new Set<string>();
  private readonly running = new Set<string>();
  private batches = 0;

  constructor(
    private readonly readBatch: (keys: string[]) => Promise<void>,
    private readonly isWatched: (key: string) => boolean,
  ) {}

  request(key: string): void {
    this.wanted.add(key);
    this.pump();
  }

  private pump(): void {
    while (this.batches < CONCURRENT_READS && this.wanted.size > 0) {
      const keys: string[] = [];
      for (const key of this.wanted) {
        if (this.running.has(key)) continue;
        this.wanted.delete(key);
        if (!this.isWatched(key)) continue;
        keys.push(key);
        if (keys.length === BATCH) break;
      }
      if (keys.length === 0) return;
      for (const key of keys) this.running.add(key);
      this.batches++;
      void this.readBatch(keys).finally(() => {
        this.batches--;
        for (const key of keys) this.running.delete(key);
        this.pump();
      });
    }
  }
}
