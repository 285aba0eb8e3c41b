import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_BATCH_JOB,
  ACTION_RUN_JOB,
  ENGINE_COMMAND_QUEUE,
  type ActionRunBatchJob,
  type ActionRunJob,
} from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';
import { unwrapJobData } from '@osc/telemetry';
import { batchActionRuns } from './action-run-batches';

const TRACE = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
const run = (id: string, executionId: string, traced = false): OutboxItem => {
  const data = { actionExecutionId: id, executionId } as ActionRunJob;
  return {
    destination: 'jobs',
    queue: ACTION_JOB_QUEUE,
    job: { id, name: ACTION_RUN_JOB, data: traced ? { '$osc.trace': TRACE, '$osc.data': data } : data },
  };
};
const timer: OutboxItem = {
  destination: 'jobs',
  queue: 'workflow.timers',
  job: { id: 't', name: 'engine.timer-fired', data: {}, delayMs: 1000 },
};
const itemBatch: OutboxItem = {
  destination: 'jobs',
  queue: ACTION_JOB_QUEUE,
  job: { id: 'batch-i0', name: ACTION_RUN_BATCH_JOB, data: { runs: [] } },
};
const command: OutboxItem = {
  destination: 'bus',
  queue: ENGINE_COMMAND_QUEUE,
  message: { id: 'c', type: 'engine.start-execution', payload: {} },
};
const names = (out: OutboxItem[]) =>
  out.map((o) => (o.destination === 'jobs' ? [o.job.name, o.job.id] : ['bus', o.message.id]));

describe('batchActionRuns', () => {
  it('puts the lone runs of several executions into batch jobs of the given size, in order, and keeps every other item', () => {
    const items = [
      run('a1', 'x1'),
      timer,
      run('a2', 'x2'),
      command,
      itemBatch,
      run('a3', 'x3'),
      run('a4', 'x3'),
      run('a5', 'x4'),
    ];
    const out = batchActionRuns(items, 2);
    expect(names(out)).toEqual([
      ['engine.timer-fired', 't'],
      ['bus', 'c'],
      [ACTION_RUN_BATCH_JOB, 'batch-i0'],
      [ACTION_RUN_BATCH_JOB, 'runs-a1'],
      [ACTION_RUN_BATCH_JOB, 'runs-a3'],
      [ACTION_RUN_JOB, 'a5'],
    ]);
    const runs = (i: number) =>
      ((out[i] as Extract<OutboxItem, { destination: 'jobs' }>).job.data as ActionRunBatchJob).runs;
    expect(runs(3).map((r) => [r.actionExecutionId, r.executionId])).toEqual([
      ['a1', 'x1'],
      ['a2', 'x2'],
    ]);
    expect(runs(4).map((r) => r.actionExecutionId)).toEqual(['a3', 'a4']);
  });

  it('leaves a single run as it was', () => {
    const items = [run('a1', 'x1'), timer];
    expect(batchActionRuns(items)).toEqual(items);
  });

  it("unwraps each run from its trace wrapper (the batch carries one trace, its first run's)", () => {
    const out = batchActionRuns([run('a1', 'x1', true), run('a2', 'x2', true)]);
    expect(out).toHaveLength(1);
    const job = (out[0] as Extract<OutboxItem, { destination: 'jobs' }>).job;
    const { data } = unwrapJobData(job.data);
    expect((data as ActionRunBatchJob).runs.map((r) => r.actionExecutionId)).toEqual(['a1', 'a2']);
    expect((data as ActionRunBatchJob).runs.every((r) => !('$osc.trace' in r))).toBe(true);
  });
});
