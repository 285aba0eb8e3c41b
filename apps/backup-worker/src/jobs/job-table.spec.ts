import { InvalidInputError } from '@osc/errors';
import type { Job } from '@osc/messaging';
import { JobTable, MissingJobHandlerError, type JobHandlers } from './job-table';

interface Payloads {
  'thing.make': { readonly id: string };
  'thing.drop': { readonly id: string; readonly force: boolean };
}
const NAMES = ['thing.make', 'thing.drop'] as const;

const job = (name: string, data: unknown, attempt = 1): Job => ({ id: 'j1', name, data, attempt });

describe('JobTable', () => {
  it('runs the handler of the job name with its data and the job', async () => {
    const seen: unknown[] = [];
    const table = new JobTable<Payloads>('things', NAMES, {
      'thing.make': async (data, j) => void seen.push(['make', data.id, j.attempt]),
      'thing.drop': async (data) => void seen.push(['drop', data.id, data.force]),
    });
    await table.run(job('thing.drop', { id: 'a', force: true }));
    await table.run(job('thing.make', { id: 'b' }, 3));
    expect(seen).toEqual([
      ['drop', 'a', true],
      ['make', 'b', 3],
    ]);
  });

  it('refuses to start when a job name the queue carries has no handler', () => {
    const handlers = { 'thing.make': async () => undefined } as unknown as JobHandlers<Payloads>;
    expect(() => new JobTable<Payloads>('things', NAMES, handlers)).toThrow(
      new MissingJobHandlerError(
        'things has no handler for job thing.drop; every job name the queue carries needs one',
      ),
    );
  });

  it('fails a job whose name the queue does not carry, without running any handler', async () => {
    let ran = false;
    const table = new JobTable<Payloads>('things', NAMES, {
      'thing.make': async () => void (ran = true),
      'thing.drop': async () => void (ran = true),
    });
    await expect(table.run(job('thing.paint', { id: 'a' }))).rejects.toThrow(
      new InvalidInputError('things has no handler for job thing.paint'),
    );
    expect(ran).toBe(false);
  });

  it('carries only its own names with object data', () => {
    const table = new JobTable<Payloads>('things', NAMES, {
      'thing.make': async () => undefined,
      'thing.drop': async () => undefined,
    });
    expect(table.carries(job('thing.make', { id: 'a' }))).toBe(true);
    expect(table.carries(job('thing.make', null))).toBe(false);
    expect(table.carries(job('other', { id: 'a' }))).toBe(false);
  });
});
