import type { JobOf } from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import type { Job } from '@osc/messaging';

/** One handler per job name of a queue's name → data map; `job` gives the attempt and id. */
export type JobHandlers<M> = {
  readonly [K in keyof M & string]: (data: M[K], job: Job) => Promise<void>;
};

/** A job of this queue as its handler sees it: the name decides the data's type. */
export type TypedJob<M> = Job & JobOf<M>;

/** A queue's job table lacks a handler: the worker must not start taking jobs it would fail. */
export class MissingJobHandlerError extends Error {}

/**
 * The handler table of one queue. Built at start, before the worker takes jobs: every name the
 * queue can carry (`names`, from `@osc/contracts`) must have a handler, or construction throws and
 * the worker does not start. A job whose name is not in the table fails without retry, as before.
 */
export class JobTable<M> {
  constructor(
    private readonly owner: string,
    private readonly names: readonly (keyof M & string)[],
    private readonly handlers: JobHandlers<M>,
  ) {
    const missing = names.filter((name) => typeof handlers[name] !== 'function');
    if (missing.length > 0)
      throw new MissingJobHandlerError(
        `${owner} has no handler for job ${missing.join(', ')}; every job name the queue carries needs one`,
      );
  }

  /** The job's name is one this queue carries (its producers build the data from the same map). */
  carries(job: Job): job is TypedJob<M> {
    return this.names.some((name) => name === job.name) && typeof job.data === 'object' && job.data !== null;
  }

  /** Runs the job's handler; a name the queue does not carry is an invalid job (not retried). */
  async run(job: Job): Promise<void> {
    if (!this.carries(job)) throw new InvalidInputError(`${this.owner} has no handler for job ${job.name}`);
    return this.call(job.name, job.data, job);
  }

  private call<K extends keyof M & string>(name: K, data: M[K], job: Job): Promise<void> {
    return this.handlers[name](data, job);
  }
}
