import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type DataSource } from 'typeorm';
import {
  closeDataSource,
  createDataSource,
  type DataSourceExtras,
  type EntityList,
  type MigrationList,
} from '../data-source/data-source.factory';
import { PGLITE_MEMORY } from '../data-source/pglite-instance';

/** The two engines every persistence conformance suite runs on. */
export const ENGINE_KINDS = ['pglite', 'postgres'] as const;
export type EngineKind = (typeof ENGINE_KINDS)[number];

/** The local test server (user postgres, trust auth) used when no URL is given. */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDataSourceOptions {
  readonly entities?: EntityList;
  readonly migrations?: MigrationList;
  /** Server used to create and drop the throw-away database (postgres kind only). */
  readonly postgresUrl?: string;
  readonly extra?: DataSourceExtras;
}

export interface TestDataSource {
  readonly kind: EngineKind;
  readonly dataSource: DataSource;
  /** Closes the data source and drops the throw-away database. Safe to call twice. */
  readonly cleanup: () => Promise<void>;
}

/**
 * An initialised data source on an empty database with `migrations` applied:
 * - `pglite`: a new in-memory PGlite seeded from the cached cluster dump (about a second);
 * - `postgres`: a new uniquely named database on the test server, dropped by `cleanup`.
 * A missing server makes this reject (tests fail, never skip).
 */
export async function createTestDataSource(
  kind: EngineKind,
  options: TestDataSourceOptions = {},
): Promise<TestDataSource> {
  const entities = options.entities ?? [];
  const migrations = options.migrations ?? [];
  if (kind === 'pglite') {
    const dataSource = await createDataSource(
      { kind, dataDir: PGLITE_MEMORY },
      entities,
      migrations,
      options.extra,
    );
    return { kind, dataSource, cleanup: () => closeDataSource(dataSource) };
  }
  const adminUrl = options.postgresUrl ?? DEFAULT_TEST_POSTGRES_URL;
  const database = `osc_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE "${database}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  let dataSource: DataSource;
  try {
    dataSource = await createDataSource(
      { kind, url: url.toString(), poolSize: 5 },
      entities,
      migrations,
      options.extra,
    );
  } catch (err) {
    await dropDatabase(adminUrl, database);
    throw err;
  }
  let cleaned = false;
  return {
    kind,
    dataSource,
    cleanup: async () => {
      if (cleaned) return;
      cleaned = true;
      await closeDataSource(dataSource);
      await dropDatabase(adminUrl, database);
    },
  };
}

async function dropDatabase(adminUrl: string, database: string): Promise<void> {
  await withAdminClient(adminUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
  );
}

async function withAdminClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
