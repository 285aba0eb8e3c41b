import type { DataSource, EntityManager } from 'typeorm';
import type { AfterCommit, CommandBus, CommandMessage } from '../command-bus';
import type { JobQueue, NewJob } from '../job-queue';
import { type MessagingLogger, stderrLogger } from '../logger';
import { describeError, isRetryableError } from '../retryable';
import { type Span, SpanKind, trace } from '@opentelemetry/api';
import { contextFromHeaders, injectHeaders, tracer, unwrapJobData, wrapJobData } from '@osc/telemetry';
import { type HandedOffRow, releaseLeases } from './outbox-writer';
import { PublishedRows } from './published-rows';

export interface OutboxRelayOptions {
  /** Rows claimed per transaction. Default 500. */
  batchSize?: number;
  /** Fallback polling period when nobody calls `notify()`. Default 1000 ms. */
  pollIntervalMs?: number;
  /** Longest wait of a published hand-off row for an INSERT to carry its DELETE. Default 100 ms. */
  deleteDelayMs?: number;
  logger?: MessagingLogger;
}

interface OutboxRow {
  id: string;
  destination: 'bus' | 'jobs';
  queue: string;
  payload: unknown;
}

/**
 * Publishes committed outbox rows and deletes them: at-least-once, in `seq` order per partition.
 *
 * Each batch is one transaction: claim up to `batchSize` rows in `seq` order with
 * `FOR UPDATE SKIP LOCKED`, publish them (one publish per destination queue, batched, confirmed),
 * delete them, commit. A crash anywhere before the commit releases the claim and another relay (or
 * this one after a restart) publishes the rows again, so consumers must be idempotent.
 *
 * Several relays run at once: a relay claims a partition's rows only while holding a transaction
 * advisory lock on the partition (`pg_try_advisory_xact_lock`), so two relays never publish rows of
 * the same partition concurrently and a later row is never sent before an earlier one. Rows
 * without a partition key are spread freely. (Writers of one partition must serialize their
 * transactions — the engine does, by locking the execution — for commit order to match `seq`.)
 *
 * Wake-ups: `notify()` (after a commit), a retry 10 ms (doubling) after a pass whose claim had to
 * skip rows another relay held (their partition lock or the rows themselves), and polling every
 * `pollIntervalMs` as the fallback for rows written by other processes or left by a crash.
 *
 * Rows a writer hands off itself (`handOff`) carry a lease (`claimable_at`): relays skip them until
 * it passes, so a row is not published by a relay's pass while its hand-off is under way; a failed
 * hand-off lifts the lease and wakes the relay.
 *
 * Adapters with a transactional publish (`publishInTransaction` / `addInTransaction`: embedded
 * mode's journaled in-process bus and queue) get the claim transaction's EntityManager: the
 * messages are journaled in the same transaction that deletes the rows (on PGlite a write outside
 * it would wait for it forever, STACK.md trap 4) and handed to consumers only after the commit.
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly logger: MessagingLogger;
  private running = false;
  private loopDone?: Promise<void>;
  private woken = false;
  private wakeUp?: () => void;
  private timer?: NodeJS.Timeout;
  /** Rows handed off by writers of this process, waiting for the hand-off in flight. */
  private handOffs: HandedOffRow[] = [];
  private handingOff?: Promise<void>;
  /**
   * Rows the hand-off published, their DELETE waiting for the writer's next INSERT
   * (`OutboxWriter.onHandOff`, which takes them from here) or a statement of their own.
   */
  readonly published: PublishedRows;

  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: CommandBus,
    private readonly jobs: JobQueue,
    options: OutboxRelayOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 500;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.logger = options.logger ?? stderrLogger;
    this.published = new PublishedRows(dataSource, this.logger, options.deleteDelayMs);
  }

  /** Starts the background loop (idempotent); the first pass runs at once. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.woken = true;
    this.loopDone = this.loop();
  }

  /** Asks the loop to run now (cheap; calls coalesce). */
  notify(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** Stops the loop after the batch in progress (and the hand-offs in flight). */
  async stop(): Promise<void> {
    await this.handingOff;
    await this.published.flush();
    if (!this.running) return;
    this.running = false;
    this.notify();
    await this.loopDone;
  }

  /**
   * Publishes rows a writer of this process has just committed (`OutboxWriter.onHandOff`: rows
   * without a partition key) and deletes them: no claim transaction, and one publish per queue and
   * one DELETE for all the rows handed off while the previous hand-off was in flight. Relays leave
   * the rows alone meanwhile (their lease, `claimable_at`); if publishing fails, the lease is lifted
   * and the relay woken, and if this process dies first, relays take the rows once the lease has
   * passed. The DELETE of the rows published waits in {@link published} for the writer's next INSERT
   * to carry it (no statement and commit of its own on a busy engine), 100 ms at most. A row
   * published whose DELETE then fails is published again by a relay (at least once).
   */
  handOff(rows: readonly HandedOffRow[]): void {
    this.handOffs.push(...rows);
    if (!this.handingOff) this.handingOff = this.drainHandOffs().finally(() => (this.handingOff = undefined));
  }

  private async drainHandOffs(): Promise<void> {
    while (this.handOffs.length > 0) {
      const batch = this.handOffs.splice(0, this.batchSize);
      try {
        const afterCommit: AfterCommit[] = [];
        const delivered = await this.publish(this.dataSource.manager, batch, afterCommit);
        this.published.add(delivered);
        for (const handOver of afterCommit) handOver();
      } catch (e) {
        this.logger.warn('outbox hand-off failed; the relay will publish the rows', {
          error: describeError(e),
        });
        try {
          await releaseLeases(this.dataSource.manager, batch);
        } catch {
          // their lease passes on its own (HAND_OFF_LEASE_SECONDS)
        }
        this.notify();
      }
    }
  }

  /**
   * Relays batches until no claimable row is left; returns how many rows were published. Usable
   * without `start()` (tests, a one-shot drain at shutdown).
   */
  async relayPending(): Promise<number> {
    return (await this.drain()).relayed;
  }

  /** `relayPending`, also saying whether the last claim had to skip rows another relay held. */
  private async drain(): Promise<{ relayed: number; contended: boolean }> {
    let total = 0;
    for (;;) {
      const { relayed, contended } = await this.pass();
      total += relayed;
      if (relayed < this.batchSize) return { relayed: total, contended };
    }
  }

  /** One transaction: claim, publish, delete. Returns the number of rows relayed. */
  async relayBatch(): Promise<number> {
    return (await this.pass()).relayed;
  }

  private async pass(): Promise<{ relayed: number; contended: boolean }> {
    const afterCommit: AfterCommit[] = [];
    const result = await this.dataSource.transaction(async (em) => {
      const { rows, contended } = await this.claim(em);
      if (rows.length === 0) return { relayed: 0, contended };
      const delivered = await this.publish(em, rows, afterCommit);
      await deleteRows(em, delivered);
      return { relayed: rows.length, contended };
    });
    for (const handOver of afterCommit) handOver();
    return result;
  }

  private async loop(): Promise<void> {
    let retries = 0;
    while (this.running) {
      this.woken = false;
      let contended = false;
      try {
        ({ contended } = await this.drain());
      } catch (e) {
        this.logger.warn('outbox relay pass failed; retrying at the next poll', { error: describeError(e) });
      }
      if (!this.running) break;
      if (this.woken) {
        retries = 0;
        continue;
      }
      // The last claim skipped rows another relay held (its partition lock or its row locks):
      // look again shortly, 10 ms doubling up to the poll period while that lasts. A relay woken
      // by its own commit that skips the rows of a partition another process's relay holds would
      // otherwise sleep until the poll (up to a second per hop between engine processes), and the
      // holder, whose claim came before that commit, does not see them either. Uncontended passes
      // (a single relay, embedded mode) never pay an extra claim.
      if (contended) {
        await this.sleep(Math.min(this.pollIntervalMs, 10 * 2 ** Math.min(retries, 10)));
        retries++;
      } else {
        retries = 0;
        await this.sleep(this.pollIntervalMs);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = undefined;
        this.wakeUp = undefined;
        resolve();
      };
      this.wakeUp = done;
      this.timer = setTimeout(done, ms);
    });
  }

  /**
   * Claims the oldest rows this relay may publish. `contended`: the window of the oldest rows held
   * more than this relay could take — another relay holds some (their partition or the rows).
   */
  private async claim(em: EntityManager): Promise<{ rows: OutboxRow[]; contended: boolean }> {
    // Partition locks are taken first, once per key among the oldest rows (a MATERIALIZED CTE, so
    // each key is tried exactly once): trying the lock row by row could fail on an early row and
    // succeed on a later one of the same partition once its holder commits, sending the later
    // row first. Rows of a partition whose lock we hold are never locked by anyone else, so the
    // SKIP LOCKED only skips rows without a partition and rows deleted meanwhile. One row comes
    // back: the claimed rows in `seq` order and the size of the window they were taken from.
    const [result] = (await em.query(
      `WITH "oldest" AS MATERIALIZED (
         SELECT "partition_key" FROM "outbox"
          WHERE "claimable_at" IS NULL OR "claimable_at" <= now()
          ORDER BY "seq" LIMIT $1
       ),
       "keys" AS MATERIALIZED (
         SELECT "k" FROM (
           SELECT DISTINCT "partition_key" AS "k" FROM "oldest" WHERE "partition_key" IS NOT NULL
         ) AS "candidates"
         WHERE pg_try_advisory_xact_lock(hashtext('outbox:' || "k"))
       ),
       "taken" AS (
         SELECT "id", "seq", "destination", "queue", "payload"
           FROM "outbox"
          WHERE ("claimable_at" IS NULL OR "claimable_at" <= now())
            AND ("partition_key" IS NULL OR "partition_key" IN (SELECT "k" FROM "keys"))
          ORDER BY "seq"
          LIMIT $1
            FOR UPDATE SKIP LOCKED
       )
       SELECT (SELECT count(*) FROM "oldest")::int AS "window",
              (SELECT COALESCE(json_agg(json_build_object('id', "id", 'destination', "destination", 'queue', "queue", 'payload', "payload") ORDER BY "seq"), '[]'::json) FROM "taken") AS "rows"`,
      [this.batchSize],
    )) as Array<{ window: number | string; rows: unknown }>;
    const parsed = (
      typeof result?.rows === 'string' ? JSON.parse(result.rows) : (result?.rows ?? [])
    ) as Array<OutboxRow & { payload: unknown }>;
    const rows = parsed.map((r) => ({
      ...r,
      id: String(r.id),
      payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
    }));
    return { rows, contended: rows.length < Number(result?.window ?? 0) };
  }

  /**
   * Publishes rows grouped by destination queue (order kept inside each group) and returns the ids
   * to delete. A row that can never be published (a non-retryable error such as an invalid message)
   * is logged and deleted rather than blocking its partition forever.
   */
  private async publish(
    em: EntityManager,
    rows: readonly OutboxRow[],
    afterCommit: AfterCommit[],
  ): Promise<string[]> {
    const groups = new Map<string, OutboxRow[]>();
    for (const r of rows) {
      const key = `${r.destination}\u0000${r.queue}`;
      const g = groups.get(key);
      if (g) g.push(r);
      else groups.set(key, [r]);
    }
    await Promise.all(
      [...groups.values()].map(async (group) => {
        try {
          await this.send(em, group, afterCommit);
        } catch (e) {
          if (isRetryableError(e)) throw e;
          for (const row of group) {
            try {
              await this.send(em, [row], afterCommit);
            } catch (err) {
              if (isRetryableError(err)) throw err;
              this.logger.error('dropping an outbox row that cannot be published', {
                id: row.id,
                queue: row.queue,
                error: describeError(err),
              });
            }
          }
        }
      }),
    );
    return rows.map((r) => r.id);
  }

  private async send(em: EntityManager, group: OutboxRow[], afterCommit: AfterCommit[]): Promise<void> {
    const first = group[0];
    if (!first) return;
    // One PRODUCER span per row, child of the transaction that wrote it; the message carries the
    // span's context on, so the consumer's span hangs under the publish.
    const spans: Span[] = [];
    const publishSpan = (headers: Record<string, string> | undefined, id: string) => {
      const span = tracer().startSpan(
        `publish ${first.queue}`,
        {
          kind: SpanKind.PRODUCER,
          attributes: {
            'messaging.operation.type': 'send',
            'messaging.destination.name': first.queue,
            'osc.outbox.row': id,
          },
        },
        contextFromHeaders(headers),
      );
      spans.push(span);
      return trace.setSpan(contextFromHeaders(headers), span);
    };
    try {
      if (first.destination === 'bus') {
        const messages = group.map((r) => {
          const m = r.payload as CommandMessage;
          if (!m.headers?.['traceparent']) return m;
          return { ...m, headers: injectHeaders(m.headers, publishSpan(m.headers, r.id), true) };
        });
        if (this.bus.publishInTransaction)
          afterCommit.push(await this.bus.publishInTransaction(em, first.queue, messages));
        else await this.bus.publish(first.queue, messages);
      } else {
        const jobs = group.map((r) => {
          const j = r.payload as NewJob;
          const { trace: carrier } = unwrapJobData(j.data);
          if (!carrier?.['traceparent']) return j;
          return { ...j, data: wrapJobData(j.data, publishSpan(carrier, r.id), true) };
        });
        if (this.jobs.addInTransaction)
          afterCommit.push(await this.jobs.addInTransaction(em, first.queue, jobs));
        else await this.jobs.add(first.queue, jobs);
      }
    } finally {
      for (const span of spans) span.end();
    }
  }
}

async function deleteRows(em: EntityManager, ids: string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    await em.query(
      `DELETE FROM "outbox" WHERE "id" IN (${chunk.map((_, j) => `$${j + 1}`).join(', ')})`,
      chunk,
    );
  }
}
