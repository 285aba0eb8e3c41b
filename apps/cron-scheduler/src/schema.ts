import type { SchemaPart } from '@osc/platform';
import { blockStorageEntities, blockStorageMigrations } from '@osc/block-storage-persistence';
import {
  workflowCronTriggersSchema,
  workflowDefinitionsSchema,
  workflowEnvironmentsSchema,
  workflowEventTriggersSchema,
  workflowExecutionsSchema,
} from '@osc/workflow-persistence';

/** The database tables this app reads and writes: the workflow side's, and the block-storage side's for backup policies. */
export const SCHEMA_PARTS: readonly SchemaPart[] = [
  workflowDefinitionsSchema,
  workflowExecutionsSchema,
  workflowCronTriggersSchema,
  workflowEventTriggersSchema,
  workflowEnvironmentsSchema,
  { name: 'block-storage', entities: blockStorageEntities, migrations: blockStorageMigrations },
];
