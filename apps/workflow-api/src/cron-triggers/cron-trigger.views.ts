import { formatTimestamp, pyJsonDumps } from '@osc/workflow-domain';
import { type CronTriggerRecord, toCronTrigger } from '@osc/workflow-persistence';
import type { RunListSpec } from '../executions/run-list';

/** Wire fields of a cron trigger, in Mistral's order. */
export const CRON_TRIGGER_FIELDS = [
  'id',
  'name',
  'workflow_name',
  'workflow_id',
  'workflow_input',
  'workflow_params',
  'project_id',
  'scope',
  'pattern',
  'remaining_executions',
  'first_execution_time',
  'next_execution_time',
  'created_at',
  'updated_at',
] as const;

/**
 * `GET /v2/cron_triggers` in the run-time list dialect (workflow-api.md §4): every seed filter, the
 * admin-only `project_id` / `all_projects`, marker/limit/sort_keys/sort_dirs/fields.
 */
export const CRON_TRIGGER_LIST = {
  // The shared list helper names the collection in `next` links only.
  collection: 'cron_triggers' as RunListSpec['collection'],
  table: 'cron_triggers',
  model: 'CronTrigger',
  fields: CRON_TRIGGER_FIELDS,
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    workflow_name: { column: 'workflow_name', kind: 'text' },
    workflow_id: { column: 'workflow_id', kind: 'uuid' },
    workflow_input: { column: 'workflow_input', kind: 'json' },
    workflow_params: { column: 'workflow_params', kind: 'json' },
    scope: { column: 'scope', kind: 'text' },
    pattern: { column: 'pattern', kind: 'text', nullable: true },
    remaining_executions: { column: 'remaining_executions', kind: 'text', nullable: true },
    first_execution_time: { column: 'first_execution_time', kind: 'timestamp', nullable: true },
    next_execution_time: { column: 'next_execution_time', kind: 'timestamp' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: [],
  adminFilters: true,
  policy: 'cron_triggers',
} satisfies RunListSpec;

/** A trigger as Mistral renders it: JSON-typed fields as JSON strings, timestamps `YYYY-MM-DD HH:MM:SS`. */
export function cronTriggerView(t: CronTriggerRecord): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    workflow_name: t.workflowName,
    workflow_id: t.workflowId,
    workflow_input: pyJsonDumps(t.workflowInput),
    workflow_params: pyJsonDumps(t.workflowParams),
    project_id: t.projectId,
    scope: t.scope,
    pattern: t.pattern,
    remaining_executions: t.remainingExecutions,
    first_execution_time: formatTimestamp(t.firstExecutionTime),
    next_execution_time: formatTimestamp(t.nextExecutionTime),
    created_at: formatTimestamp(t.createdAt),
    updated_at: formatTimestamp(t.updatedAt),
  };
}

export const cronTriggerRowView = (row: Record<string, unknown>): Record<string, unknown> =>
  cronTriggerView(toCronTrigger(row));
