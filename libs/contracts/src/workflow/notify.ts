/** Notification event names (DSL-16.3). */
export const WORKFLOW_EVENTS = [
  'WORKFLOW_LAUNCHED',
  'WORKFLOW_RESUMED',
  'WORKFLOW_RERUN',
  'WORKFLOW_PAUSED',
  'WORKFLOW_SUCCEEDED',
  'WORKFLOW_FAILED',
  'WORKFLOW_CANCELLED',
] as const;
export const TASK_EVENTS = [
  'TASK_LAUNCHED',
  'TASK_RESUMED',
  'TASK_RERUN',
  'TASK_PAUSED',
  'TASK_SUCCEEDED',
  'TASK_FAILED',
  'TASK_CANCELLED',
  'TASK_SKIPPED',
] as const;
export type WorkflowEventName = (typeof WORKFLOW_EVENTS)[number];
export type TaskEventName = (typeof TASK_EVENTS)[number];
export type NotifyEventName = WorkflowEventName | TaskEventName;

/** A publisher of the `notify` execution parameter (DSL-16.2). */
export interface NotifyPublisher {
  type: 'webhook' | 'amqp' | 'noop';
  event_types?: NotifyEventName[];
  url?: string;
  headers?: Record<string, string>;
  exchange?: string;
  routing_key?: string;
}

/** Execution event payload (DSL-16.4); timestamps `YYYY-MM-DD HH:MM:SS`. */
export interface WorkflowEventPayload {
  id: string;
  name: string;
  workflow_name: string;
  workflow_namespace: string;
  workflow_id: string;
  state: string;
  state_info: string | null;
  project_id: string;
  task_execution_id: string | null;
  root_execution_id: string | null;
  created_at: string;
  updated_at: string | null;
  event: WorkflowEventName;
}

/** Task event payload (DSL-16.4). */
export interface TaskEventPayload {
  id: string;
  name: string;
  workflow_execution_id: string;
  workflow_name: string;
  workflow_namespace: string;
  workflow_id: string;
  state: string;
  state_info: string | null;
  type: string;
  project_id: string;
  created_at: string;
  updated_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  event: TaskEventName;
}

/** Payload of a `notify.deliver` job: one event for the publishers of its execution, in order per execution. */
export interface NotifyJob {
  executionId: string;
  /** Monotonic per execution, for ordered delivery. */
  seq: number;
  publishers: NotifyPublisher[];
  event: WorkflowEventPayload | TaskEventPayload;
}
