import type { SchemaPart } from '@osc/platform';
import { executionMigrations } from './executions.migration';

/**
 * The executions part of the workflow side's schema: workflow, task and action executions. Access is
 * plain SQL (the engine's snapshot lock and batched writes), so the part registers no entities.
 * workflow-api, workflow-engine and cron-scheduler all register it.
 */
export const workflowExecutionsSchema: SchemaPart = {
  name: 'workflow-executions',
  entities: [],
  migrations: [...executionMigrations],
};
