import { NOTIFY_DELIVER_JOB, type NotifyJob, type NotifyPublisher } from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';
import { notifyQueueOf } from '@osc/notify';
import {
  type Decision,
  type EngineEffect,
  type WorkflowExecution,
  formatTimestamp,
} from '@osc/workflow-domain';

/** Notification jobs (issue 7): one per event, partitioned by execution for ordered delivery. */
export function notifyItems(
  ex: WorkflowExecution,
  decision: Decision,
  e: Extract<EngineEffect, { type: 'notify' }>,
  newId: () => string,
): OutboxItem[] {
  const publishers = ex.params['notify'] as NotifyPublisher[] | undefined;
  if (!Array.isArray(publishers) || publishers.length === 0) return [];
  const wanted = publishers.filter((p) => !p.event_types || p.event_types.includes(e.event));
  if (wanted.length === 0) return [];
  const common = {
    workflow_name: ex.workflowName,
    workflow_namespace: ex.workflowNamespace,
    workflow_id: ex.workflowId,
    project_id: ex.projectId,
  };
  let event: NotifyJob['event'];
  if (e.taskExecutionId) {
    const t = [...decision.changes.tasksCreated, ...decision.changes.tasksUpdated].find(
      (x) => x.id === e.taskExecutionId,
    );
    if (!t) return [];
    event = {
      id: t.id,
      name: t.name,
      workflow_execution_id: ex.id,
      ...common,
      state: e.state,
      state_info: e.stateInfo,
      type: t.type,
      created_at: formatTimestamp(t.createdAt)!,
      updated_at: formatTimestamp(t.updatedAt),
      // times as they were at the event: one decision may take the task further (inline actions)
      started_at: formatTimestamp(e.startedAt !== undefined ? e.startedAt : t.startedAt),
      finished_at: formatTimestamp(e.finishedAt !== undefined ? e.finishedAt : t.finishedAt),
      event: e.event as NotifyJob['event']['event'] & `TASK_${string}`,
    };
  } else {
    event = {
      id: ex.id,
      name: ex.workflowName,
      ...common,
      state: e.state,
      state_info: e.stateInfo,
      task_execution_id: ex.taskExecutionId,
      root_execution_id: ex.rootExecutionId,
      created_at: formatTimestamp(ex.createdAt)!,
      updated_at: formatTimestamp(ex.updatedAt),
      event: e.event as NotifyJob['event']['event'] & `WORKFLOW_${string}`,
    };
  }
  const job: NotifyJob = { executionId: ex.id, seq: Date.now(), publishers: wanted, event };
  return [
    {
      destination: 'jobs',
      queue: notifyQueueOf(ex.rootExecutionId ?? ex.id),
      job: {
        id: newId(),
        name: NOTIFY_DELIVER_JOB,
        data: job,
        attempts: 5,
        backoff: { type: 'exponential', delayMs: 500 },
      },
      partitionKey: ex.rootExecutionId ?? ex.id,
    },
  ];
}
