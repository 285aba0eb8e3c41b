import { DataSource, type DataSourceOptions } from 'typeorm';
import { type PostgresConnectionOptions } from 'typeorm/driver/postgres/PostgresConnectionOptions';
import { type DatabaseOptions } from './database-options';
import { createPgliteDriver } from './pglite-driver';
import { closePglite, openPglite } from './pglite-instance';

export type EntityList = NonNullable<DataSourceOptions['entities']>;
export type MigrationList = NonNullable<DataSourceOptions['migrations']>;

/** TypeORM options an app may add; engine, schema sync and migrations are not negotiable. */
export type DataSourceExtras = Partial<
  Pick<
    PostgresConnectionOptions,
    | 'name'
    | 'logging'
    | 'logger'
    | 'maxQueryExecutionTime'
    | 'applicationName'
    | 'namingStrategy'
    | 'subscribers'
  >
>;

/** Arbitrary constant: the advisory lock that serialises migration runs across processes. */
const MIGRATION_LOCK_KEY = 73_019_462;

/**
 * Opens the database chosen by `options`, creates pgcrypto (`gen_random_uuid()` on both engines),
 * applies every pending migration (each in its own transaction; never `synchronize`) and returns
 * the initialised data source. Both engines go through TypeORM's postgres driver, so entities,
 * migrations and queries are written once.
 *
 * On PostgreSQL, concurrent starters (several replicas) take turns through an advisory lock so
 * a migration runs once. On PGlite the single session is lent to one query runner at a time: see
 * `pglite-driver.ts` and the package README for the rule that follows from it.
 */
export async function createDataSource(
  options: DatabaseOptions,
  entities: EntityList,
  migrations: MigrationList,
  extra: DataSourceExtras = {},
): Promise<DataSource> {
  const common = {
    ...extra,
    type: 'postgres' as const,
    entities,
    migrations,
    migrationsRun: false,
    migrationsTransactionMode: 'each' as const,
    synchronize: false,
    uuidExtension: 'pgcrypto' as const,
  };
  let dataSource: DataSource;
  if (options.kind === 'postgres') {
    dataSource = new DataSource({ ...common, url: options.url, poolSize: options.poolSize ?? 10 });
    await dataSource.initialize();
  } else {
    const pglite = await openPglite(options.dataDir);
    dataSource = new DataSource({ ...common, driver: createPgliteDriver(pglite), poolSize: 1 });
    try {
      await dataSource.initialize();
    } catch (err) {
      await closePglite(pglite).catch(() => undefined);
      throw err;
    }
  }
  try {
    await migrate(dataSource, options.kind);
  } catch (err) {
    await dataSource.destroy().catch(() => undefined);
    throw err;
  }
  return dataSource;
}

/** Closes the pool (and, for the embedded engine, flushes and closes PGlite). Idempotent. */
export async function closeDataSource(dataSource: DataSource): Promise<void> {
  if (dataSource.isInitialized) await dataSource.destroy();
}

async function migrate(dataSource: DataSource, kind: DatabaseOptions['kind']): Promise<void> {
  if (kind === 'pglite') {
    await dataSource.query('CREATE EXTENSION IF NOT EXISTS pgcrypto');
    await dataSource.runMigrations({ transaction: 'each' });
    return;
  }
  const lock = dataSource.createQueryRunner();
  try {
    await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      await ensurePgcrypto(dataSource);
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await lock.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lock.release();
  }
}

/**
 * pgcrypto is a trusted extension (PostgreSQL 13+), so a database owner may create it; where that is
 * refused, core `gen_random_uuid()` (13+) is enough as long as it exists.
 */
async function ensurePgcrypto(dataSource: DataSource): Promise<void> {
  try {
    await dataSource.query('CREATE EXTENSION IF NOT EXISTS pgcrypto');
  } catch (err) {
    await dataSource.query('SELECT gen_random_uuid()').catch(() => {
      throw err;
    });
  }
}
