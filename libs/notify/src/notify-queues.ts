import { NOTIFY_JOB_QUEUE } from '@osc/contracts';

/**
 * Notification deliveries are spread over this many job queues, by execution tree. Each queue runs
 * one delivery at a time across all engine processes, which keeps the events of one execution tree
 * in order; a slow or dead webhook then holds up only the trees of its own queue, not every
 * execution's notifications.
 */
export const NOTIFY_QUEUE_PARTITIONS = 8;

/** Every notify job queue, `workflow.notify.0` … `workflow.notify.7`: the engine consumes them all. */
export const NOTIFY_QUEUES: readonly string[] = Array.from(
  { length: NOTIFY_QUEUE_PARTITIONS },
  (_, i) => `${NOTIFY_JOB_QUEUE}.${i}`,
);

/** The notify job queue of the execution tree whose root is `rootExecutionId` (FNV-1a of the id). */
export function notifyQueueOf(rootExecutionId: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < rootExecutionId.length; i++) {
    h ^= rootExecutionId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return NOTIFY_QUEUES[h % NOTIFY_QUEUE_PARTITIONS] ?? NOTIFY_JOB_QUEUE;
}
