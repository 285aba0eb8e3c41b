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
export {
  FILTER_OPS,
  SORT_DIRS,
  LIST_FIELD_TYPES,
  DEFAULT_MAX_LIMIT,
  type FilterOp,
  type SortDir,
  type SortKey,
  type ListFieldType,
  type ListField,
  type ListSpec,
  type FilterValue,
  type FieldFilter,
  type AnyOfFilter,
  type ListFilter,
  type ListQuery,
  type ListPage,
} from './list-query/list-query.types';
export {
  type ListDialect,
  type ListParams,
  type ParseListOptions,
  parseListParams,
  parseDatetime,
} from './list-query/parse-list-params';
export { type ApplyListOptions, applyListQuery } from './list-query/apply-list-query';
export { affectedOf, returnedRows, rowsOf } from './sql/query-results';
