import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import { RUNTIME, type Runtime } from '@osc/platform';
import {
  EXECUTION_EVENTS_CHANNEL,
  type ExecutionEventSignal,
  type StoredExecutionEvent,
  type StoredExecutionStateChange,
  listExecutionEvents,
  listExecutionStateChanges,
  localExecutionEvents,
} from '@osc/workflow-persistence';

/** Someone watching one execution tree: called with the entries after its `after`, in order. */
export interface EventWatcher {
  /** Highest sequence number already delivered. */
  after: number;
  /** The execution asked for (a root sees its whole tree, a sub-workflow only itself). */
  readonly execution: { id: string; rootExecutionId: string | null };
  deliver(events: StoredExecutionEvent[]): void;
}

/** Someone watching the execution state changes of a project, or of all projects (list views). */
export interface ProjectWatcher {
  /** Null: every project (an admin's `all_projects`). */
  readonly projectId: string | null;
  /** Highest stream position already delivered. */
  after: number;
  deliver(changes: StoredExecutionStateChange[]): void;
}

/** Re-reads of a project stream whose next change is committed but not settled yet: first delay, then doubling up to the last. */
const PENDING_RETRY_MS = [5, 10, 20, 40, 80, 100] as const;

/** The key of the watchers of every project. */
const ALL_PROJECTS = '*';

/** Entries read per query while catching up. */
const PAGE = 500;

/**
 * Fans history announcements out to the event streams of this API process. Announcements come from
 * engines in this process (an in-process emitter, after their commit) and, distributed, from every
 * engine through PostgreSQL `LISTEN` on one connection; NOTIFY is not lost while that connection
 * lives, and every watched tree is re-read when it is (re)established. One read per announced tree
 * serves all its watchers; a read never runs twice at once for one tree (a later announcement re-runs it).
 */
@Injectable()
export class ExecutionEventHub implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('execution-events');
  private readonly trees = new Map<string, Set<EventWatcher>>();
  /** Project watchers by project id; `*` for all projects. */
  private readonly projects = new Map<string, Set<ProjectWatcher>>();
  private readonly reading = new Map<string, boolean>();
  private readonly readingProject = new Map<string, boolean>();
  private readonly pendingRetries = new Map<string, { timer: NodeJS.Timeout; attempt: number }>();
  private listener?: QueryRunner;
  private closed = false;
  private readonly onLocal = (s: ExecutionEventSignal) => this.signal({ projectId: s.projectId, rootExecutionId: s.rootExecutionId });

  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  private get db(): DataSource {
    return this.runtime.dataSource;
  }

  async onModuleInit(): Promise<void> {
    localExecutionEvents.on('events', this.onLocal);
    // PGlite has one session: holding it for LISTEN would stop every other query. Embedded mode has
    // one process, so the in-process announcements are all there is.
    if (this.runtime.mode === 'distributed') void this.listen();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    localExecutionEvents.off('events', this.onLocal);
    for (const { timer } of this.pendingRetries.values()) clearTimeout(timer);
    this.pendingRetries.clear();
    const qr = this.listener;
    if (qr && !qr.isReleased) {
      await qr.query(`UNLISTEN *`).catch(() => undefined);
      await qr.release().catch(() => undefined);
    }
  }

  watch(w: EventWatcher): () => void {
    const root = w.execution.rootExecutionId ?? w.execution.id;
    let set = this.trees.get(root);
    if (!set) this.trees.set(root, (set = new Set()));
    set.add(w);
    void this.read(root);
    return () => {
      set.delete(w);
      if (set.size === 0) this.trees.delete(root);
    };
  }

  /** Starts delivering the project's (or every project's) state changes after `w.after`. */
  watchProject(w: ProjectWatcher): () => void {
    const key = w.projectId ?? ALL_PROJECTS;
    let set = this.projects.get(key);
    if (!set) this.projects.set(key, (set = new Set()));
    set.add(w);
    void this.readProject(key);
    return () => {
      set.delete(w);
      if (set.size === 0) {
        this.projects.delete(key);
        const retry = this.pendingRetries.get(key);
        if (retry) clearTimeout(retry.timer);
        this.pendingRetries.delete(key);
      }
    };
  }

  /** `executionChanged` false (from NOTIFY): only task or action entries, nothing for project streams. */
  private signal(s: ExecutionEventSignal): void {
    if (s.executionChanged !== false) {
      if (this.projects.has(s.projectId)) void this.readProject(s.projectId);
      if (this.projects.has(ALL_PROJECTS)) void this.readProject(ALL_PROJECTS);
    }
    if (this.trees.has(s.rootExecutionId)) void this.read(s.rootExecutionId);
  }

  /**
   * Reads the state changes a project's watchers have not seen and hands them out, like
   * {@link read}; a change committed but not settled yet (an older transaction still runs) is read
   * again after a short, growing delay.
   */
  private async readProject(key: string): Promise<void> {
    if (this.readingProject.has(key)) {
      this.readingProject.set(key, true);
      return;
    }
    this.readingProject.set(key, false);
    let pending = false;
    try {
      for (;;) {
        const watchers = [...(this.projects.get(key) ?? [])];
        if (watchers.length === 0) break;
        const after = Math.min(...watchers.map((w) => w.after));
        const page = await listExecutionStateChanges(this.db, key === ALL_PROJECTS ? null : key, after, PAGE);
        pending = page.pending;
        const last = page.changes.at(-1);
        for (const w of watchers) {
          const mine = page.changes.filter((c) => c.position > w.after);
          if (mine.length > 0) w.deliver(mine);
          if (last && last.position > w.after) w.after = last.position;
        }
        if (page.changes.length === PAGE) continue;
        if (this.readingProject.get(key)) {
          this.readingProject.set(key, false);
          continue;
        }
        break;
      }
      this.schedulePendingRead(key, pending);
    } catch (err) {
      this.logger.warn({ msg: 'reading execution state changes failed; retrying in 1 s', projectId: key, err: String(err) });
      setTimeout(() => {
        if (!this.closed && this.projects.has(key)) void this.readProject(key);
      }, 1000).unref();
    } finally {
      this.readingProject.delete(key);
    }
  }

  private schedulePendingRead(key: string, pending: boolean): void {
    const current = this.pendingRetries.get(key);
    if (current) clearTimeout(current.timer);
    if (!pending || this.closed || !this.projects.has(key)) {
      this.pendingRetries.delete(key);
      return;
    }
    const attempt = current ? current.attempt + 1 : 0;
    const delay = PENDING_RETRY_MS[Math.min(attempt, PENDING_RETRY_MS.length - 1)] ?? 100;
    const timer = setTimeout(() => void this.readProject(key), delay);
    timer.unref();
    this.pendingRetries.set(key, { timer, attempt });
  }

  /** Reads what the tree's watchers have not seen and hands it out; re-runs while announcements arrive. */
  private async read(root: string): Promise<void> {
    if (this.reading.has(root)) {
      this.reading.set(root, true);
      return;
    }
    this.reading.set(root, false);
    try {
      for (;;) {
        const watchers = [...(this.trees.get(root) ?? [])];
        if (watchers.length === 0) break;
        const after = Math.min(...watchers.map((w) => w.after));
        const page = await listExecutionEvents(this.db, { id: root, rootExecutionId: null }, after, PAGE);
        for (const w of watchers) {
          const mine = page.filter((e) => e.seq > w.after && (w.execution.rootExecutionId === null || e.execution_id === w.execution.id));
          const last = page.at(-1);
          if (mine.length > 0) w.deliver(mine);
          if (last && last.seq > w.after) w.after = last.seq;
        }
        if (page.length === PAGE) continue;
        if (this.reading.get(root)) {
          this.reading.set(root, false);
          continue;
        }
        break;
      }
    } catch (err) {
      this.logger.warn({ msg: 'reading execution events failed; retrying in 1 s', rootExecutionId: root, err: String(err) });
      setTimeout(() => {
        if (!this.closed && this.trees.has(root)) void this.read(root);
      }, 1000).unref();
    } finally {
      this.reading.delete(root);
    }
  }

  /** One connection of the pool kept for `LISTEN`; reconnects after a failure and re-reads every tree. */
  private async listen(): Promise<void> {
    while (!this.closed) {
      try {
        const qr = this.db.createQueryRunner();
        const client = (await qr.connect()) as { on(ev: string, cb: (...a: unknown[]) => void): void; removeAllListeners(ev: string): void };
        this.listener = qr;
        const lost = new Promise<void>((resolve) => {
          client.on('notification', (n: unknown) => {
            const { channel, payload } = n as { channel: string; payload?: string };
            if (channel !== EXECUTION_EVENTS_CHANNEL || !payload) return;
            try {
              const { p, r, x } = JSON.parse(payload) as { p: string; r: string; x?: 1 };
              this.signal({ projectId: p, rootExecutionId: r, executionChanged: x === 1 });
            } catch {
              // not ours
            }
          });
          client.on('error', () => resolve());
          client.on('end', () => resolve());
        });
        await qr.query(`LISTEN ${EXECUTION_EVENTS_CHANNEL}`);
        for (const root of this.trees.keys()) void this.read(root);
        for (const key of this.projects.keys()) void this.readProject(key);
        await lost;
        client.removeAllListeners('notification');
        await qr.release().catch(() => undefined);
      } catch (err) {
        if (this.closed) return;
        this.logger.warn({ msg: 'listening for execution events failed; retrying', err: String(err) });
      }
      if (!this.closed) await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
