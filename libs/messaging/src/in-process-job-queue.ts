import { randomUUID } from 'node:crypto';
import { TransientError } from '@osc/errors';
import {
  type Job,
  type JobHandler,
  type JobQueue,
  type NewJob,
  type NormalizedJob,
  type ProcessOptions,
  type Worker,
  backoffDelay,
  DEFAULT_COMPLETED_RETENTION_MS,
  DEFAULT_FAILED_RETENTION_MS,
  normalizeConcurrency,
  normalizeJob,
} from './job-queue';
import { DueTimeHeap, FifoQueue } from './fifo-queue';
import { isRetryableError } from './retryable';

export interface InProcessJobQueueOptions {
  /** How long the id of a completed job keeps deduplicating. Default 1 h (the BullMQ adapter's too). */
  completedRetentionMs?: number;
  /** How long the id of a failed job keeps deduplicating. Default 7 days. */
  failedRetentionMs?: number;
}

interface Entry {
  id: string;
  job: NormalizedJob;
  data: string;
  /** Attempts made so far. */
  attemptsMade: number;
  readyAt: number;
  seq: number;
}

interface WorkerState {
  handler: JobHandler;
  concurrency: number;
  running: number;
  closed: boolean;
  onFailed?: ProcessOptions['onFailed'];
  idleWaiters: Array<() => void>;
}

interface QueueState {
  name: string;
  /** Due jobs, in the order they became due. */
  ready: FifoQueue<Entry>;
  /** Jobs whose time has not come (delays and backoffs). */
  delayed: DueTimeHeap<Entry>;
  workers: WorkerState[];
  next: number;
  /** Queue-wide limit of running jobs (`ProcessOptions.globalConcurrency`). */
  globalConcurrency?: number;
  timer?: NodeJS.Timeout;
  timerAt?: number;
}

/**
 * The job queue of embedded mode: jobs, delays and retries live in this process (timers), with
 * the semantics of the BullMQ adapter. Ids of live jobs, and of finished ones for a retention
 * window, deduplicate adds. Nothing survives a restart; durable intent lives in the outbox.
 */
export class InProcessJobQueue implements JobQueue {
  private readonly queues = new Map<string, QueueState>();
  /** id → time until which it deduplicates (Infinity while the job is waiting or running). */
  private readonly known = new Map<string, Map<string, number>>();
  private readonly completedRetentionMs: number;
  private readonly failedRetentionMs: number;
  private seq = 0;
  private adds = 0;
  private closed = false;

  constructor(options: InProcessJobQueueOptions = {}) {
    this.completedRetentionMs = options.completedRetentionMs ?? DEFAULT_COMPLETED_RETENTION_MS;
    this.failedRetentionMs = options.failedRetentionMs ?? DEFAULT_FAILED_RETENTION_MS;
  }

  async add(queue: string, job: NewJob | NewJob[]): Promise<void> {
    this.assertOpen();
    const list = (Array.isArray(job) ? job : [job]).map((j) => normalizeJob(queue, j));
    const state = this.queue(queue);
    const known = this.knownIds(queue);
    const now = Date.now();
    if (++this.adds % 1000 === 0) prune(known, now);
    for (const j of list) {
      const id = j.id ?? randomUUID();
      const until = known.get(id);
      if (until !== undefined && until > now) continue;
      known.set(id, Infinity);
      this.schedule(state, {
        id,
        job: j,
        data: JSON.stringify(j.data),
        attemptsMade: 0,
        readyAt: now + j.delayMs,
        seq: this.seq++,
      });
    }
    this.dispatch(state);
  }

  async process(queue: string, handler: JobHandler, opts?: ProcessOptions): Promise<Worker> {
    this.assertOpen();
    const concurrency = normalizeConcurrency(opts);
    const state = this.queue(queue);
    if (opts?.globalConcurrency !== undefined) state.globalConcurrency = normalizeConcurrency({ concurrency: opts.globalConcurrency });
    const worker: WorkerState = {
      handler,
      concurrency,
      running: 0,
      closed: false,
      onFailed: opts?.onFailed,
      idleWaiters: [],
    };
    state.workers.push(worker);
    setImmediate(() => this.dispatch(state));
    return { close: () => this.closeWorker(state, worker) };
  }

  async ping(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const state of this.queues.values()) {
      if (state.timer) clearTimeout(state.timer);
      state.timer = undefined;
    }
    await Promise.all([...this.queues.values()].flatMap((s) => s.workers.map((w) => this.closeWorker(s, w))));
  }

  /** Jobs waiting (delayed ones included), for tests and metrics. */
  waitingCount(queue: string): number {
    const state = this.queues.get(queue);
    return state ? state.ready.length + state.delayed.length : 0;
  }

  private assertOpen(): void {
    if (this.closed) throw new TransientError('the in-process job queue is closed');
  }

  private queue(name: string): QueueState {
    let state = this.queues.get(name);
    if (!state) {
      state = { name, ready: new FifoQueue(), delayed: new DueTimeHeap(), workers: [], next: 0 };
      this.queues.set(name, state);
    }
    return state;
  }

  private knownIds(queue: string): Map<string, number> {
    let m = this.known.get(queue);
    if (!m) {
      m = new Map();
      this.known.set(queue, m);
    }
    return m;
  }

  private dispatch(state: QueueState): void {
    if (this.closed) return;
    const now = Date.now();
    for (let d = state.delayed.peek(); d && d.readyAt <= now; d = state.delayed.peek()) {
      state.delayed.pop();
      state.ready.push(d);
    }
    while (state.ready.length > 0) {
      const worker = this.pickWorker(state);
      const entry = worker && state.ready.shift();
      if (!worker || !entry) break;
      this.run(state, worker, entry);
    }
    this.arm(state, now);
  }

  /** One timer per queue, for the earliest job not yet due. */
  private arm(state: QueueState, now: number): void {
    const head = state.delayed.peek();
    if (!head || head.readyAt <= now || state.workers.length === 0) return;
    if (state.timer && state.timerAt !== undefined && state.timerAt <= head.readyAt) return;
    if (state.timer) clearTimeout(state.timer);
    state.timerAt = head.readyAt;
    state.timer = setTimeout(() => {
      state.timer = undefined;
      state.timerAt = undefined;
      this.dispatch(state);
    }, head.readyAt - now);
  }

  private schedule(state: QueueState, entry: Entry): void {
    if (entry.readyAt <= Date.now()) state.ready.push(entry);
    else state.delayed.push(entry);
  }

  private pickWorker(state: QueueState): WorkerState | undefined {
    if (state.globalConcurrency !== undefined && state.workers.reduce((sum, w) => sum + w.running, 0) >= state.globalConcurrency) {
      return undefined;
    }
    const n = state.workers.length;
    for (let i = 0; i < n; i++) {
      const w = state.workers[(state.next + i) % n];
      if (w && !w.closed && w.running < w.concurrency) {
        state.next = (state.next + i + 1) % n;
        return w;
      }
    }
    return undefined;
  }

  private run(state: QueueState, worker: WorkerState, entry: Entry): void {
    worker.running += 1;
    const job: Job = {
      id: entry.id,
      name: entry.job.name,
      data: JSON.parse(entry.data),
      attempt: entry.attemptsMade + 1,
    };
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(worker.handler(job));
    } catch (e) {
      result = Promise.reject(e);
    }
    result
      .then(
        () => this.knownIds(state.name).set(entry.id, Date.now() + this.completedRetentionMs),
        (error: unknown) => {
          entry.attemptsMade += 1;
          const now = Date.now();
          if (isRetryableError(error) && entry.attemptsMade < entry.job.attempts && !this.closed) {
            entry.readyAt = now + backoffDelay(entry.job.backoff, entry.attemptsMade);
            entry.seq = this.seq++;
            this.schedule(state, entry);
            return;
          }
          this.knownIds(state.name).set(entry.id, now + this.failedRetentionMs);
          try {
            worker.onFailed?.(job, error);
          } catch {
            // a failing observer must not break the queue
          }
        },
      )
      .finally(() => {
        worker.running -= 1;
        if (worker.running === 0) for (const w of worker.idleWaiters.splice(0)) w();
        this.dispatch(state);
      });
  }

  private async closeWorker(state: QueueState, worker: WorkerState): Promise<void> {
    if (!worker.closed) {
      worker.closed = true;
      state.workers = state.workers.filter((w) => w !== worker);
      state.next = 0;
    }
    if (worker.running > 0) await new Promise<void>((resolve) => worker.idleWaiters.push(resolve));
  }
}

function prune(known: Map<string, number>, now: number): void {
  for (const [id, until] of known) if (until <= now) known.delete(id);
}
