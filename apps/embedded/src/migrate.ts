import { z } from 'zod';
import { type Env, databaseUrlSchema, parseConfig } from '@osc/http-common';
import { closeDataSource, createDataSource } from '@osc/persistence';
import { productSchema } from './index';

const schema = z.object({ DATABASE_URL: databaseUrlSchema });

/** The one variable `osc-entrypoint migrate` reads. */
export const loadMigrateConfig = (env: Env): { DATABASE_URL: string } => parseConfig('migrate', schema, env);

/**
 * Applies every pending migration of every app to the shared PostgreSQL database named by
 * DATABASE_URL and returns the names of the migrations the database has afterwards. This is what
 * `osc-entrypoint migrate` (the Kubernetes migration Job, the compose stack's `migrate` service)
 * runs before a rollout. Apps still migrate their own parts at start under the same advisory
 * lock, so a rollout without the Job stays correct; the Job only moves the work out of the pods'
 * start-up.
 */
export async function migrateDatabase(env: Env): Promise<{ migrations: string[] }> {
  const { DATABASE_URL } = loadMigrateConfig(env);
  // Two connections: one holds the migration advisory lock while the other migrates.
  const { entities, migrations } = productSchema();
  const dataSource = await createDataSource(
    { kind: 'postgres', url: DATABASE_URL, poolSize: 2 },
    entities,
    migrations,
  );
  try {
    const rows = (await dataSource.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[];
    return { migrations: rows.map((r) => r.name) };
  } finally {
    await closeDataSource(dataSource);
  }
}
