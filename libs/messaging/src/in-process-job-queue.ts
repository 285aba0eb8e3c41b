import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { TransientError } from '@osc/errors';
import type { AfterCommit } from './command-bus';
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
import type { JournalEntry, MessageJournal } from './journal/message-journal';
import { isRetryableError } from './retryable';

export interface InProcessJobQueueOptions {
  /** How long the id of a completed job keeps deduplicating. Default 1 h (the BullMQ adapter's too). */
  completedRetentionMs?: number;
  /** How long the id of a failed job keeps deduplicating. Default 7 days. */
  failedRetentionMs?: number;
  /**
   * Durable mode (embedded product): every job is journaled in the database with its retry state
   * (attempts made, due time) until it completes or fails for good; `restore()` brings back what a
   * previous process left. Without it jobs live in memory only.
   */
  journal?: MessageJournal;
}

interface Entry {
  id: string;
  job: NormalizedJob;
  data: string;
  /** Attempts made so far. */
  attemptsMade: number;
  readyAt: number;
  seq: number;
  /** Runs presumed lost with a previous process (it was due when that process died). */
  lostRuns: number;
  /** Its `message_journal` row (durable mode). */
  journalId?: string;
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
 * window, deduplicate adds.
 *
 * With a journal (`options.journal`, the embedded product) every job is also stored in the
 * database until it completes or fails for good, and `restore()` brings back after a restart what
 * was left: delayed jobs keep their due time, the attempts made keep counting toward `attempts`,
 * and a job that was due is presumed to have started a run that was lost (so `Job.attempt` counts
 * it, as the port says). Ids of jobs finished before the restart no longer deduplicate. Without a
 * journal nothing survives a restart.
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
  private readonly journal?: MessageJournal;

  constructor(options: InProcessJobQueueOptions = {}) {
    this.completedRetentionMs = options.completedRetentionMs ?? DEFAULT_COMPLETED_RETENTION_MS;
    this.failedRetentionMs = options.failedRetentionMs ?? DEFAULT_FAILED_RETENTION_MS;
    this.journal = options.journal;
  }

  async add(queue: string, job: NewJob | NewJob[]): Promise<void> {
    this.assertOpen();
    const list = (Array.isArray(job) ? job : [job]).map((j) => normalizeJob(queue, j));
    const state = this.queue(queue);
    const known = this.knownIds(queue);
    const now = Date.now();
    if (++this.adds % 1000 === 0) prune(known, now);
    const entries = this.newEntries(list, known, now);
    // Claimed at once, so a concurrent add of the same id is deduplicated while the journal writes.
    for (const e of entries) known.set(e.id, Infinity);
    if (this.journal && entries.length > 0) {
      try {
        await this.journal.insert(entries.map((e) => journalEntry(queue, e)));
      } catch (err) {
        for (const e of entries) known.delete(e.id);
        throw err;
      }
    }
    for (const e of entries) this.schedule(state, e);
    this.dispatch(state);
  }

  /** Journals the jobs with `em` (durable mode); they become runnable when the returned function runs after the commit. */
  async addInTransaction(em: EntityManager, queue: string, job: NewJob | NewJob[]): Promise<AfterCommit> {
    this.assertOpen();
    const list = (Array.isArray(job) ? job : [job]).map((j) => normalizeJob(queue, j));
    const entries = this.newEntries(list, this.knownIds(queue), Date.now());
    if (this.journal && entries.length > 0)
      await this.journal.insertIn(
        em,
        entries.map((e) => journalEntry(queue, e)),
      );
    return () => {
      const state = this.queue(queue);
      const known = this.knownIds(queue);
      const now = Date.now();
      for (const e of entries) {
        const until = known.get(e.id);
        if (until !== undefined && until > now) {
          // added by someone else between the journal write and the commit: one copy is enough
          if (e.journalId) this.journal?.remove(e.journalId);
          continue;
        }
        known.set(e.id, Infinity);
        this.schedule(state, e);
      }
      this.dispatch(state);
    };
  }

  /**
   * Durable mode: schedules the jobs a previous process journaled and never finished, with their
   * due times and attempts made. Call once, before the first add.
   */
  async restore(): Promise<number> {
    if (!this.journal) return 0;
    const entries = (await this.journal.load()).filter((e) => e.kind === 'jobs');
    const now = Date.now();
    const touched = new Set<QueueState>();
    for (const e of entries) {
      const meta = e.meta as JobMeta;
      const state = this.queue(e.queue);
      const readyAt = e.readyAt ?? now;
      this.knownIds(e.queue).set(meta.id, Infinity);
      this.schedule(state, {
        id: meta.id,
        job: {
          id: meta.id,
          name: meta.name,
          data: JSON.parse(e.body) as unknown,
          delayMs: 0,
          attempts: meta.attempts,
          backoff: meta.backoff,
        },
        data: e.body,
        attemptsMade: e.deliveries,
        readyAt,
        seq: this.seq++,
        lostRuns: readyAt <= now ? 1 : 0,
        journalId: e.id,
      });
      touched.add(state);
    }
    for (const state of touched) this.dispatch(state);
    return entries.length;
  }

  /** Entries for the jobs of one add whose id is not live or recently finished (first of a batch wins). */
  private newEntries(list: readonly NormalizedJob[], known: Map<string, number>, now: number): Entry[] {
    const entries: Entry[] = [];
    const batch = new Set<string>();
    for (const j of list) {
      const id = j.id ?? randomUUID();
      const until = known.get(id);
      if ((until !== undefined && until > now) || batch.has(id)) continue;
      batch.add(id);
      entries.push({
        id,
        job: j,
        data: JSON.stringify(j.data),
        attemptsMade: 0,
        readyAt: now + j.delayMs,
        seq: this.seq++,
        lostRuns: 0,
        journalId: this.journal ? randomUUID() : undefined,
      });
    }
    return entries;
  }

  async process(queue: string, handler: JobHandler, opts?: ProcessOptions): Promise<Worker> {
    this.assertOpen();
    const concurrency = normalizeConcurrency(opts);
    const state = this.queue(queue);
    if (opts?.globalConcurrency !== undefined)
      state.globalConcurrency = normalizeConcurrency({ concurrency: opts.globalConcurrency });
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
    await this.journal?.flush();
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
    if (
      state.globalConcurrency !== undefined &&
      state.workers.reduce((sum, w) => sum + w.running, 0) >= state.globalConcurrency
    ) {
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
      attempt: entry.attemptsMade + entry.lostRuns + 1,
    };
    let result: Promise<unknown>;
    try {
      result = Promise.resolve(worker.handler(job));
    } catch (e) {
      result = Promise.reject(e);
    }
    result
      .then(
        () => {
          this.knownIds(state.name).set(entry.id, Date.now() + this.completedRetentionMs);
          if (entry.journalId) this.journal?.remove(entry.journalId);
        },
        (error: unknown) => {
          entry.attemptsMade += 1;
          const now = Date.now();
          if (isRetryableError(error) && entry.attemptsMade < entry.job.attempts) {
            entry.readyAt = now + backoffDelay(entry.job.backoff, entry.attemptsMade);
            if (entry.journalId)
              this.journal?.change(entry.journalId, {
                queue: state.name,
                meta: jobMeta(entry),
                deliveries: entry.attemptsMade,
                readyAt: entry.readyAt,
              });
            // Closing: a journaled retry is left for the next start; without a journal it is given up.
            if (!this.closed) {
              entry.seq = this.seq++;
              this.schedule(state, entry);
              return;
            }
            if (entry.journalId) return;
          }
          this.knownIds(state.name).set(entry.id, now + this.failedRetentionMs);
          if (entry.journalId) this.journal?.remove(entry.journalId);
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

interface JobMeta {
  id: string;
  name: string;
  attempts: number;
  backoff?: NormalizedJob['backoff'];
}

function jobMeta(e: Entry): JobMeta {
  return { id: e.id, name: e.job.name, attempts: e.job.attempts, backoff: e.job.backoff };
}

function journalEntry(queue: string, e: Entry): JournalEntry {
  return {
    id: e.journalId as string,
    kind: 'jobs',
    queue,
    body: e.data,
    meta: jobMeta(e),
    deliveries: e.attemptsMade,
    readyAt: e.readyAt,
  };
}
