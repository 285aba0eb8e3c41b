import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_BATCH_JOB,
  ACTION_RUN_JOB,
  type ActionRunBatchJob,
  type ActionRunJob,
} from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';

/** with-items runs per job: one outbox row, job and executor round trip for this many items. */
export const ITEM_RUNS_PER_JOB = 50;

/**
 * Groups the with-items action runs of one decision into {@link ACTION_RUN_BATCH_JOB} jobs of up to
 * `size` runs, in item order; other items pass unchanged. A lone run stays an {@link ACTION_RUN_JOB}.
 * Job ids derive from the first action execution id, so a redelivered outbox row adds nothing twice.
 */
export function batchItemRuns(items: readonly OutboxItem[], size = ITEM_RUNS_PER_JOB): OutboxItem[] {
  const out: OutboxItem[] = [];
  const runs: ActionRunJob[] = [];
  for (const item of items) {
    if (
      item.destination === 'jobs' &&
      item.job.name === ACTION_RUN_JOB &&
      (item.job.data as ActionRunJob).itemIndex !== undefined
    ) {
      runs.push(item.job.data as ActionRunJob);
    } else {
      out.push(item);
    }
  }
  for (let i = 0; i < runs.length; i += size) {
    const chunk = runs.slice(i, i + size);
    const first = chunk[0]!;
    if (chunk.length === 1) {
      out.push({
        destination: 'jobs',
        queue: ACTION_JOB_QUEUE,
        job: { id: first.actionExecutionId, name: ACTION_RUN_JOB, data: first },
      });
    } else {
      const data: ActionRunBatchJob = { runs: chunk };
      out.push({
        destination: 'jobs',
        queue: ACTION_JOB_QUEUE,
        job: { id: `batch-${first.actionExecutionId}`, name: ACTION_RUN_BATCH_JOB, data },
      });
    }
  }
  return out;
}
