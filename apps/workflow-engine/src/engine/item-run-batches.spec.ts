import { ACTION_JOB_QUEUE, ACTION_RUN_BATCH_JOB, ACTION_RUN_JOB, type ActionRunJob } from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';
import { batchItemRuns } from './item-run-batches';

const run = (id: string, itemIndex?: number): OutboxItem => ({
  destination: 'jobs',
  queue: ACTION_JOB_QUEUE,
  job: {
    id,
    name: ACTION_RUN_JOB,
    data: { actionExecutionId: id, ...(itemIndex !== undefined ? { itemIndex } : {}) } as ActionRunJob,
  },
});
const other: OutboxItem = {
  destination: 'jobs',
  queue: 'workflow.timers',
  job: { id: 't', name: 'engine.timer-fired', data: {} },
};

describe('batchItemRuns', () => {
  it('groups item runs in item order, keeps plain runs and other items as they are', () => {
    const items = [run('plain'), other, ...Array.from({ length: 5 }, (_, i) => run(`a${i}`, i))];
    const out = batchItemRuns(items, 2);
    expect(out.map((o) => (o.destination === 'jobs' ? [o.job.name, o.job.id] : []))).toEqual([
      [ACTION_RUN_JOB, 'plain'],
      ['engine.timer-fired', 't'],
      [ACTION_RUN_BATCH_JOB, 'batch-a0'],
      [ACTION_RUN_BATCH_JOB, 'batch-a2'],
      [ACTION_RUN_JOB, 'a4'],
    ]);
    const first = out[2]!;
    expect(
      first.destination === 'jobs' &&
        (first.job.data as { runs: ActionRunJob[] }).runs.map((r) => r.itemIndex),
    ).toEqual([0, 1]);
  });
});
