import { InvalidInputError, TransientError } from '@osc/errors';
import type { Job, JobQueue } from '../src/job-queue';
import { deferred, sleep, uniqueName, waitFor } from './support';

export interface JobQueueHarness {
  createQueue(): Promise<JobQueue>;
  /** Removes what the test left in the backend. */
  cleanup(queues: string[]): Promise<void>;
}

/** The one behaviour every job queue adapter must show (see `JobQueue`). */
export function jobQueueContract(h: JobQueueHarness): void {
  let jobs: JobQueue;
  let queue: string;

  beforeEach(async () => {
    jobs = await h.createQueue();
    queue = uniqueName('jobs');
  });

  afterEach(async () => {
    await jobs.close();
    await h.cleanup([queue]);
  });

  it('runs a job with its id, name and data; ids may contain ":" and "%"', async () => {
    const got: Job[] = [];
    await jobs.process(queue, async (j) => void got.push(j));
    await jobs.add(queue, { id: 'exec:42:task%3A', name: 'action.run', data: { a: [1, { b: 'c' }] } });
    await jobs.add(queue, { id: '12345', name: 'numeric.id', data: null });
    await waitFor('2 jobs', () => got.length === 2);
    expect(got.find((j) => j.name === 'action.run')).toEqual({
      id: 'exec:42:task%3A',
      name: 'action.run',
      data: { a: [1, { b: 'c' }] },
      attempt: 1,
    });
    expect(got.find((j) => j.name === 'numeric.id')).toMatchObject({ id: '12345', attempt: 1 });
  });

  it('starts a delayed job after its delay, not before', async () => {
    const started = new Map<string, number>();
    await jobs.process(queue, async (j) => void started.set(j.name, Date.now()), { concurrency: 2 });
    const t0 = Date.now();
    await jobs.add(queue, { name: 'late', data: null, delayMs: 600 });
    await jobs.add(queue, { name: 'now', data: null });
    await waitFor('both jobs', () => started.size === 2);
    expect(started.get('late')! - t0).toBeGreaterThanOrEqual(600);
    expect(started.get('now')!).toBeLessThan(started.get('late')!);
  });

  it('deduplicates by job id: while pending, in one batch, and after it ran', async () => {
    const runs: string[] = [];
    await jobs.add(queue, [
      { id: 'dup:1', name: 'first', data: 1 },
      { id: 'dup:1', name: 'second', data: 2 },
    ]);
    await jobs.add(queue, { id: 'dup:1', name: 'third', data: 3 });
    await jobs.process(queue, async (j) => void runs.push(`${j.id}/${j.name}`));
    await waitFor('first run', () => runs.length === 1);
    await jobs.add(queue, { id: 'dup:1', name: 'after', data: 4 });
    await jobs.add(queue, { id: 'marker', name: 'marker', data: null });
    await waitFor('marker', () => runs.includes('marker/marker'));
    await sleep(100);
    expect(runs).toEqual(['dup:1/first', 'marker/marker']);
  });

  it('runs every job that has no id', async () => {
    let runs = 0;
    await jobs.process(queue, async () => void runs++, { concurrency: 5 });
    await jobs.add(queue, [
      { name: 'x', data: 1 },
      { name: 'x', data: 1 },
    ]);
    await jobs.add(queue, { name: 'x', data: 1 });
    await waitFor('3 runs', () => runs === 3);
  });

  it('retries retryable failures with a fixed backoff until success', async () => {
    const attempts: Array<{ attempt: number; at: number }> = [];
    await jobs.process(queue, async (j) => {
      attempts.push({ attempt: j.attempt, at: Date.now() });
      if (j.attempt < 3) throw new TransientError('backend busy');
      return 'ok';
    });
    await jobs.add(queue, {
      id: 'retry-fixed',
      name: 'flaky',
      data: null,
      attempts: 3,
      backoff: { type: 'fixed', delayMs: 200 },
    });
    await waitFor('3 attempts', () => attempts.length === 3);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(200);
    expect(attempts[2]!.at - attempts[1]!.at).toBeGreaterThanOrEqual(200);
  });

  it('grows the wait exponentially and reports the final failure once', async () => {
    const at: number[] = [];
    const failed: Array<{ job: Job; error: unknown }> = [];
    await jobs.process(
      queue,
      async () => {
        at.push(Date.now());
        throw new TransientError('still busy');
      },
      { onFailed: (job, error) => failed.push({ job, error }) },
    );
    await jobs.add(queue, {
      name: 'doomed',
      data: null,
      attempts: 3,
      backoff: { type: 'exponential', delayMs: 150 },
    });
    await waitFor('final failure', () => failed.length === 1);
    expect(at).toHaveLength(3);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(150);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(300);
    expect(failed[0]!.job).toMatchObject({ name: 'doomed', attempt: 3 });
    expect(failed[0]!.error).toBeInstanceOf(TransientError);
    await sleep(100);
    expect(failed).toHaveLength(1);
  });

  it('fails at once on a non-retryable error, whatever the attempts left', async () => {
    let calls = 0;
    const failed: unknown[] = [];
    await jobs.process(
      queue,
      async () => {
        calls++;
        throw new InvalidInputError('bad action input');
      },
      { onFailed: (_job, error) => failed.push(error) },
    );
    await jobs.add(queue, { name: 'bad', data: null, attempts: 5, backoff: { type: 'fixed', delayMs: 10 } });
    await waitFor('failure', () => failed.length === 1);
    await sleep(150);
    expect(calls).toBe(1);
    expect(failed[0]).toBeInstanceOf(InvalidInputError);
  });

  it('globalConcurrency 1 runs the jobs of several workers one at a time, in order', async () => {
    let running = 0;
    let maxRunning = 0;
    const order: number[] = [];
    const handler = async (j: Job) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      await sleep(5);
      order.push(j.data as number);
      running--;
    };
    await jobs.process(queue, handler, { concurrency: 2, globalConcurrency: 1 });
    await jobs.process(queue, handler, { concurrency: 2, globalConcurrency: 1 });
    await jobs.add(
      queue,
      Array.from({ length: 12 }, (_, i) => ({ name: 'ordered', data: i })),
    );
    await waitFor('all done', () => order.length === 12);
    expect(maxRunning).toBe(1);
    expect(order).toEqual(Array.from({ length: 12 }, (_, i) => i));
  });

  it('never runs more jobs at once than the worker concurrency', async () => {
    let running = 0;
    let maxRunning = 0;
    let done = 0;
    const gates: Array<() => void> = [];
    await jobs.process(
      queue,
      async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        const gate = deferred();
        gates.push(() => gate.resolve());
        await gate.promise;
        running--;
        done++;
      },
      { concurrency: 3 },
    );
    await jobs.add(
      queue,
      Array.from({ length: 9 }, (_, i) => ({ name: 'slow', data: i })),
    );
    await waitFor('3 running', () => running === 3);
    await sleep(300);
    expect(running).toBe(3);
    const releaser = setInterval(() => gates.splice(0).forEach((g) => g()), 5);
    try {
      await waitFor('all done', () => done === 9);
    } finally {
      clearInterval(releaser);
    }
    expect(maxRunning).toBe(3);
  });

  it('close waits for the running job', async () => {
    const gate = deferred();
    let started = false;
    let finished = false;
    const worker = await jobs.process(queue, async () => {
      started = true;
      await gate.promise;
      finished = true;
    });
    await jobs.add(queue, { name: 'slow', data: null });
    await waitFor('started', () => started);
    const closing = worker.close();
    await sleep(100);
    expect(finished).toBe(false);
    gate.resolve();
    await closing;
    expect(finished).toBe(true);
  });

  it('rejects invalid jobs with InvalidInputError', async () => {
    await expect(jobs.add(queue, { name: '', data: null })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(jobs.add(queue, { name: 'x', data: null, attempts: 0 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(jobs.add(queue, { name: 'x', data: null, delayMs: -1 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(
      jobs.add(queue, { name: 'x', data: null, backoff: { type: 'linear' as 'fixed', delayMs: 1 } }),
    ).rejects.toBeInstanceOf(InvalidInputError);
    await expect(jobs.add('no:colons', { name: 'x', data: null })).rejects.toBeInstanceOf(InvalidInputError);
    await expect(jobs.process(queue, async () => undefined, { concurrency: 0 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });

  it('adds a large batch in one call and runs it all', async () => {
    const n = 2000;
    let done = 0;
    await jobs.process(queue, async () => void done++, { concurrency: 50 });
    const t0 = Date.now();
    await jobs.add(
      queue,
      Array.from({ length: n }, (_, i) => ({ id: `bulk:${i}`, name: 'noop', data: i })),
    );
    const added = Date.now();
    await waitFor(`${n} jobs`, () => done === n, 60_000);
    const ms = Math.max(1, Date.now() - t0);
    console.log(
      `job queue: ${n} jobs added in ${added - t0} ms, ${Math.round((n * 1000) / ms)} jobs/s end to end`,
    );
    expect(await jobs.ping()).toBe(true);
  });
}
