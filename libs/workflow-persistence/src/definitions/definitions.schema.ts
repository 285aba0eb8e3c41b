import type { SchemaPart } from '@osc/platform';
import { definitionEntities } from './definition.entities';
import { definitionMigrations } from './definitions.migration';

/**
 * The definitions part of the workflow side's schema: workflow definitions, workbooks and action
 * definitions. workflow-api, workflow-engine and cron-scheduler all register it.
 */
export const workflowDefinitionsSchema: SchemaPart = {
  name: 'workflow-definitions',
  entities: definitionEntities,
  migrations: definitionMigrations,
};
