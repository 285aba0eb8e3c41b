import { type DataSource, type EntityManager } from 'typeorm';
import { type IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { PglitePool, sessionScope } from './pglite-driver';

/**
 * Runs `fn` in one database transaction: commit when it resolves, roll back when it throws
 * (the error is rethrown unchanged).
 *
 * Rules (see the package README): every query inside `fn` goes through `em` — never the data
 * source's own manager or repositories, which would use another connection (outside the
 * transaction on PostgreSQL, a deadlock on the embedded engine; this function turns the latter into
 * an error). Status changes are compare-and-set updates (`… WHERE id = :id AND status IN (:from)`)
 * whose affected-row count is checked.
 */
export async function runInTransaction<T>(
  dataSource: DataSource,
  fn: (em: EntityManager) => Promise<T>,
  isolationLevel?: IsolationLevel,
): Promise<T> {
  const pool: unknown = (dataSource.driver as { master?: unknown }).master;
  const body = async (em: EntityManager): Promise<T> => {
    if (!(pool instanceof PglitePool)) return fn(em);
    const scope = { pool, active: true };
    try {
      return await sessionScope.run(scope, () => fn(em));
    } finally {
      scope.active = false;
    }
  };
  return isolationLevel ? dataSource.transaction(isolationLevel, body) : dataSource.transaction(body);
}
