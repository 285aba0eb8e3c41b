import type { SchemaPart } from '@osc/platform';
import { blockStorageEntities, blockStorageMigrations } from '@osc/block-storage-persistence';

/** The database tables this app reads and writes (the block-storage side's schema parts). */
export const SCHEMA_PARTS: readonly SchemaPart[] = [
  { name: 'block-storage', entities: blockStorageEntities, migrations: blockStorageMigrations },
];
