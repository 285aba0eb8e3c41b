import { formatTimestamp } from '@osc/workflow-domain';
import { type DynamicActionRecord, toDynamicAction } from '@osc/workflow-persistence';
import type { RunListSpec } from '../executions/run-list';

/** Wire fields of a dynamic action, in Mistral's order (resources.DynamicAction). */
export const DYNAMIC_ACTION_FIELDS = [
  'id',
  'name',
  'namespace',
  'code_source_id',
  'code_source_name',
  'class_name',
  'project_id',
  'scope',
  'created_at',
  'updated_at',
] as const;

/**
 * `GET /v2/dynamic_actions` in the shared list dialect: filters `name`, `namespace`, `scope`,
 * `created_at`, `updated_at`, plus `project_id` and `all_projects`, as Mistral's controller takes
 * them (and the columns a client may want to filter on besides). Public rows of other projects are
 * added by the service.
 */
export const DYNAMIC_ACTION_LIST = {
  collection: 'dynamic_actions' as RunListSpec['collection'],
  table: 'dynamic_action_definitions',
  model: 'DynamicActionDefinition',
  fields: DYNAMIC_ACTION_FIELDS,
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    namespace: { column: 'namespace', kind: 'text' },
    class_name: { column: 'class_name', kind: 'text' },
    code_source_id: { column: 'code_source_id', kind: 'uuid' },
    code_source_name: { column: 'code_source_name', kind: 'text' },
    scope: { column: 'scope', kind: 'text' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: [],
  adminFilters: true,
  policy: 'dynamic_actions',
} satisfies RunListSpec;

export function dynamicActionView(a: DynamicActionRecord): Record<string, unknown> {
  return {
    id: a.id,
    name: a.name,
    namespace: a.namespace,
    code_source_id: a.codeSourceId,
    code_source_name: a.codeSourceName,
    class_name: a.className,
    project_id: a.projectId,
    scope: a.scope,
    created_at: formatTimestamp(a.createdAt),
    updated_at: formatTimestamp(a.updatedAt),
  };
}

export const dynamicActionRowView = (row: Record<string, unknown>): Record<string, unknown> =>
  dynamicActionView(toDynamicAction(row));
