import {
  backendJobQueue,
  backupJobQueue,
  type BackendJobPayloads,
  type BackupJobPayloads,
  type JobOf,
} from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';

/** `host@backend#pool` → `host@backend`. */
export const backendOf = (host: string): string => host.split('#', 1)[0] ?? host;

/**
 * What differs between the API's jobs: who, what, and (rarely) how hard to retry. `name` and `data`
 * are one job of the queue's name → data map (`@osc/contracts`), the types its worker dispatches on.
 */
export type JobSpec<M> = JobEnvelope & JobOf<M>;

interface JobEnvelope {
  /** Deduplication id: a redelivered request or a retried transaction adds the job once. */
  readonly id: string;
  /** Jobs of one key run in the order added (the volume the work is on). */
  readonly partitionKey: string;
  /** Total attempts; 3 unless the job says otherwise. */
  readonly attempts?: number;
  /** First exponential backoff step in ms; 200 unless the job says otherwise. */
  readonly backoffMs?: number;
}

/**
 * The one outbox envelope of a job the API hands to a worker, written in the transaction that
 * records the state change (BS-7.7.7): exponential backoff, 3 attempts by default.
 */
export const outboxJob = <M>(queue: string, spec: JobSpec<M>): OutboxItem => ({
  destination: 'jobs',
  queue,
  job: {
    id: spec.id,
    name: spec.name,
    data: spec.data,
    attempts: spec.attempts ?? 3,
    backoff: { type: 'exponential', delayMs: spec.backoffMs ?? 200 },
  },
  partitionKey: spec.partitionKey,
});

/**
 * A job for the back end that owns `host` (`host@backend#pool` or `host@backend`); a resource
 * never placed has the empty host and its queue is the empty back end's (as before the split).
 */
export const backendJob = (host: string | null, spec: JobSpec<BackendJobPayloads>): OutboxItem =>
  outboxJob(backendJobQueue(backendOf(host ?? '')), spec);

/** A job for the backup side of `backend` (`host@backend`). */
export const backupJob = (backend: string, spec: JobSpec<BackupJobPayloads>): OutboxItem =>
  outboxJob(backupJobQueue(backend), spec);
