import type { SchemaPart } from '@osc/platform';
import { eventTriggerEntities } from './event-trigger.entity';
import { eventTriggerMigrations } from './event-triggers.migration';

/** The event triggers part of the workflow side's schema; workflow-api and cron-scheduler register it. */
export const workflowEventTriggersSchema: SchemaPart = {
  name: 'workflow-event-triggers',
  entities: eventTriggerEntities,
  migrations: eventTriggerMigrations,
};
