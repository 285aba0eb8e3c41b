import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { ExecutionSnapshot } from '@osc/workflow-domain';
import {
  type CommitAlong,
  type NamedActions,
  type SpecCache,
  type StatementBatchRunner,
  lockSnapshotsAtOnce,
} from '@osc/workflow-persistence';

/** The query runner's nesting depth of transactions (TypeORM 0.3's `BaseQueryRunner`: `transactionDepth`). */
const depthOf = (qr: QueryRunner): unknown =>
  (qr as unknown as { transactionDepth?: unknown }).transactionDepth;

/**
 * Whether the query runner keeps its transaction state where {@link adoptTransaction} sets it
 * (TypeORM 0.3's `BaseQueryRunner`: `isTransactionActive` and the nesting depth `transactionDepth`).
 */
const canAdopt = (qr: QueryRunner): boolean => depthOf(qr) === 0 && !qr.isTransactionActive;

/**
 * Tells the query runner that the transaction a statement batch opened on its connection is its own,
 * as `startTransaction` does after sending START TRANSACTION: its commit and rollback then work as
 * usual, with their subscribers (the outbox writer's "rows were committed").
 */
const adoptTransaction = (qr: QueryRunner): void => {
  Object.assign(qr, { isTransactionActive: true, transactionDepth: 1 });
};

/** The connection's transaction status as `pg` reads it from the server: 'I' idle, 'T' open, 'E' failed. */
const transactionStatus = (client: unknown): string | null | undefined =>
  (client as { getTransactionStatus?: () => string | null }).getTransactionStatus?.();

/**
 * What the query runner does after sending COMMIT (TypeORM 0.3's `commitTransaction`), for a
 * transaction whose last statement carried its COMMIT ({@link CommitAlong}): its commit
 * subscribers (the outbox writer's hand-off) then run as after any commit.
 */
const committedAlong = async (qr: QueryRunner): Promise<void> => {
  Object.assign(qr, { isTransactionActive: false, transactionDepth: 0 });
  await qr.broadcaster.broadcast('AfterTransactionCommit');
};

/**
 * Runs `work` in a transaction that starts by locking the executions of `executionIds` and loading
 * their snapshots: the opening statement, the lock and the load travel in one round trip (one simple
 * query of three statements, see `lockSnapshotsAtOnce`) instead of three. Commits after `work`, rolls
 * back if anything throws. Executions that do not exist (deleted) are absent from the snapshots.
 * `work`'s last statement may carry the COMMIT instead (`end`, see {@link CommitAlong}): one round
 * trip less; the commit subscribers run after `work` returns, as they would after a COMMIT of its own.
 */
export async function inSnapshotTransaction<T>(
  dataSource: DataSource,
  specs: SpecCache,
  executionIds: readonly string[],
  actionIds: ReadonlyMap<string, readonly string[] | NamedActions>,
  work: (em: EntityManager, snapshots: Map<string, ExecutionSnapshot>, end: CommitAlong) => Promise<T>,
): Promise<T> {
  const qr = dataSource.createQueryRunner();
  let client: StatementBatchRunner | undefined;
  let committed = false;
  const end: CommitAlong = {
    ask: async () => {
      // only the outermost transaction, on a connection that reports whether it is still open
      if (committed || depthOf(qr) !== 1 || !qr.isTransactionActive) return false;
      if (transactionStatus(client) !== 'T') return false;
      await qr.broadcaster.broadcast('BeforeTransactionCommit');
      return true;
    },
    committed: () => {
      committed = true;
    },
  };
  try {
    client = (await qr.connect()) as StatementBatchRunner;
    const adopt = canAdopt(qr);
    if (!adopt) await qr.startTransaction();
    const snapshots = await lockSnapshotsAtOnce(client, qr.manager, executionIds, specs, actionIds, {
      begin: adopt,
      opened: () => {
        if (adopt) adoptTransaction(qr);
      },
    });
    const result = await work(qr.manager, snapshots, end);
    if (committed && transactionStatus(client) === 'I') await committedAlong(qr);
    else await qr.commitTransaction();
    return result;
  } catch (err) {
    if (committed && qr.isTransactionActive) {
      // the COMMIT ran, something after it failed: the rows are there, their subscribers run
      await committedAlong(qr).catch(() => undefined);
      throw err;
    }
    try {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      // the batch failed after opening the transaction (a lock timeout): close it on the connection
      else await client?.query('ROLLBACK');
    } catch {
      // the connection is gone: so is the transaction
    }
    throw err;
  } finally {
    await qr.release();
  }
}
