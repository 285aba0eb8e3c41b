import {
  type NotifyEventName,
  type NotifyJob,
  type NotifyPublisher,
  type TaskEventName,
  type TaskEventPayload,
  type WorkflowEventName,
  type WorkflowEventPayload,
} from '@osc/contracts';
import { formatTimestamp } from '@osc/workflow-domain';

// Which state change is which event (DSL-16.3) is decided in one place, by the engine's pure core:
// `workflowNotifyEvent`, `taskNotifyEvent` and `taskStartEvent` of @osc/workflow-domain. This module
// builds the payloads (DSL-16.4) and picks the publishers (DSL-16.2).

/** The execution fields an event payload reads (a row, a domain snapshot or an API view all fit). */
export interface WorkflowExecutionFacts {
  id: string;
  name: string;
  workflowName: string;
  workflowNamespace: string;
  workflowId: string;
  state: string;
  stateInfo: string | null;
  projectId: string;
  taskExecutionId: string | null;
  rootExecutionId: string | null;
  createdAt: Date | string;
  updatedAt: Date | string | null;
}

export interface TaskExecutionFacts {
  id: string;
  name: string;
  workflowExecutionId: string;
  workflowName: string;
  workflowNamespace: string;
  workflowId: string;
  state: string;
  stateInfo: string | null;
  type: string;
  projectId: string;
  createdAt: Date | string;
  updatedAt: Date | string | null;
  startedAt: Date | string | null;
  finishedAt: Date | string | null;
}

/** DSL-16.4 execution payload, keys in the reference's order (`WORKFLOW_EVENT_KEYS`). */
export function workflowEventPayload(
  ex: WorkflowExecutionFacts,
  event: WorkflowEventName,
): WorkflowEventPayload {
  return {
    id: ex.id,
    name: ex.name,
    workflow_name: ex.workflowName,
    workflow_namespace: ex.workflowNamespace,
    workflow_id: ex.workflowId,
    state: ex.state,
    state_info: ex.stateInfo,
    project_id: ex.projectId,
    task_execution_id: ex.taskExecutionId,
    root_execution_id: ex.rootExecutionId,
    created_at: formatTimestamp(ex.createdAt) ?? '',
    updated_at: formatTimestamp(ex.updatedAt),
    event,
  };
}

/** DSL-16.4 task payload, keys in the reference's order (`TASK_EVENT_KEYS`). */
export function taskEventPayload(task: TaskExecutionFacts, event: TaskEventName): TaskEventPayload {
  return {
    id: task.id,
    name: task.name,
    workflow_execution_id: task.workflowExecutionId,
    workflow_name: task.workflowName,
    workflow_namespace: task.workflowNamespace,
    workflow_id: task.workflowId,
    state: task.state,
    state_info: task.stateInfo,
    type: task.type,
    project_id: task.projectId,
    created_at: formatTimestamp(task.createdAt) ?? '',
    updated_at: formatTimestamp(task.updatedAt),
    started_at: formatTimestamp(task.startedAt),
    finished_at: formatTimestamp(task.finishedAt),
    event,
  };
}

// The payload keys in the reference's order (its engine builds the map, its notifier appends `event`).
const WORKFLOW_EVENT_KEYS: readonly (keyof WorkflowEventPayload)[] = [
  'id',
  'name',
  'workflow_name',
  'workflow_namespace',
  'workflow_id',
  'state',
  'state_info',
  'project_id',
  'task_execution_id',
  'root_execution_id',
  'created_at',
  'updated_at',
  'event',
];
const TASK_EVENT_KEYS: readonly (keyof TaskEventPayload)[] = [
  'id',
  'name',
  'workflow_execution_id',
  'workflow_name',
  'workflow_namespace',
  'workflow_id',
  'state',
  'state_info',
  'type',
  'project_id',
  'created_at',
  'updated_at',
  'started_at',
  'finished_at',
  'event',
];

/**
 * `event` with its keys in the reference's order (DSL-16.4), whatever order it arrives in: a job read
 * back from the outbox (a PostgreSQL `jsonb` column) has its keys in that type's order. Keys the
 * payload does not define keep their place after the known ones.
 */
export function inPayloadOrder<E extends WorkflowEventPayload | TaskEventPayload>(event: E): E {
  const order: readonly string[] = event.event.startsWith('TASK_') ? TASK_EVENT_KEYS : WORKFLOW_EVENT_KEYS;
  const ordered: Record<string, unknown> = {};
  for (const key of order) if (key in event) ordered[key] = event[key as keyof E];
  for (const [key, value] of Object.entries(event)) if (!(key in ordered)) ordered[key] = value;
  return ordered as E;
}

const PUBLISHER_TYPES = ['webhook', 'amqp', 'noop'] as const;

/**
 * The publishers of an execution's `notify` parameter that want `event` (DSL-16.2): entries that are
 * not maps are ignored, an absent or empty `event_types` means every event. Unknown `type`s are kept
 * (the dispatcher logs and skips them) so that a typo is visible rather than silently dropped.
 */
export function publishersFor(notify: unknown, event: NotifyEventName): NotifyPublisher[] {
  if (!Array.isArray(notify)) return [];
  return notify.filter((p): p is NotifyPublisher => {
    if (typeof p !== 'object' || p === null || Array.isArray(p)) return false;
    const types = (p as { event_types?: unknown }).event_types;
    return !Array.isArray(types) || types.length === 0 || types.includes(event);
  });
}

/** Whether `type` names a publisher this service has. */
export const isKnownPublisherType = (type: unknown): type is NotifyPublisher['type'] =>
  (PUBLISHER_TYPES as readonly unknown[]).includes(type);

/**
 * The `notify.deliver` job for one event, or null when no publisher wants it. `seq` orders the events
 * of one execution (the engine's outbox assigns it).
 */
export function notifyJobFor(
  executionId: string,
  seq: number,
  notify: unknown,
  event: WorkflowEventPayload | TaskEventPayload,
): NotifyJob | null {
  const publishers = publishersFor(notify, event.event);
  return publishers.length > 0 ? { executionId, seq, publishers, event } : null;
}
