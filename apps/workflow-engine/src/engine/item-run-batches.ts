import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_BATCH_JOB,
  ACTION_RUN_JOB,
  type ActionRunBatchJob,
  type ActionRunJob,
} from '@osc/contracts';
import type { NewJob, OutboxItem } from '@osc/messaging';

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
    out.push({
      destination: 'jobs',
      queue: ACTION_JOB_QUEUE,
      job: runChunkJob(runs.slice(i, i + size), 'batch'),
    });
  }
  return out;
}

/**
 * The job that starts `chunk` (one or more runs): a lone run stays an {@link ACTION_RUN_JOB} under
 * its action execution's id, more make one {@link ACTION_RUN_BATCH_JOB} `<batchIdPrefix>-<first id>`.
 */
export function runChunkJob(chunk: readonly ActionRunJob[], batchIdPrefix: string): NewJob {
  const first = chunk[0]!;
  if (chunk.length === 1) return { id: first.actionExecutionId, name: ACTION_RUN_JOB, data: first };
  const data: ActionRunBatchJob = { runs: [...chunk] };
  return { id: `${batchIdPrefix}-${first.actionExecutionId}`, name: ACTION_RUN_BATCH_JOB, data };
}
