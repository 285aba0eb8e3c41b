import { InProcessJobQueue } from './in-process-job-queue';
import { jobQueueContract } from '../test/job-queue.contract';

describe('InProcessJobQueue (contract)', () => {
  jobQueueContract({
    createQueue: async () => new InProcessJobQueue(),
    cleanup: async () => undefined,
  });
});

describe('InProcessJobQueue retention', () => {
  it('forgets a completed id after the retention window', async () => {
    const jobs = new InProcessJobQueue({ completedRetentionMs: 50 });
    const runs: number[] = [];
    await jobs.process('q', async (j) => void runs.push(j.data as number));
    await jobs.add('q', { id: 'same', name: 'n', data: 1 });
    while (runs.length < 1) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 80));
    await jobs.add('q', { id: 'same', name: 'n', data: 2 });
    while (runs.length < 2) await new Promise((r) => setTimeout(r, 5));
    expect(runs).toEqual([1, 2]);
    await jobs.close();
  });
});
