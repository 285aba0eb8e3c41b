import { Logger } from '@nestjs/common';
import type {
  DataSource,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import type { Queryable } from '../sql';

/**
 * The block-storage story in the logs: one info line per volume, snapshot and backup status
 * change, written once the change is committed (never for a change rolled back), and one per 10%
 * of a running backup or restore. Every line is JSON with the ids as keys (`volumeId`,
 * `snapshotId`, `backupId`, `projectId`), so one grep follows a resource through all the apps.
 *
 * The repositories' status writes (compare-and-set, inserts, soft deletes, reset-state updates)
 * are the only callers of {@link recordStatusChange}: whoever changes a status (API, scheduler,
 * worker, reconciler, Settlements) is told about without logging of its own.
 */
export interface StatusChange {
  readonly resource: 'volume' | 'snapshot' | 'backup';
  readonly projectId: string;
  readonly status: string;
  /** Known when the change allowed exactly one source status (or the row was new: null). */
  readonly previousStatus?: string | null;
  readonly volumeId?: string | null;
  readonly snapshotId?: string | null;
  readonly backupId?: string | null;
  /** A restore's target volume (backups). */
  readonly restoreVolumeId?: string | null;
}

export type StorySink = (fields: Record<string, unknown>) => void;

const logger = new Logger('block-storage');
let sink: StorySink = (fields) => logger.log(fields);

/** Replaces where story lines go (tests capture them); returns the previous sink. */
export function setStorySink(next: StorySink): StorySink {
  const prev = sink;
  sink = next;
  return prev;
}

const pending = new WeakMap<QueryRunner, StatusChange[]>();
const attached = new WeakSet<DataSource>();

function lineOf(c: StatusChange): Record<string, unknown> {
  const out: Record<string, unknown> = {
    msg: `${c.resource} ${c.status}`,
    event: 'block-storage.status',
    resource: c.resource,
  };
  if (c.volumeId) out['volumeId'] = c.volumeId;
  if (c.snapshotId) out['snapshotId'] = c.snapshotId;
  if (c.backupId) out['backupId'] = c.backupId;
  out['projectId'] = c.projectId;
  out['status'] = c.status;
  if (c.previousStatus !== undefined) out['previousStatus'] = c.previousStatus;
  if (c.restoreVolumeId) out['restoreVolumeId'] = c.restoreVolumeId;
  return out;
}

function tell(fields: Record<string, unknown>): void {
  try {
    sink(fields);
  } catch {
    // a log line must never fail the committed change it tells about
  }
}

/**
 * Tells the story of a status change made through `db`: at once when `db` runs outside a
 * transaction (the statement has committed), else when the transaction commits; nothing when it
 * rolls back.
 */
export function recordStatusChange(db: Queryable, change: StatusChange): void {
  const em = db as { queryRunner?: QueryRunner; connection?: DataSource };
  const qr = em.queryRunner;
  if (!qr?.isTransactionActive || !em.connection) {
    tell(lineOf(change));
    return;
  }
  attach(em.connection);
  const list = pending.get(qr);
  if (list) list.push(change);
  else pending.set(qr, [change]);
}

/** A running backup or restore crossed a 10% step (its progress is stored: the line follows). */
export function recordProgress(p: {
  readonly operation: 'create' | 'restore';
  readonly backupId: string;
  readonly volumeId: string;
  readonly snapshotId?: string | null;
  readonly projectId: string;
  readonly restoreVolumeId?: string | null;
  readonly progress: number;
}): void {
  tell({
    msg: `backup ${p.operation} ${p.progress}%`,
    event: 'block-storage.progress',
    operation: p.operation,
    volumeId: p.volumeId,
    ...(p.snapshotId ? { snapshotId: p.snapshotId } : {}),
    backupId: p.backupId,
    projectId: p.projectId,
    ...(p.restoreVolumeId ? { restoreVolumeId: p.restoreVolumeId } : {}),
    progress: p.progress,
  });
}

function attach(dataSource: DataSource): void {
  if (attached.has(dataSource)) return;
  attached.add(dataSource);
  const subscriber: EntitySubscriberInterface = {
    // Also broadcast for savepoints: only the outermost commit makes changes visible.
    afterTransactionCommit: (event: TransactionCommitEvent) => {
      if (event.queryRunner.isTransactionActive) return;
      const list = pending.get(event.queryRunner);
      if (!list) return;
      pending.delete(event.queryRunner);
      for (const c of list) tell(lineOf(c));
    },
    afterTransactionRollback: (event: TransactionRollbackEvent) => {
      if (event.queryRunner.isTransactionActive) return;
      pending.delete(event.queryRunner);
    },
  };
  dataSource.subscribers.push(subscriber);
}
