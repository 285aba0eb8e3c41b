import { formatTimestamp, pyJsonDumps } from '@osc/workflow-domain';
import { type EnvironmentRecord, toEnvironment } from '@osc/workflow-persistence';
import type { RunListSpec } from '../executions/run-list';

/** Wire fields of an environment, in Mistral's order (resources.Environment). */
export const ENVIRONMENT_FIELDS = [
  'id',
  'name',
  'description',
  'variables',
  'scope',
  'project_id',
  'created_at',
  'updated_at',
] as const;

/**
 * `GET /v2/environments` in the shared list dialect (workflow-api.md §4): filters `name`,
 * `description`, `variables` (whole-value JSON equality), `scope`, `created_at`, `updated_at`, as
 * Mistral's controller takes them; no `all_projects` or `project_id` (Mistral has neither here).
 * The service widens the project condition to public rows of other projects.
 */
export const ENVIRONMENT_LIST = {
  // The shared list helper names the collection in `next` links only.
  collection: 'environments' as RunListSpec['collection'],
  table: 'environments',
  model: 'Environment',
  fields: ENVIRONMENT_FIELDS,
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    description: { column: 'description', kind: 'text', nullable: true },
    variables: { column: 'variables', kind: 'json', nullable: true },
    scope: { column: 'scope', kind: 'text' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: [],
  adminFilters: false,
  policy: 'environments',
} satisfies RunListSpec;

/** An environment as Mistral renders it: `variables` as a JSON string, timestamps `YYYY-MM-DD HH:MM:SS`. */
export function environmentView(e: EnvironmentRecord): Record<string, unknown> {
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    variables: e.variables === null ? null : pyJsonDumps(e.variables),
    scope: e.scope,
    project_id: e.projectId,
    created_at: formatTimestamp(e.createdAt),
    updated_at: formatTimestamp(e.updatedAt),
  };
}

export const environmentRowView = (row: Record<string, unknown>): Record<string, unknown> =>
  environmentView(toEnvironment(row));
