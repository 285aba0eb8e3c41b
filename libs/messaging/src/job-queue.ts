import { InvalidInputError } from '@osc/errors';
import type { EntityManager } from 'typeorm';
import { type AfterCommit, assertQueueName } from './command-bus';

export type BackoffType = 'fixed' | 'exponential';

/** A job to run. `data` must be JSON-serializable. */
export interface NewJob {
  /**
   * Deduplication key: adding a job whose id is pending, running, or finished within the queue's
   * retention window is a no-op. Any string (`:` included; adapters escape what their backend
   * cannot store). Without an id every add is a new job.
   */
  id?: string;
  /** Job name; each name has one handler (a dotted name, e.g. `action.run`). */
  name: string;
  data: unknown;
  /** Run no earlier than this many milliseconds after `add`. */
  delayMs?: number;
  /** Total attempts (first one included). Default 1. */
  attempts?: number;
  /**
   * Wait before attempt n+1 after attempt n failed: `fixed` waits `delayMs`; `exponential` waits
   * `delayMs * 2^(n-1)` (BullMQ's formula). Default: retry at once.
   */
  backoff?: { type: BackoffType; delayMs: number };
}

/**
 * A job as its handler sees it. `attempt` counts the runs started so far, this one included: 1 on
 * the first run; a run lost with a dead worker counts too (so it can exceed `attempts`).
 */
export interface Job {
  id: string;
  name: string;
  data: unknown;
  attempt: number;
}

export type JobHandler = (job: Job) => Promise<unknown>;

export interface ProcessOptions {
  /** Most jobs this worker runs at once. Default 1. */
  concurrency?: number;
  /**
   * Most jobs of this queue running at once across all its workers, in every process. 1 makes the
   * queue run its jobs one at a time in the order they became due, whatever the number of workers
   * (notifications that must keep their order per execution). Default: no queue-wide limit.
   */
  globalConcurrency?: number;
  /** Called once when a job has failed for good (attempts exhausted, or a non-retryable error). */
  onFailed?: (job: Job, error: unknown) => void;
}

export interface Worker {
  /** Stops taking jobs and waits for the running ones to finish. */
  close(): Promise<void>;
}

/**
 * Background jobs with delays, retries and deduplication.
 *
 * Contract (every adapter passes `test/job-queue.contract.ts`):
 * - A delayed job never starts before its delay has passed.
 * - A handler that throws a retryable error (see `isRetryableError`) is retried after the backoff
 *   until `attempts` runs were made; a non-retryable error fails the job at once.
 * - Adding a job whose id exists (pending, running, or finished recently) does nothing.
 * - At most `concurrency` jobs run at once per worker.
 * - At-least-once: a worker that dies mid-job gets the job run again (handlers are idempotent).
 */
export interface JobQueue {
  add(queue: string, job: NewJob | NewJob[]): Promise<void>;
  /**
   * Optional (in-process adapters): add as part of the caller's database transaction `em`; the
   * jobs become durable with its commit and runnable when the returned function is called after
   * it. Not calling it (a rollback) adds nothing. The outbox relay uses it when present.
   */
  addInTransaction?(em: EntityManager, queue: string, job: NewJob | NewJob[]): Promise<AfterCommit>;
  process(queue: string, handler: JobHandler, opts?: ProcessOptions): Promise<Worker>;
  /** Health check for /readyz. */
  ping(): Promise<boolean>;
  /**
   * Optional: jobs of `queue` that are due and wait for a worker, and how long the oldest has been
   * due (0 when none waits); for metrics.
   */
  waitingJobs?(queue: string): Promise<{ depth: number; oldestAgeSeconds: number }>;
  close(): Promise<void>;
}

export const DEFAULT_COMPLETED_RETENTION_MS = 60 * 60 * 1000;
export const DEFAULT_FAILED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface NormalizedJob {
  id?: string;
  name: string;
  data: unknown;
  delayMs: number;
  attempts: number;
  backoff?: { type: BackoffType; delayMs: number };
}

/** Validates a job and fills defaults; bad input gets `InvalidInputError` naming the field. */
export function normalizeJob(queue: string, job: NewJob): NormalizedJob {
  assertQueueName(queue);
  if (job === null || typeof job !== 'object') throw new InvalidInputError('a job must be an object');
  if (typeof job.name !== 'string' || job.name.length === 0)
    throw new InvalidInputError('a job needs a non-empty name');
  if (job.id !== undefined && (typeof job.id !== 'string' || job.id.length === 0 || job.id.length > 500)) {
    throw new InvalidInputError(`job id must be a non-empty string of at most 500 characters`);
  }
  const delayMs = job.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0)
    throw new InvalidInputError(`delayMs must be >= 0, got ${delayMs}`);
  const attempts = job.attempts ?? 1;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new InvalidInputError(`attempts must be a positive integer, got ${attempts}`);
  }
  if (job.backoff !== undefined) {
    const { type, delayMs: d } = job.backoff;
    if (type !== 'fixed' && type !== 'exponential') {
      throw new InvalidInputError(`backoff type must be fixed or exponential, got ${String(type)}`);
    }
    if (!Number.isFinite(d) || d < 0) throw new InvalidInputError(`backoff delayMs must be >= 0, got ${d}`);
  }
  try {
    JSON.stringify(job.data ?? null);
  } catch (e) {
    throw new InvalidInputError(`data of job ${job.name} is not JSON-serializable`, { cause: e });
  }
  return {
    id: job.id,
    name: job.name,
    data: job.data ?? null,
    delayMs: Math.round(delayMs),
    attempts,
    backoff: job.backoff ? { type: job.backoff.type, delayMs: Math.round(job.backoff.delayMs) } : undefined,
  };
}

/** Wait before the attempt that follows failed attempt `attempt` (1-based). */
export function backoffDelay(backoff: NormalizedJob['backoff'], attempt: number): number {
  if (!backoff) return 0;
  return backoff.type === 'fixed' ? backoff.delayMs : Math.round(backoff.delayMs * 2 ** (attempt - 1));
}

export function normalizeConcurrency(opts: ProcessOptions | undefined): number {
  const c = opts?.concurrency ?? 1;
  if (!Number.isInteger(c) || c < 1 || c > 10_000) {
    throw new InvalidInputError(`concurrency must be an integer from 1 to 10000, got ${c}`);
  }
  return c;
}
