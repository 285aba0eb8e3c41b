import type { DataSource, EntityManager } from 'typeorm';
import { type MessagingLogger, stderrLogger } from '../logger';
import { describeError } from '../retryable';

/**
 * One message or job as the journal keeps it.
 * - `bus`: `body` is the encoded command (as the bus holds it), `meta` its headers, `deliveries`
 *   the deliveries that ended in a retryable failure (the count continues after a restart).
 * - `jobs`: `body` is the job's data as JSON, `meta` its `{ id, name, attempts, backoff }`,
 *   `deliveries` the attempts made (failed runs), `readyAt` when it is due (epoch ms).
 */
export interface JournalEntry {
  id: string;
  kind: 'bus' | 'jobs';
  queue: string;
  body: string;
  meta: unknown;
  deliveries: number;
  readyAt: number | null;
}

/** The mutable part of an entry: where it waits and its retry state. */
export type JournalChange = Pick<JournalEntry, 'queue' | 'meta' | 'deliveries' | 'readyAt'>;

/** Rows per INSERT statement (7 parameters each, well under PostgreSQL's 65,535). */
const INSERT_CHUNK = 1000;

interface PendingInsert {
  rows: JournalEntry[];
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * The embedded database's record of what the in-process bus and job queue hold
 * (`message_journal`). An entry is written before the message or job can be delivered and
 * removed once it is acked or finished, so a process that dies (kill -9 included) finds its
 * unfinished work at the next start (`load`). At-least-once: a removal not yet written when the
 * process dies means one more delivery after the restart.
 *
 * Writes are coalesced as `ActionClaims` coalesces claims: inserts asked for in one turn, or while
 * a statement runs, go together into the next INSERT; removals and changes are lazy (written a tick later, in
 * batches) because losing one only costs a redelivery. Inside a transaction, entries are written
 * with that transaction's EntityManager (`insertIn`): on PGlite a query outside it would wait for
 * the transaction forever (STACK.md trap 4).
 */
export class MessageJournal {
  private inserts: PendingInsert[] = [];
  private changes = new Map<string, JournalChange>();
  private removals = new Set<string>();
  /** A drain is scheduled or running: new writes join it. */
  private busy = false;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: MessagingLogger = stderrLogger,
  ) {}

  /** Writes entries in the caller's transaction: they exist if and only if it commits. */
  async insertIn(em: EntityManager, rows: readonly JournalEntry[]): Promise<void> {
    await insertRows(em, rows);
  }

  /** Writes entries outside any transaction; resolves once they are stored (coalesced with concurrent calls). */
  insert(rows: readonly JournalEntry[]): Promise<void> {
    if (rows.length === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.inserts.push({ rows: [...rows], resolve, reject });
      if (this.busy) return;
      // The statement starts a microtask later, so every insert asked for in this turn (a batch of
      // jobs added in one loop, say) joins it: started here, the first would go alone.
      this.busy = true;
      queueMicrotask(() => void this.drain());
    });
  }

  /** Records an entry's new place or retry state (lazily; the latest change wins). */
  change(id: string, change: JournalChange): void {
    if (this.removals.has(id)) return;
    this.changes.set(id, change);
    this.schedule();
  }

  /** Forgets an acked or finished entry (lazily, in batches). */
  remove(id: string): void {
    this.changes.delete(id);
    this.removals.add(id);
    this.schedule();
  }

  /** Every stored entry, oldest first. */
  async load(): Promise<JournalEntry[]> {
    const rows = (await this.dataSource.query(
      `SELECT "id", "kind", "queue", "body", "meta", "deliveries", "ready_at" FROM "message_journal" ORDER BY "seq"`,
    )) as Array<{
      id: string;
      kind: 'bus' | 'jobs';
      queue: string;
      body: string;
      meta: unknown;
      deliveries: number | string;
      ready_at: number | string | null;
    }>;
    return rows.map((r) => ({
      id: String(r.id),
      kind: r.kind,
      queue: r.queue,
      body: r.body,
      meta: typeof r.meta === 'string' ? JSON.parse(r.meta) : r.meta,
      deliveries: Number(r.deliveries),
      readyAt: r.ready_at === null ? null : Number(r.ready_at),
    }));
  }

  /** Resolves once every write asked for so far has been attempted (shutdown, tests). */
  async flush(): Promise<void> {
    while (
      this.busy ||
      this.scheduled ||
      this.inserts.length > 0 ||
      this.changes.size > 0 ||
      this.removals.size > 0
    ) {
      if (!this.busy) {
        this.scheduled = false;
        await this.drain();
        continue;
      }
      await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    }
  }

  private schedule(): void {
    if (this.scheduled || this.busy) return;
    this.scheduled = true;
    setImmediate(() => {
      if (!this.scheduled) return;
      this.scheduled = false;
      if (!this.busy) void this.drain();
    });
  }

  /** One writer at a time; whatever arrives meanwhile goes into the next round's statements. */
  private async drain(): Promise<void> {
    this.busy = true;
    try {
      while (this.inserts.length > 0 || this.changes.size > 0 || this.removals.size > 0) {
        const inserts = this.inserts.splice(0);
        if (inserts.length > 0) {
          try {
            await insertRows(
              this.dataSource.manager,
              inserts.flatMap((i) => i.rows),
            );
            for (const i of inserts) i.resolve();
          } catch (e) {
            for (const i of inserts) i.reject(e);
          }
        }
        const changes = [...this.changes].map(([id, c]) => ({ id, ...c }));
        const removals = [...this.removals];
        this.changes.clear();
        this.removals.clear();
        try {
          if (changes.length > 0) await changeRows(this.dataSource, changes);
          if (removals.length > 0) await removeRows(this.dataSource, removals);
        } catch (e) {
          // Not retried: a lost removal means a redelivery after the next restart, a lost change a
          // retry counted from an older state. Both are within at-least-once; say so.
          this.logger.warn(
            'message journal update failed; the entries concerned may be delivered again after a restart',
            {
              changes: changes.length,
              removals: removals.length,
              error: describeError(e),
            },
          );
        }
      }
    } finally {
      this.busy = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}

async function insertRows(em: EntityManager, rows: readonly JournalEntry[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const params: unknown[] = [];
    const values = chunk.map((r, j) => {
      params.push(r.id, r.kind, r.queue, r.body, JSON.stringify(r.meta ?? null), r.deliveries, r.readyAt);
      const b = j * 7;
      return `($${b + 1}::uuid, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}::jsonb, $${b + 6}::int, $${b + 7}::bigint)`;
    });
    await em.query(
      `INSERT INTO "message_journal" ("id", "kind", "queue", "body", "meta", "deliveries", "ready_at") VALUES ${values.join(', ')}`,
      params,
    );
  }
}

async function changeRows(
  ds: DataSource,
  changes: ReadonlyArray<JournalChange & { id: string }>,
): Promise<void> {
  await ds.query(
    `UPDATE "message_journal" j
        SET "queue" = x."queue", "meta" = x."meta", "deliveries" = x."deliveries", "ready_at" = x."ready_at"
       FROM jsonb_to_recordset($1::jsonb) AS x("id" uuid, "queue" varchar, "meta" jsonb, "deliveries" int, "ready_at" bigint)
      WHERE j."id" = x."id"`,
    [
      JSON.stringify(
        changes.map((c) => ({
          id: c.id,
          queue: c.queue,
          meta: c.meta ?? null,
          deliveries: c.deliveries,
          ready_at: c.readyAt,
        })),
      ),
    ],
  );
}

async function removeRows(ds: DataSource, ids: readonly string[]): Promise<void> {
  for (let i = 0; i < ids.length; i += 10_000) {
    await ds.query(
      `DELETE FROM "message_journal" WHERE "id" IN (SELECT (jsonb_array_elements_text($1::jsonb))::uuid)`,
      [JSON.stringify(ids.slice(i, i + 10_000))],
    );
  }
}
