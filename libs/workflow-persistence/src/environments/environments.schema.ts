import type { SchemaPart } from '@osc/platform';
import { environmentEntities } from './environment.entity';
import { environmentMigrations } from './environments.migration';

/** The environments part of the workflow side's schema; workflow-api and cron-scheduler register it. */
export const workflowEnvironmentsSchema: SchemaPart = {
  name: 'workflow-environments',
  entities: environmentEntities,
  migrations: environmentMigrations,
};
