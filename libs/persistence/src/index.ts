export {
  type DatabaseOptions,
  type DatabaseEnv,
  type PostgresDatabaseOptions,
  type PgliteDatabaseOptions,
  DEFAULT_DATA_DIR,
  resolveDatabaseOptions,
  parseDatabaseUrl,
} from './data-source/database-options';
export {
  type EntityList,
  type MigrationList,
  type DataSourceExtras,
  createDataSource,
  closeDataSource,
} from './data-source/data-source.factory';
export { runInTransaction } from './data-source/transaction';
export { isEmbeddedSession } from './data-source/pglite-driver';
export { PGLITE_MEMORY } from './data-source/pglite-instance';
export {
  type EngineKind,
  type TestDataSource,
  type TestDataSourceOptions,
  ENGINE_KINDS,
  DEFAULT_TEST_POSTGRES_URL,
  createTestDataSource,
} from './testing/test-data-source';
export { type MigrationClass, combineMigrations } from './migrations/combine-migrations';
export { affectedOf, returnedRows, rowsOf } from './sql/query-results';
export { ROWS_AS_VALUES, type RowColumn, rowSource, unnestOf, valuesOf } from './sql/row-source';
export {
  type EmbeddedMaintenanceOptions,
  type MaintenanceLogger,
  EmbeddedMaintenance,
  FLUSH_STATS_SQL,
} from './maintenance/embedded-maintenance';
