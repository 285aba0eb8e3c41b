import type { SchemaPart } from '@osc/platform';
import { dynamicActionMigrations } from './dynamic-actions.migration';

/**
 * Code sources and dynamic actions. Plain SQL, no entities. workflow-api (the REST resources) and
 * workflow-engine (its executors run dynamic actions) register it.
 */
export const workflowDynamicActionsSchema: SchemaPart = {
  name: 'workflow-dynamic-actions',
  entities: [],
  migrations: dynamicActionMigrations,
};
