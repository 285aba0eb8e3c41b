import { formatTimestamp, pyJsonDumps } from '@osc/workflow-domain';
import { type EventTriggerRecord, toEventTrigger } from '@osc/workflow-persistence';
import type { RunListSpec } from '../executions/run-list';

/** Wire fields of an event trigger. */
export const EVENT_TRIGGER_FIELDS = [
  'id',
  'name',
  'workflow_id',
  'workflow_input',
  'workflow_params',
  'exchange',
  'topic',
  'event',
  'scope',
  'project_id',
  'created_at',
  'updated_at',
] as const;

/**
 * `GET /v2/event_triggers` in the run-time list dialect (workflow-api.md §4): filters on every field,
 * the admin-only `all_projects` (and `project_id`, which reaches other projects only for admins),
 * marker/limit/sort_keys/sort_dirs/fields.
 */
export const EVENT_TRIGGER_LIST = {
  // The shared list helper names the collection in `next` links only.
  collection: 'event_triggers' as RunListSpec['collection'],
  table: 'event_triggers',
  model: 'EventTrigger',
  fields: EVENT_TRIGGER_FIELDS,
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    workflow_id: { column: 'workflow_id', kind: 'uuid' },
    workflow_input: { column: 'workflow_input', kind: 'json' },
    workflow_params: { column: 'workflow_params', kind: 'json' },
    exchange: { column: 'exchange', kind: 'text' },
    topic: { column: 'topic', kind: 'text' },
    event: { column: 'event', kind: 'text' },
    scope: { column: 'scope', kind: 'text' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: [],
  adminFilters: true,
  policy: 'event_triggers',
} satisfies RunListSpec;

/** A trigger as Mistral renders it: input and params as JSON strings, timestamps `YYYY-MM-DD HH:MM:SS`. */
export function eventTriggerView(t: EventTriggerRecord): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    workflow_id: t.workflowId,
    workflow_input: pyJsonDumps(t.workflowInput),
    workflow_params: pyJsonDumps(t.workflowParams),
    exchange: t.exchange,
    topic: t.topic,
    event: t.event,
    scope: t.scope,
    project_id: t.projectId,
    created_at: formatTimestamp(t.createdAt),
    updated_at: formatTimestamp(t.updatedAt),
  };
}

export const eventTriggerRowView = (row: Record<string, unknown>): Record<string, unknown> =>
  eventTriggerView(toEventTrigger(row));
