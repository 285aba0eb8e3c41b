import { randomUUID } from 'node:crypto';
import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { InvalidInputError } from '@osc/errors';
import { type RowColumn, rowSource } from '@osc/persistence';
import {
  type AfterCommit,
  type CommandBus,
  type CommandMessage,
  assertQueueName,
  encodeCommand,
} from '../command-bus';
import { type JobQueue, type NewJob, normalizeJob } from '../job-queue';
import { withTraceData, withTraceHeaders } from '../tracing';
import type { PublishedRows } from './published-rows';

/** One thing to send after commit. Items with the same `partitionKey` are delivered in the order added. */
export type OutboxItem =
  | { destination: 'bus'; queue: string; message: CommandMessage; partitionKey?: string }
  | { destination: 'jobs'; queue: string; job: NewJob; partitionKey?: string };

/** Rows per INSERT statement (5 parameters each, well under PostgreSQL's 65,535). */
const INSERT_CHUNK = 1000;

/**
 * `claimable_at` of a row its writer hands off itself: relays skip it for this long, the time a
 * hand-off has to publish and delete it; a writer that dies first leaves it to them afterwards.
 */
export const HAND_OFF_LEASE_SECONDS = 10;
const HAND_OFF_LEASE = `now() + interval '${HAND_OFF_LEASE_SECONDS} seconds'`;

/** Makes leased rows claimable by relays at once (rows already gone are simply not found). */
export async function releaseLeases(em: EntityManager, rows: readonly { id: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await em.query(`UPDATE "outbox" SET "claimable_at" = NULL WHERE "id" = ANY($1::uuid[])`, [
    rows.map((r) => r.id),
  ]);
}

/**
 * A committed outbox row handed to the `onHandOff` listener: its id (to delete it once published)
 * and what it carries, as the relay reads it back from the table.
 */
export interface HandedOffRow {
  id: string;
  destination: 'bus' | 'jobs';
  queue: string;
  payload: unknown;
}

/**
 * A bus and a job queue that journal in the caller's transaction (`publishInTransaction` and
 * `addInTransaction`: embedded mode's in-process adapters, whose journal lives in the same
 * database). Given one, the writer hands items to them directly instead of writing outbox rows.
 */
export interface TransactionalMessaging {
  bus: Pick<CommandBus, 'publishInTransaction'>;
  jobs: Pick<JobQueue, 'addInTransaction'>;
}

/**
 * Records outgoing commands and jobs in the caller's transaction (`add(em, items)`), so they exist
 * if and only if the state change commits. Items are validated here, inside the transaction, so a
 * bad message fails the business operation instead of blocking the relay later.
 *
 * `onCommitted` listeners run right after a transaction that added rows commits (a TypeORM
 * transaction subscriber, attached to the data source on first use); wire it to
 * `OutboxRelay.notify()` for low latency. Rows added outside a transaction notify at once.
 */
export class OutboxWriter {
  private readonly listeners = new Set<() => void>();
  private handOffListener?: (rows: HandedOffRow[]) => void;
  /** Published rows whose DELETE the next INSERT carries (`onHandOff`). */
  private published?: PublishedRows;
  /** Published rows a transaction's INSERT deletes: given back if it does not commit. */
  private readonly deleting = new WeakMap<QueryRunner, string[]>();
  /** Transactions whose rows the relay must move (the `onCommitted` listeners are told). */
  private readonly pending = new WeakSet<QueryRunner>();
  /** Rows of a transaction to hand off after its commit, unless it is in `pending`. */
  private readonly handed = new WeakMap<QueryRunner, HandedOffRow[]>();
  /** Leased rows of a transaction whose savepoint rolled back: the relay moves them after the commit. */
  private readonly unleash = new WeakMap<QueryRunner, HandedOffRow[]>();
  private readonly attached = new WeakSet<DataSource>();
  /** Hand-overs to run when the transaction that journaled them commits (direct mode). */
  private readonly handOvers = new WeakMap<QueryRunner, AfterCommit[]>();

  /**
   * `direct`: journal items with the caller's transaction in these adapters (embedded mode) instead
   * of writing outbox rows for a relay to move there in a transaction of its own. The guarantee is
   * the same — an item exists if and only if the business transaction commits, consumers see it
   * only after that commit, and a process that dies finds it in the journal at the next start —
   * for one INSERT instead of an outbox INSERT plus the relay's claim, journal INSERT, DELETE and
   * commit. Items added outside a transaction still go through outbox rows.
   */
  constructor(private readonly direct?: TransactionalMessaging) {}

  async add(em: EntityManager, items: OutboxItem | OutboxItem[]): Promise<void> {
    const list = Array.isArray(items) ? items : [items];
    if (list.length === 0) return;
    const qr = em.queryRunner;
    const publishIn = this.direct?.bus.publishInTransaction?.bind(this.direct.bus);
    const addIn = this.direct?.jobs.addInTransaction?.bind(this.direct.jobs);
    if (publishIn && addIn && qr?.isTransactionActive) {
      await this.journal(em, qr, list, publishIn, addIn);
      return;
    }
    const rows = list.map(toRow);
    const active = qr?.isTransactionActive ? qr : undefined;
    const relay = this.relayMoves(rows, active);
    const claimableAt = relay ? 'NULL' : HAND_OFF_LEASE;
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = rows.slice(i, i + INSERT_CHUNK);
      const params: unknown[] = [];
      const insert = insertRows(chunk, (v) => `$${params.push(v)}`, claimableAt);
      if (i > 0 || !this.published) {
        await em.query(insert, params);
        continue;
      }
      // The rows a hand-off published ride on the first INSERT as a DELETE (`onHandOff`).
      const deleted = await this.published.insertCarryingDeletes(em, insert, params);
      if (active && deleted.length > 0) {
        this.attach(em.connection);
        this.deleting.set(active, [...(this.deleting.get(active) ?? []), ...deleted]);
      }
    }
    await this.inserted(em, active, rows, relay);
  }

  /**
   * {@link add} with its statement folded into the caller's: `run` gets the outbox rows of `items` —
   * and the DELETE of the rows a hand-off published, which an INSERT of `add` carries (`onHandOff`) —
   * as data-modifying statements, their values bound with `bind`, and runs them as CTEs of a
   * statement of its own (`applyChangesOfMany`'s `writes`): one round trip for both. Everything else
   * is `add`'s: the rows are validated the same way (before `run`), carry the same hand-off lease or
   * none, are handed off or left to the relay after the outermost commit, and published rows whose
   * DELETE rode on the statement are given back if it fails or its transaction rolls back (a
   * savepoint included). `run` calls `writes` at most once, right before it sends the statement,
   * and rejects if that statement failed. Where `add` would not write one INSERT of rows in a
   * transaction (direct mode's journal, no transaction, no items, more than one INSERT's rows),
   * `run` gets no `writes` and `add` follows it; so it does if `run` did not call `writes`.
   */
  async addAlong<T>(
    em: EntityManager,
    items: readonly OutboxItem[],
    run: (writes?: (bind: (value: unknown) => string) => string[]) => Promise<T>,
  ): Promise<T> {
    const qr = em.queryRunner;
    const active = qr?.isTransactionActive ? qr : undefined;
    if (!active || !this.writesRows || items.length === 0 || items.length > INSERT_CHUNK) {
      const out = await run();
      await this.add(em, [...items]);
      return out;
    }
    const rows = items.map(toRow);
    let relay = false;
    let deleted: string[] | undefined;
    const writes = (bind: (value: unknown) => string): string[] => {
      if (deleted) throw new Error('the outbox rows of addAlong are written once');
      relay = this.relayMoves(rows, active);
      const statements = [insertRows(rows, bind, relay ? 'NULL' : HAND_OFF_LEASE)];
      // the rows a hand-off published ride on this INSERT's statement as a DELETE, as on `add`'s
      deleted = this.published?.take() ?? [];
      if (deleted.length > 0)
        statements.push(`DELETE FROM "outbox" WHERE "id" = ANY(${bind(deleted)}::uuid[])`);
      return statements;
    };
    let out: T;
    try {
      out = await run(writes);
    } catch (e) {
      // the statement did not run (or its transaction is lost): they wait again
      if (deleted?.length) this.published?.add(deleted);
      throw e;
    }
    if (!deleted) {
      await this.add(em, [...items]);
      return out;
    }
    if (deleted.length > 0) {
      this.attach(em.connection);
      this.deleting.set(active, [...(this.deleting.get(active) ?? []), ...deleted]);
    }
    await this.inserted(em, active, rows, relay);
    return out;
  }

  /**
   * Whether the relay moves these rows: rows with a partition key keep their order through the
   * relay's partition locks; the others are handed off (see onHandOff), unless the transaction also
   * has rows for the relay, which then moves them all. Rows to hand off carry a lease that keeps
   * relays away from them.
   */
  private relayMoves(rows: readonly { partitionKey: string | null }[], active?: QueryRunner): boolean {
    return (
      !this.handOffListener ||
      rows.some((r) => r.partitionKey !== null) ||
      (active !== undefined && this.pending.has(active))
    );
  }

  /** After rows were inserted: hand them off or wake the relay, after the outermost commit if in a transaction. */
  private async inserted(
    em: EntityManager,
    active: QueryRunner | undefined,
    rows: readonly ReturnType<typeof toRow>[],
    relay: boolean,
  ): Promise<void> {
    const free = rows.map((r) => ({
      id: r.id,
      destination: r.destination,
      queue: r.queue,
      payload: r.message,
    }));
    if (active) {
      this.attach(em.connection);
      if (relay) {
        // rows this transaction meant to hand off go to the relay with the rest: lift their lease
        const leased = this.handed.get(active);
        if (leased) {
          this.handed.delete(active);
          await releaseLeases(em, leased);
        }
        this.pending.add(active);
      } else {
        const handed = this.handed.get(active);
        if (handed) handed.push(...free);
        else this.handed.set(active, free);
      }
    } else if (relay) {
      this.emit();
    } else {
      this.handOff(free, em.connection);
    }
  }

  /**
   * Hands the rows a transaction added to `listener` right after it commits (`OutboxRelay.handOff`:
   * published and deleted at once, without a claim transaction of the relay), or at once for rows
   * added outside a transaction. A transaction that added a row with a partition key still wakes the
   * `onCommitted` listeners instead (its relay keeps the partition's order), and so does one in which
   * a savepoint rolled back (what it added may be gone). A row handed off is still a row: if it is
   * not published and deleted (a crash, a broker failure), a relay publishes it later, so a message
   * may arrive twice, never not at all.
   *
   * `published` (`OutboxRelay.published`): the rows the hand-off has published; the next INSERT of
   * this writer deletes them in the same statement (a data-modifying CTE), so they cost no DELETE
   * statement and commit of their own. A transaction that rolls back (a savepoint included) gives
   * them back, to be deleted by a later INSERT or by `published` itself.
   */
  onHandOff(listener: (rows: HandedOffRow[]) => void, published?: PublishedRows): void {
    // Until the listener takes them, its rows are leased (`claimable_at`, HAND_OFF_LEASE): a relay
    // leaves them alone, so a row handed off is not published a second time by a relay's pass.
    this.handOffListener = listener;
    this.published = published;
  }

  private handOff(rows: HandedOffRow[], connection?: DataSource): void {
    try {
      if (!this.handOffListener) throw new Error('no hand-off listener');
      this.handOffListener(rows);
    } catch {
      // the relay moves them once their lease is lifted (or has passed)
      if (connection) void this.releaseAndEmit(connection.manager, rows);
      else this.emit();
    }
  }

  /** Lifts the lease of rows no hand-off will take, then wakes the relay (after a commit). */
  private async releaseAndEmit(em: EntityManager, rows: readonly HandedOffRow[]): Promise<void> {
    try {
      await releaseLeases(em, rows);
    } catch {
      // the lease passes on its own
    }
    this.emit();
  }

  /**
   * The outbox rows of `items` as an `INSERT … SELECT` that a caller puts into a statement of its own
   * (a data-modifying CTE beside its business row: one round trip for both), each value bound with
   * `bind`, the rows written only where `condition` (SQL) holds. Validated as `add` validates. Null
   * in direct mode, whose journal is written by `add`. Run the statement inside a transaction and
   * call {@link added} with its manager: listeners are told after the commit, as for `add`.
   */
  insertStatement(
    items: readonly OutboxItem[],
    bind: (value: unknown) => string,
    condition = 'true',
  ): string | null {
    if (!this.writesRows) return null;
    if (items.length === 0) return null;
    const values = items
      .map(toRow)
      .map(
        (r) =>
          `(${bind(r.destination)}::varchar, ${bind(r.queue)}::varchar, ${bind(r.payload)}::jsonb, ${bind(r.partitionKey)}::varchar)`,
      );
    return `INSERT INTO "outbox" ("destination", "queue", "payload", "partition_key")
      SELECT v.* FROM (VALUES ${values.join(', ')}) AS v WHERE ${condition}`;
  }

  /**
   * Whether items are outbox rows, so that {@link insertStatement} gives a statement (not in direct
   * mode, whose journal `add` writes): a caller whose whole write is one statement with it then
   * needs no transaction of its own.
   */
  get writesRows(): boolean {
    return !(this.direct?.bus.publishInTransaction && this.direct.jobs.addInTransaction);
  }

  /** Rows of {@link insertStatement} were written with `em`: tell the listeners after its transaction commits. */
  added(em: EntityManager): void {
    const qr = em.queryRunner;
    if (qr?.isTransactionActive) {
      this.attach(em.connection);
      this.pending.add(qr);
    } else {
      this.emit();
    }
  }

  /**
   * Direct mode: validates the items as outbox rows are validated, then journals them per
   * destination queue (order kept inside each queue, as the relay publishes) with `em`; the
   * hand-overs run after the outermost commit, in the order added.
   */
  private async journal(
    em: EntityManager,
    qr: QueryRunner,
    list: readonly OutboxItem[],
    publishIn: NonNullable<CommandBus['publishInTransaction']>,
    addIn: NonNullable<JobQueue['addInTransaction']>,
  ): Promise<void> {
    for (const item of list) validate(item);
    const messages = new Map<string, CommandMessage[]>();
    const jobs = new Map<string, NewJob[]>();
    for (const item of list) {
      if (item.destination === 'bus')
        messages.set(item.queue, [...(messages.get(item.queue) ?? []), item.message]);
      else jobs.set(item.queue, [...(jobs.get(item.queue) ?? []), item.job]);
    }
    const handOvers: AfterCommit[] = [];
    for (const [queue, group] of messages) handOvers.push(await publishIn(em, queue, group));
    for (const [queue, group] of jobs) handOvers.push(await addIn(em, queue, group));
    this.attach(em.connection);
    const queued = this.handOvers.get(qr);
    if (queued) queued.push(...handOvers);
    else this.handOvers.set(qr, handOvers);
  }

  /** Subscribes to "outbox rows were committed"; returns the unsubscribe function. */
  onCommitted(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private attach(dataSource: DataSource): void {
    if (this.attached.has(dataSource)) return;
    this.attached.add(dataSource);
    const subscriber: EntitySubscriberInterface = {
      // TypeORM also broadcasts these for savepoints (nested transactions): only the outermost
      // commit makes rows visible, and only the outermost rollback discards all of them.
      afterTransactionCommit: (event: TransactionCommitEvent) => {
        if (event.queryRunner.isTransactionActive) return;
        this.deleting.delete(event.queryRunner);
        const handOvers = this.handOvers.get(event.queryRunner);
        if (handOvers) {
          this.handOvers.delete(event.queryRunner);
          for (const handOver of handOvers) {
            try {
              handOver();
            } catch {
              // the adapter is closing: the items stay journaled and are delivered at the next start
            }
          }
        }
        const rows = this.handed.get(event.queryRunner);
        this.handed.delete(event.queryRunner);
        const unleash = this.unleash.get(event.queryRunner);
        this.unleash.delete(event.queryRunner);
        if (unleash) void this.releaseAndEmit(dataSource.manager, unleash);
        else if (this.pending.delete(event.queryRunner)) this.emit();
        else if (rows) this.handOff(rows, dataSource);
      },
      afterTransactionRollback: (event: TransactionRollbackEvent) => {
        // Rows whose DELETE was undone (perhaps only by a savepoint: deleting twice is harmless).
        const deleting = this.deleting.get(event.queryRunner);
        if (deleting) {
          this.deleting.delete(event.queryRunner);
          this.published?.add(deleting);
        }
        if (event.queryRunner.isTransactionActive) {
          // a savepoint rolled back: rows added so far may be gone, so the relay moves what is
          // left, their lease lifted after the commit
          const rows = this.handed.get(event.queryRunner);
          if (rows) {
            this.handed.delete(event.queryRunner);
            const earlier = this.unleash.get(event.queryRunner);
            if (earlier) earlier.push(...rows);
            else this.unleash.set(event.queryRunner, rows);
            this.pending.add(event.queryRunner);
          }
          return;
        }
        this.pending.delete(event.queryRunner);
        this.handed.delete(event.queryRunner);
        this.unleash.delete(event.queryRunner);
        this.handOvers.delete(event.queryRunner);
      },
    };
    dataSource.subscribers.push(subscriber);
  }

  private emit(): void {
    for (const l of this.listeners) {
      try {
        l();
      } catch {
        // a listener's failure must not fail the committed business operation
      }
    }
  }
}

/** Checks the parts every item has (an object, its queue name, its partition key); returns the key. */
function checkEnvelope(item: OutboxItem): string | null {
  if (item === null || typeof item !== 'object')
    throw new InvalidInputError('an outbox item must be an object');
  assertQueueName(item.queue);
  const partitionKey = item.partitionKey ?? null;
  if (
    partitionKey !== null &&
    (typeof partitionKey !== 'string' || partitionKey.length === 0 || partitionKey.length > 255)
  ) {
    throw new InvalidInputError('an outbox partition key must be a string of 1 to 255 characters');
  }
  return partitionKey;
}

/** What `toRow` checks, without building the row (direct mode; the adapters check the rest). */
function validate(item: OutboxItem): void {
  checkEnvelope(item);
  if (item.destination === 'bus') encodeCommand(item.message);
  else if (item.destination === 'jobs') normalizeJob(item.queue, item.job);
  else
    throw new InvalidInputError(
      `outbox destination must be bus or jobs, got ${String((item as { destination: unknown }).destination)}`,
    );
}

function toRow(item: OutboxItem): {
  id: string;
  destination: 'bus' | 'jobs';
  queue: string;
  payload: string;
  /** The payload before serialization (what the relay would read back). */
  message: unknown;
  partitionKey: string | null;
} {
  const partitionKey = checkEnvelope(item);
  switch (item.destination) {
    case 'bus': {
      encodeCommand(item.message);
      // The row remembers the trace of the transaction that wrote it; the relay continues it.
      const m = withTraceHeaders(item.message);
      const message = { id: m.id, type: m.type, payload: m.payload ?? null, headers: m.headers };
      return {
        id: randomUUID(),
        destination: 'bus',
        queue: item.queue,
        payload: JSON.stringify(message),
        message,
        partitionKey,
      };
    }
    case 'jobs': {
      normalizeJob(item.queue, item.job);
      const job = withTraceData(item.job);
      return {
        id: randomUUID(),
        destination: 'jobs',
        queue: item.queue,
        payload: JSON.stringify(job),
        message: job,
        partitionKey,
      };
    }
    default:
      throw new InvalidInputError(
        `outbox destination must be bus or jobs, got ${String((item as { destination: unknown }).destination)}`,
      );
  }
}

/** An outbox row's bound columns, named as in the table. */
const OUTBOX_COLUMNS: readonly RowColumn<ReturnType<typeof toRow>>[] = [
  ['id', 'uuid', (r) => r.id],
  ['destination', 'varchar', (r) => r.destination],
  ['queue', 'varchar', (r) => r.queue],
  ['payload', 'jsonb', (r) => r.payload],
  ['partition_key', 'varchar', (r) => r.partitionKey],
];

/**
 * The INSERT of outbox rows (`add`'s and `addAlong`'s), their values bound with `bind` as
 * `rowSource` binds them: beyond three rows the text does not change with their number, so the
 * statement it rides on (a group's rows statement) is prepared once for every group size
 * (`executeBuilt`).
 */
function insertRows(
  rows: readonly ReturnType<typeof toRow>[],
  bind: (value: unknown) => string,
  claimableAt: string,
): string {
  return `INSERT INTO "outbox" ("id", "destination", "queue", "payload", "partition_key", "claimable_at")
    SELECT v.id, v.destination, v.queue, v.payload, v.partition_key, ${claimableAt} FROM ${rowSource(rows, OUTBOX_COLUMNS, bind)}`;
}
