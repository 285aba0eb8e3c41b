import type { SchemaPart } from '@osc/platform';
import {
  workflowCronTriggersSchema,
  workflowDefinitionsSchema,
  workflowEnvironmentsSchema,
  workflowEventTriggersSchema,
  workflowExecutionsSchema,
} from '@osc/workflow-persistence';

/** The database tables this app reads and writes (the workflow side's schema parts). */
export const SCHEMA_PARTS: readonly SchemaPart[] = [
  workflowDefinitionsSchema,
  workflowExecutionsSchema,
  workflowCronTriggersSchema,
  workflowEventTriggersSchema,
  workflowEnvironmentsSchema,
];
