import type { DataSource, EntityManager, QueryRunner } from 'typeorm';
import type { ExecutionSnapshot } from '@osc/workflow-domain';
import {
  type NamedActions,
  type SpecCache,
  type StatementBatchRunner,
  lockSnapshotsAtOnce,
} from '@osc/workflow-persistence';

/**
 * Whether the query runner keeps its transaction state where {@link adoptTransaction} sets it
 * (TypeORM 0.3's `BaseQueryRunner`: `isTransactionActive` and the nesting depth `transactionDepth`).
 */
const canAdopt = (qr: QueryRunner): boolean =>
  (qr as unknown as { transactionDepth?: unknown }).transactionDepth === 0 && !qr.isTransactionActive;

/**
 * Tells the query runner that the transaction a statement batch opened on its connection is its own,
 * as `startTransaction` does after sending START TRANSACTION: its commit and rollback then work as
 * usual, with their subscribers (the outbox writer's "rows were committed").
 */
const adoptTransaction = (qr: QueryRunner): void => {
  Object.assign(qr, { isTransactionActive: true, transactionDepth: 1 });
};

/**
 * Runs `work` in a transaction that starts by locking the executions of `executionIds` and loading
 * their snapshots: the opening statement, the lock and the load travel in one round trip (one simple
 * query of three statements, see `lockSnapshotsAtOnce`) instead of three. Commits after `work`, rolls
 * back if anything throws. Executions that do not exist (deleted) are absent from the snapshots.
 */
export async function inSnapshotTransaction<T>(
  dataSource: DataSource,
  specs: SpecCache,
  executionIds: readonly string[],
  actionIds: ReadonlyMap<string, readonly string[] | NamedActions>,
  work: (em: EntityManager, snapshots: Map<string, ExecutionSnapshot>) => Promise<T>,
): Promise<T> {
  const qr = dataSource.createQueryRunner();
  let client: StatementBatchRunner | undefined;
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
    const result = await work(qr.manager, snapshots);
    await qr.commitTransaction();
    return result;
  } catch (err) {
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
