import {
  NOTIFY_DELIVER_JOB,
  type NotifyJob,
  type TaskEventName,
  type TaskEventPayload,
  type WorkflowEventName,
  type WorkflowEventPayload,
} from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';
import { notifyQueueOf, publishersFor, taskEventPayload, workflowEventPayload } from '@osc/notify';
import type { Decision, EngineEffect, WorkflowExecution } from '@osc/workflow-domain';

type NotifyEffect = Extract<EngineEffect, { type: 'notify' }>;

/**
 * The payload of one event (DSL-16.4), built by @osc/notify from the subject as it was when the event
 * happened: the state and, for a task, the start and finish times carried by the effect, since one
 * decision may take the subject further (inline actions). Null when the task is not in the decision.
 */
function eventPayload(
  ex: WorkflowExecution,
  decision: Decision,
  e: NotifyEffect,
): WorkflowEventPayload | TaskEventPayload | null {
  const workflow = {
    workflowName: ex.workflowName,
    workflowNamespace: ex.workflowNamespace,
    workflowId: ex.workflowId,
    projectId: ex.projectId,
    state: e.state,
    stateInfo: e.stateInfo,
  };
  if (!e.taskExecutionId) {
    return workflowEventPayload(
      {
        ...workflow,
        id: ex.id,
        name: ex.workflowName,
        taskExecutionId: ex.taskExecutionId,
        rootExecutionId: ex.rootExecutionId,
        createdAt: ex.createdAt,
        updatedAt: ex.updatedAt,
      },
      e.event as WorkflowEventName,
    );
  }
  const t = [...decision.changes.tasksCreated, ...decision.changes.tasksUpdated].find(
    (x) => x.id === e.taskExecutionId,
  );
  if (!t) return null;
  return taskEventPayload(
    {
      ...workflow,
      id: t.id,
      name: t.name,
      workflowExecutionId: ex.id,
      type: t.type,
      createdAt: t.createdAt,
      updatedAt: t.updatedAt,
      startedAt: e.startedAt !== undefined ? e.startedAt : t.startedAt,
      finishedAt: e.finishedAt !== undefined ? e.finishedAt : t.finishedAt,
    },
    e.event as TaskEventName,
  );
}

/** Notification jobs (issue 7): one per event, partitioned by execution for ordered delivery. */
export function notifyItems(
  ex: WorkflowExecution,
  decision: Decision,
  e: NotifyEffect,
  newId: () => string,
): OutboxItem[] {
  const publishers = publishersFor(ex.params['notify'], e.event);
  if (publishers.length === 0) return [];
  const event = eventPayload(ex, decision, e);
  if (!event) return [];
  const job: NotifyJob = { executionId: ex.id, seq: Date.now(), publishers, event };
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
