import type * as BullMq from 'bullmq';
import type { JobsOptions, Queue, Worker as BullWorker } from 'bullmq';
import type * as IORedisModule from 'ioredis';
import type { Redis } from 'ioredis';
import { TransientError } from '@osc/errors';
import {
  type Job,
  type JobHandler,
  type JobQueue,
  type NewJob,
  type ProcessOptions,
  type Worker,
  DEFAULT_COMPLETED_RETENTION_MS,
  DEFAULT_FAILED_RETENTION_MS,
  normalizeConcurrency,
  normalizeJob,
} from './job-queue';
import { type MessagingLogger, stderrLogger } from './logger';
import { describeError, isRetryableError } from './retryable';
import { assertQueueName } from './command-bus';

/**
 * bullmq and ioredis, loaded when the first BullMQ queue is made: a process without Redis (embedded
 * mode, whose jobs stay in-process) never loads them. Requiring them took ~0.25 s of an embedded
 * start's CPU (issue #17, start-up).
 */
let loaded: { bullmq: typeof BullMq; IORedis: typeof IORedisModule.default } | undefined;
const redisModules = (): NonNullable<typeof loaded> =>
  (loaded ??= {
    bullmq: require('bullmq') as typeof BullMq,
    IORedis: (require('ioredis') as typeof IORedisModule).default,
  });

export interface BullMqJobQueueOptions {
  /** redis://host:port/db. Give either `url` or `connection`. */
  url?: string;
  /** An ioredis client to share for adding jobs (workers get duplicates of it). Not closed by `close()`. */
  connection?: Redis;
  /** Key prefix in Redis. Default `osc`. */
  prefix?: string;
  /** How long a completed job (and so its id, for deduplication) is kept. Default 1 h. */
  completedRetentionMs?: number;
  /** Most completed jobs kept per queue, whatever their age (bounds Redis memory). Default 50,000. */
  completedRetentionCount?: number;
  /** How long a failed job is kept. Default 7 days. */
  failedRetentionMs?: number;
  /**
   * A running job's lock lasts this long and is renewed while the worker lives; a worker that dies
   * lets it lapse and the job is run again by another worker. Default 30 s (BullMQ's).
   */
  lockDurationMs?: number;
  /** How often workers look for jobs whose lock lapsed. Default 30 s (BullMQ's). */
  stalledIntervalMs?: number;
  /** Times a job may be recovered from a dead worker before it fails. Default 3. */
  maxStalledCount?: number;
  logger?: MessagingLogger;
}

/**
 * Job queue on BullMQ. Delays, attempts and backoff are BullMQ's own; a non-retryable error
 * becomes `UnrecoverableError` so BullMQ gives up at once. Deduplication is BullMQ's job-id rule
 * (an add whose id exists is ignored), so finished jobs are retained for a window instead of being
 * removed at once. BullMQ rejects ids containing `:` or looking like integers: ids are stored
 * escaped (`%` → `%25`, `:` → `%3A`) behind a `k.` marker and handed back to handlers unchanged.
 * Bulk adds are one Redis round trip (`addBulk`).
 */
export class BullMqJobQueue implements JobQueue {
  private readonly redis: Redis;
  private readonly ownsConnection: boolean;
  private readonly prefix: string;
  private readonly queues = new Map<string, Queue>();
  private readonly workers = new Set<{ worker: BullWorker; connection: Redis }>();
  private readonly defaults: Pick<JobsOptions, 'removeOnComplete' | 'removeOnFail'>;
  private readonly logger: MessagingLogger;
  private readonly workerTiming: { lockDuration?: number; stalledInterval?: number; maxStalledCount: number };
  private closed = false;

  constructor(options: BullMqJobQueueOptions) {
    if (!options.connection && !options.url)
      throw new TypeError('BullMqJobQueue needs a url or a connection');
    this.logger = options.logger ?? stderrLogger;
    this.prefix = options.prefix ?? 'osc';
    this.ownsConnection = !options.connection;
    const { IORedis } = redisModules();
    this.redis = options.connection ?? new IORedis(options.url ?? '', { maxRetriesPerRequest: 3 });
    this.redis.on('error', (err: Error) =>
      this.logger.warn('redis connection error', { error: err.message }),
    );
    this.workerTiming = {
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount ?? 3,
    };
    this.defaults = {
      removeOnComplete: {
        age: Math.ceil((options.completedRetentionMs ?? DEFAULT_COMPLETED_RETENTION_MS) / 1000),
        count: options.completedRetentionCount ?? 50_000,
      },
      removeOnFail: { age: Math.ceil((options.failedRetentionMs ?? DEFAULT_FAILED_RETENTION_MS) / 1000) },
    };
  }

  async add(queue: string, job: NewJob | NewJob[]): Promise<void> {
    this.assertOpen();
    const list = (Array.isArray(job) ? job : [job]).map((j) => normalizeJob(queue, j));
    if (list.length === 0) return;
    const q = this.queue(queue);
    const bulk = list.map((j) => ({
      name: j.name,
      data: j.data,
      opts: {
        ...this.defaults,
        jobId: j.id === undefined ? undefined : encodeJobId(j.id),
        delay: j.delayMs > 0 ? j.delayMs : undefined,
        attempts: j.attempts,
        backoff: j.backoff ? { type: j.backoff.type, delay: j.backoff.delayMs } : undefined,
      } satisfies JobsOptions,
    }));
    try {
      const [single] = bulk;
      if (single && bulk.length === 1) await q.add(single.name, single.data, single.opts);
      else await q.addBulk(bulk);
    } catch (e) {
      throw new TransientError(`adding ${bulk.length} job(s) to queue ${queue} failed: ${describeError(e)}`, {
        cause: e,
      });
    }
  }

  async process(queue: string, handler: JobHandler, opts?: ProcessOptions): Promise<Worker> {
    this.assertOpen();
    assertQueueName(queue);
    const concurrency = normalizeConcurrency(opts);
    if (opts?.globalConcurrency !== undefined) {
      await this.queue(queue).setGlobalConcurrency(
        normalizeConcurrency({ concurrency: opts.globalConcurrency }),
      );
    }
    const connection = this.redis.duplicate({ maxRetriesPerRequest: null });
    connection.on('error', (err: Error) =>
      this.logger.warn('redis worker connection error', { queue, error: err.message }),
    );
    const { Worker: BullWorker, UnrecoverableError } = redisModules().bullmq;
    const worker = new BullWorker(
      queue,
      async (bj) => {
        const job: Job = {
          id: decodeJobId(bj.id ?? ''),
          name: bj.name,
          data: bj.data,
          attempt: Math.max(bj.attemptsMade + 1, bj.attemptsStarted),
        };
        try {
          return await handler(job);
        } catch (error) {
          if (isRetryableError(error)) throw error;
          const unrecoverable = new UnrecoverableError(describeError(error));
          (unrecoverable as { cause?: unknown }).cause = error;
          throw unrecoverable;
        }
      },
      { connection, prefix: this.prefix, concurrency, autorun: true, ...definedOnly(this.workerTiming) },
    );
    worker.on('error', (err: Error) =>
      this.logger.error('bullmq worker error', { queue, error: err.message }),
    );
    const onFailed = opts?.onFailed;
    if (onFailed) {
      worker.on('failed', (bj, err) => {
        // `finishedOn` is set only when BullMQ gives up; a failed attempt that will be retried has none.
        if (!bj || !bj.finishedOn) return;
        const cause = (err as { cause?: unknown }).cause ?? err;
        try {
          onFailed(
            { id: decodeJobId(bj.id ?? ''), name: bj.name, data: bj.data, attempt: bj.attemptsMade },
            cause,
          );
        } catch {
          // a failing observer must not break the worker
        }
      });
    }
    await worker.waitUntilReady();
    const entry = { worker, connection };
    this.workers.add(entry);
    return { close: () => this.closeWorker(entry) };
  }

  async ping(): Promise<boolean> {
    if (this.closed) return false;
    // A readiness probe must answer quickly even while ioredis is retrying a dead server.
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS);
      });
      const answer = this.redis.ping().then(
        (r) => r === 'PONG',
        () => false,
      );
      return await Promise.race([answer, timeout]);
    } catch {
      return false;
    } finally {
      if (timer) clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.workers].map((w) => this.closeWorker(w)));
    await Promise.all([...this.queues.values()].map((q) => q.close().catch(() => undefined)));
    if (this.ownsConnection) await this.redis.quit().catch(() => undefined);
  }

  private assertOpen(): void {
    if (this.closed) throw new TransientError('the BullMQ job queue is closed');
  }

  async waitingJobs(queue: string): Promise<{ depth: number; oldestAgeSeconds: number }> {
    this.assertOpen();
    const q = this.queue(queue);
    const counts = await q.getJobCounts('wait', 'prioritized');
    const depth = (counts['wait'] ?? 0) + (counts['prioritized'] ?? 0);
    // The wait list is pushed at its head: ascending order gives the job waiting longest. A job that
    // was delayed has been due since its timestamp plus its delay.
    const [oldest] = depth > 0 ? await q.getJobs(['wait'], 0, 0, true) : [];
    const dueAt = oldest ? oldest.timestamp + (oldest.opts.delay ?? 0) : undefined;
    return { depth, oldestAgeSeconds: dueAt === undefined ? 0 : Math.max(0, (Date.now() - dueAt) / 1000) };
  }

  private queue(name: string): Queue {
    let q = this.queues.get(name);
    if (!q) {
      q = new (redisModules().bullmq.Queue)(name, { connection: this.redis, prefix: this.prefix });
      q.on('error', (err: Error) =>
        this.logger.warn('bullmq queue error', { queue: name, error: err.message }),
      );
      this.queues.set(name, q);
    }
    return q;
  }

  private async closeWorker(entry: { worker: BullWorker; connection: Redis }): Promise<void> {
    if (!this.workers.delete(entry)) return;
    await entry.worker.close();
    await entry.connection.quit().catch(() => undefined);
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const ID_MARK = 'k.';
const PING_TIMEOUT_MS = 1000;

/** BullMQ-safe form of a job id: no `:`, never integer-like, reversible. */
export function encodeJobId(id: string): string {
  return ID_MARK + id.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
}

export function decodeJobId(stored: string): string {
  if (!stored.startsWith(ID_MARK)) return stored;
  return stored.slice(ID_MARK.length).replace(/%3A|%25/g, (s) => (s === '%3A' ? ':' : '%'));
}
