import { ACTION_JOB_QUEUE, ACTION_RUN_JOB, type ActionRunJob } from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';
import { contextFromHeaders, unwrapJobData, wrapJobData } from '@osc/telemetry';
import { runChunkJob } from './item-run-batches';

/** Runs per job when one transaction starts the actions of several executions. */
export const ACTION_RUNS_PER_JOB = 50;

/**
 * Groups the lone action runs one engine transaction starts — typically one per execution of a
 * group transaction — into {@link ACTION_RUN_BATCH_JOB} jobs of up to `size` runs: one outbox row,
 * one job add, fetch and completion, one claim statement and usually one result message for the
 * lot instead of one each. Each run is still claimed and reported on its own, as the item runs of a
 * with-items batch are (`ActionExecutor.runBatch`). Other items pass unchanged, and a single run
 * stays an {@link ACTION_RUN_JOB}. The job id derives from the first run's action execution id, so a
 * redelivered outbox row adds nothing twice; the batch continues the trace of its first run.
 */
export function batchActionRuns(items: readonly OutboxItem[], size = ACTION_RUNS_PER_JOB): OutboxItem[] {
  const out: OutboxItem[] = [];
  const runs: { run: ActionRunJob; trace?: Record<string, string> }[] = [];
  for (const item of items) {
    const job = item.destination === 'jobs' ? item.job : undefined;
    if (
      job &&
      item.queue === ACTION_JOB_QUEUE &&
      job.name === ACTION_RUN_JOB &&
      item.partitionKey === undefined &&
      job.delayMs === undefined &&
      job.attempts === undefined &&
      job.backoff === undefined
    ) {
      const { data, trace } = unwrapJobData(job.data);
      runs.push({ run: data as ActionRunJob, ...(trace ? { trace } : {}) });
    } else {
      out.push(item);
    }
  }
  if (runs.length < 2) return [...items];
  for (let i = 0; i < runs.length; i += size) {
    const chunk = runs.slice(i, i + size);
    const [first] = chunk;
    if (!first) continue;
    const job = runChunkJob(
      chunk.map((c) => c.run),
      'runs',
    );
    if (first.trace?.['traceparent']) job.data = wrapJobData(job.data, contextFromHeaders(first.trace));
    out.push({ destination: 'jobs', queue: ACTION_JOB_QUEUE, job });
  }
  return out;
}
