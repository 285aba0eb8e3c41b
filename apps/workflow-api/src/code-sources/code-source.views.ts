import { formatTimestamp } from '@osc/workflow-domain';
import { type CodeSourceRecord, toCodeSource } from '@osc/workflow-persistence';
import type { RunListSpec } from '../executions/run-list';

/** Wire fields of a code source, in Mistral's order (resources.CodeSource; `actions` is never set). */
export const CODE_SOURCE_FIELDS = [
  'id',
  'name',
  'namespace',
  'content',
  'version',
  'project_id',
  'scope',
  'created_at',
  'updated_at',
] as const;

/**
 * `GET /v2/code_sources` in the shared list dialect: filters `name`, `namespace`, `scope`,
 * `created_at`, `updated_at`, plus `project_id` and `all_projects` (`code_sources:list:all_projects`),
 * as Mistral's controller takes them. The service widens the project condition to public rows.
 */
export const CODE_SOURCE_LIST = {
  // The shared list helper names the collection in `next` links only.
  collection: 'code_sources' as RunListSpec['collection'],
  table: 'code_sources',
  model: 'CodeSource',
  fields: CODE_SOURCE_FIELDS,
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    namespace: { column: 'namespace', kind: 'text' },
    scope: { column: 'scope', kind: 'text' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: [],
  adminFilters: true,
  policy: 'code_sources',
} satisfies RunListSpec;

/** A code source as Mistral renders it: timestamps `YYYY-MM-DD HH:MM:SS`, `updated_at` null until changed. */
export function codeSourceView(c: CodeSourceRecord): Record<string, unknown> {
  return {
    id: c.id,
    name: c.name,
    namespace: c.namespace,
    content: c.content,
    version: c.version,
    project_id: c.projectId,
    scope: c.scope,
    created_at: formatTimestamp(c.createdAt),
    updated_at: formatTimestamp(c.updatedAt),
  };
}

export const codeSourceRowView = (row: Record<string, unknown>): Record<string, unknown> =>
  codeSourceView(toCodeSource(row));
