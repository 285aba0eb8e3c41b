import type { SchemaPart } from '@osc/platform';
import { cronTriggerEntities } from './cron-trigger.entity';
import { cronTriggerMigrations } from './cron-triggers.migration';

/** The cron triggers part of the workflow side's schema; workflow-api and cron-scheduler register it. */
export const workflowCronTriggersSchema: SchemaPart = {
  name: 'workflow-cron-triggers',
  entities: cronTriggerEntities,
  migrations: cronTriggerMigrations,
};
