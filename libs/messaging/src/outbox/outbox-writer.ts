import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { InvalidInputError } from '@osc/errors';
import { type CommandMessage, assertQueueName, encodeCommand } from '../command-bus';
import { type NewJob, normalizeJob } from '../job-queue';
import { withTraceData, withTraceHeaders } from '../tracing';

/** One thing to send after commit. Items with the same `partitionKey` are delivered in the order added. */
export type OutboxItem =
  | { destination: 'bus'; queue: string; message: CommandMessage; partitionKey?: string }
  | { destination: 'jobs'; queue: string; job: NewJob; partitionKey?: string };

/** Rows per INSERT statement (4 parameters each, well under PostgreSQL's 65,535). */
const INSERT_CHUNK = 1000;

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
  private readonly pending = new WeakSet<QueryRunner>();
  private readonly attached = new WeakSet<DataSource>();

  async add(em: EntityManager, items: OutboxItem | OutboxItem[]): Promise<void> {
    const list = Array.isArray(items) ? items : [items];
    if (list.length === 0) return;
    const rows = list.map(toRow);
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      const chunk = rows.slice(i, i + INSERT_CHUNK);
      const params: unknown[] = [];
      const values = chunk.map((r, j) => {
        params.push(r.destination, r.queue, r.payload, r.partitionKey);
        const b = j * 4;
        return `($${b + 1}, $${b + 2}, $${b + 3}::jsonb, $${b + 4})`;
      });
      await em.query(
        `INSERT INTO "outbox" ("destination", "queue", "payload", "partition_key") VALUES ${values.join(', ')}`,
        params,
      );
    }
    const qr = em.queryRunner;
    if (qr?.isTransactionActive) {
      this.attach(em.connection);
      this.pending.add(qr);
    } else {
      this.emit();
    }
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
        if (this.pending.delete(event.queryRunner)) this.emit();
      },
      afterTransactionRollback: (event: TransactionRollbackEvent) => {
        if (event.queryRunner.isTransactionActive) return;
        this.pending.delete(event.queryRunner);
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

function toRow(item: OutboxItem): {
  destination: string;
  queue: string;
  payload: string;
  partitionKey: string | null;
} {
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
  switch (item.destination) {
    case 'bus': {
      encodeCommand(item.message);
      // The row remembers the trace of the transaction that wrote it; the relay continues it.
      const m = withTraceHeaders(item.message);
      const payload = JSON.stringify({
        id: m.id,
        type: m.type,
        payload: m.payload ?? null,
        headers: m.headers,
      });
      return { destination: 'bus', queue: item.queue, payload, partitionKey };
    }
    case 'jobs': {
      normalizeJob(item.queue, item.job);
      return { destination: 'jobs', queue: item.queue, payload: JSON.stringify(withTraceData(item.job)), partitionKey };
    }
    default:
      throw new InvalidInputError(
        `outbox destination must be bus or jobs, got ${String((item as { destination: unknown }).destination)}`,
      );
  }
}
