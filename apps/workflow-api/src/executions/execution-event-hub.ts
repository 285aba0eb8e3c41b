import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { RUNTIME, type Runtime } from '@osc/platform';
import { BatchedReads, ReservedConnection, type SqlRunner, untilEnded } from './execution-event-reads';
import {
  EXECUTION_EVENTS_CHANNEL,
  type ExecutionEventSignal,
  type StoredExecutionEvent,
  type StoredExecutionStateChange,
  listExecutionEventsOfTrees,
  listExecutionStateChangesOfProjects,
  listenForExecutionEvents,
  localExecutionEvents,
  registerStreamListener,
  stopListening,
  unregisterStreamListener,
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
const PENDING_RETRY_MS = [2, 5, 10, 20, 40, 80, 100] as const;

/** The key of the watchers of every project. */
const ALL_PROJECTS = '*';

/** Entries read per tree (or project) and read while catching up. */
const PAGE = 500;

/**
 * How long the hub keeps listening after its last watcher left (distributed mode): a console that
 * reloads or a client that reconnects finds the connection still subscribed.
 */
const LISTEN_IDLE_MS = 10_000;

/**
 * A listening process's registration lasts this long (engines announce only while one is
 * registered) and is pushed forward every {@link LISTENER_REFRESH_MS}: a process that dies leaves
 * the engines announcing for at most a minute.
 */
const LISTENER_TTL_S = 60;
const LISTENER_REFRESH_MS = 20_000;

/**
 * Fans history announcements out to the event streams of this API process. Announcements come from
 * engines in this process (an in-process emitter, after their commit) and, distributed, from every
 * engine through PostgreSQL `LISTEN` on one connection; NOTIFY is not lost while that connection
 * lives, and every watched tree is re-read when it is (re)established. The connection listens only
 * while someone watches (and {@link LISTEN_IDLE_MS} after the last one left), and registers while it
 * listens: engines announce only while some process is registered (a NOTIFY costs every committing
 * transaction a server-wide lock, see AnnounceOnlyToListeners1766100000000). A first watcher's read
 * runs again once the subscription is in place, and again once every transaction that may have
 * checked for listeners before the registration has ended, so nothing committed in between is
 * missed. The trees (and projects)
 * announced while a read runs are read together by the next one, in one statement that serves all
 * their watchers; a tree is never read by two statements at once (a later announcement re-reads it).
 */
@Injectable()
export class ExecutionEventHub implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('execution-events');
  private readonly trees = new Map<string, Set<EventWatcher>>();
  /** Project watchers by project id; `*` for all projects. */
  private readonly projects = new Map<string, Set<ProjectWatcher>>();
  private readonly treeReads = new BatchedReads(
    (roots) => this.readTrees(roots),
    (root) => !this.closed && this.trees.has(root),
  );
  private readonly projectReads = new BatchedReads(
    (keys) => this.readProjects(keys),
    (key) => !this.closed && this.projects.has(key),
  );
  private readonly pendingRetries = new Map<string, { timer: NodeJS.Timeout; attempt: number }>();
  private readonly treeConnection = new ReservedConnection(() => this.db);
  private readonly projectConnection = new ReservedConnection(() => this.db);
  /** This process's registration as a listener (see {@link registerStreamListener}). */
  private readonly listenerId = randomUUID();
  /** The listening loop while it runs (distributed mode, while anyone watches). */
  private listening?: Promise<void>;
  /** Ends the current subscription (the last watcher left {@link LISTEN_IDLE_MS} ago). */
  private unsubscribe?: () => void;
  private idleTimer?: NodeJS.Timeout;
  private closed = false;
  private readonly onLocal = (s: ExecutionEventSignal) =>
    this.signal({ projectId: s.projectId, rootExecutionId: s.rootExecutionId });

  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  private get db(): DataSource {
    return this.runtime.dataSource;
  }

  /**
   * Where the streams' reads run: distributed, on connections of their own; embedded (PGlite, one
   * session), through the data source like everything else.
   */
  private readerOf(kind: 'trees' | 'projects'): SqlRunner {
    if (this.runtime.mode !== 'distributed') return this.db;
    return kind === 'trees' ? this.treeConnection : this.projectConnection;
  }

  async onModuleInit(): Promise<void> {
    localExecutionEvents.on('events', this.onLocal);
  }

  private watched(): boolean {
    return this.trees.size > 0 || this.projects.size > 0;
  }

  /**
   * A watcher came: listen (distributed mode) unless already listening. PGlite has one session:
   * holding it for LISTEN would stop every other query; embedded mode has one process, so the
   * in-process announcements are all there is.
   */
  private demand(): void {
    if (this.runtime.mode !== 'distributed' || this.closed) return;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    this.listening ??= this.listen().finally(() => {
      this.listening = undefined;
      // a watcher that came while the loop was ending
      if (this.watched()) this.demand();
    });
  }

  /** A watcher left: when it was the last, stop listening after {@link LISTEN_IDLE_MS}. */
  private released(): void {
    if (this.watched() || !this.listening || this.idleTimer || this.closed) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (!this.watched()) this.unsubscribe?.();
    }, LISTEN_IDLE_MS);
    this.idleTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    localExecutionEvents.off('events', this.onLocal);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    // the loop unsubscribes and gives its connection back
    this.unsubscribe?.();
    await this.listening;
    for (const { timer } of this.pendingRetries.values()) clearTimeout(timer);
    this.pendingRetries.clear();
    await this.treeConnection.release();
    await this.projectConnection.release();
  }

  watch(w: EventWatcher): () => void {
    const root = w.execution.rootExecutionId ?? w.execution.id;
    let set = this.trees.get(root);
    if (!set) this.trees.set(root, (set = new Set()));
    set.add(w);
    this.demand();
    this.treeReads.request(root);
    return () => {
      set.delete(w);
      if (set.size === 0 && this.trees.get(root) === set) this.trees.delete(root);
      this.released();
    };
  }

  /** Starts delivering the project's (or every project's) state changes after `w.after`. */
  watchProject(w: ProjectWatcher): () => void {
    const key = w.projectId ?? ALL_PROJECTS;
    let set = this.projects.get(key);
    if (!set) this.projects.set(key, (set = new Set()));
    set.add(w);
    this.demand();
    this.projectReads.request(key);
    return () => {
      set.delete(w);
      if (set.size === 0 && this.projects.get(key) === set) {
        this.projects.delete(key);
        const retry = this.pendingRetries.get(key);
        if (retry) clearTimeout(retry.timer);
        this.pendingRetries.delete(key);
      }
      this.released();
    };
  }

  /**
   * `executionChanged` false (from NOTIFY): only task or action entries, nothing for project streams.
   * `lastSeq` (from NOTIFY): the tree's newest entry; no read when every watcher has it already.
   */
  private signal(s: ExecutionEventSignal, lastSeq?: number): void {
    if (s.executionChanged !== false) {
      if (this.projects.has(s.projectId)) this.projectReads.request(s.projectId);
      if (this.projects.has(ALL_PROJECTS)) this.projectReads.request(ALL_PROJECTS);
      // a stream held back by a transaction that took an earlier position reads again as soon as
      // any such transaction commits (each announces its execution entries), not at its next timer
      for (const key of this.pendingRetries.keys()) this.projectReads.request(key);
    }
    const watchers = this.trees.get(s.rootExecutionId);
    if (!watchers) return;
    if (typeof lastSeq === 'number' && [...watchers].every((w) => w.after >= lastSeq)) return;
    this.treeReads.request(s.rootExecutionId);
  }

  /**
   * Reads, in one statement, what the watchers of these trees have not seen and hands it out; a
   * tree with a full page is read again.
   */
  private async readTrees(roots: string[]): Promise<void> {
    const asks: { root: string; after: number; watchers: EventWatcher[] }[] = [];
    for (const root of roots) {
      const watchers = [...(this.trees.get(root) ?? [])];
      if (watchers.length > 0)
        asks.push({ root, after: Math.min(...watchers.map((w) => w.after)), watchers });
    }
    let pages: Map<string, StoredExecutionEvent[]>;
    try {
      pages = await listExecutionEventsOfTrees(this.readerOf('trees'), asks, PAGE);
    } catch (err) {
      this.logger.warn({
        msg: 'reading execution events failed; retrying in 1 s',
        trees: asks.length,
        err: String(err),
      });
      setTimeout(() => {
        for (const { root } of asks) this.treeReads.request(root);
      }, 1000).unref();
      return;
    }
    for (const { root, watchers } of asks) {
      const page = pages.get(root) ?? [];
      const last = page.at(-1);
      if (!last) continue;
      for (const w of watchers) {
        const mine = page.filter(
          (e) =>
            e.seq > w.after && (w.execution.rootExecutionId === null || e.execution_id === w.execution.id),
        );
        if (mine.length > 0) this.handOut(() => w.deliver(mine));
        if (last.seq > w.after) w.after = last.seq;
      }
      if (page.length === PAGE) this.treeReads.request(root);
    }
  }

  /**
   * Reads the state changes these project streams' watchers have not seen and hands them out, like
   * {@link readTrees}; a change committed but not settled yet (an older transaction still runs) is
   * read again after a short, growing delay.
   */
  private async readProjects(keys: string[]): Promise<void> {
    const asks: { key: string; after: number; watchers: ProjectWatcher[] }[] = [];
    for (const key of keys) {
      const watchers = [...(this.projects.get(key) ?? [])];
      if (watchers.length > 0) asks.push({ key, after: Math.min(...watchers.map((w) => w.after)), watchers });
    }
    let pages: Map<string | null, { changes: StoredExecutionStateChange[]; pending: boolean }>;
    try {
      pages = await listExecutionStateChangesOfProjects(
        this.readerOf('projects'),
        asks.map((a) => ({ projectId: a.key === ALL_PROJECTS ? null : a.key, after: a.after })),
        PAGE,
      );
    } catch (err) {
      this.logger.warn({
        msg: 'reading execution state changes failed; retrying in 1 s',
        projects: asks.length,
        err: String(err),
      });
      setTimeout(() => {
        for (const { key } of asks) this.projectReads.request(key);
      }, 1000).unref();
      return;
    }
    for (const { key, watchers } of asks) {
      const page = pages.get(key === ALL_PROJECTS ? null : key) ?? { changes: [], pending: false };
      const last = page.changes.at(-1);
      for (const w of watchers) {
        const mine = page.changes.filter((c) => c.position > w.after);
        if (mine.length > 0) this.handOut(() => w.deliver(mine));
        if (last && last.position > w.after) w.after = last.position;
      }
      if (page.changes.length === PAGE) this.projectReads.request(key);
      else this.schedulePendingRead(key, page.pending);
    }
  }

  /** A watcher's failure (its socket) is its own: the others still get theirs. */
  private handOut(deliver: () => void): void {
    try {
      deliver();
    } catch (err) {
      this.logger.warn({ msg: 'handing out execution events failed', err: String(err) });
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
    const timer = setTimeout(() => this.projectReads.request(key), delay);
    timer.unref();
    this.pendingRetries.set(key, { timer, attempt });
  }

  /**
   * One connection of the pool kept for `LISTEN` while anyone watches; reconnects after a failure
   * and re-reads every watched tree and project once subscribed.
   */
  private async listen(): Promise<void> {
    while (!this.closed && this.watched()) {
      let ended = false;
      let unregistered = false;
      try {
        const qr = this.db.createQueryRunner();
        const client = (await qr.connect()) as {
          on(ev: string, cb: (...a: unknown[]) => void): void;
          off(ev: string, cb: (...a: unknown[]) => void): void;
        };
        let gone: (() => void) | undefined;
        const onGone = () => gone?.();
        const onNotification = (n: unknown) => {
          const { channel, payload } = n as { channel: string; payload?: string };
          if (channel !== EXECUTION_EVENTS_CHANNEL || !payload) return;
          try {
            const { p, r, x, s } = JSON.parse(payload) as { p: string; r: string; x?: 1; s?: number };
            this.signal({ projectId: p, rootExecutionId: r, executionChanged: x === 1 }, s);
          } catch {
            // not ours
          }
        };
        client.on('notification', onNotification);
        client.on('error', onGone);
        client.on('end', onGone);
        const lost = new Promise<void>((resolve) => {
          gone = resolve;
          this.unsubscribe = () => {
            ended = true;
            resolve();
          };
        });
        await listenForExecutionEvents(qr);
        // the module closed, or the last watcher left, while subscribing
        if (this.closed || !this.watched()) this.unsubscribe?.();
        const refresh = await this.register(() => ended || this.closed);
        if (!refresh) {
          // not registered: engines may not announce, so give the subscription up and start again
          unregistered = true;
          this.unsubscribe?.();
        }
        await lost;
        if (refresh) clearInterval(refresh);
        this.unsubscribe = undefined;
        client.off('notification', onNotification);
        client.off('error', onGone);
        client.off('end', onGone);
        // a connection that goes back to the pool must not stay subscribed
        if (ended) await stopListening(qr).catch(() => undefined);
        await qr.release().catch(() => undefined);
        if (ended) await unregisterStreamListener(this.db, this.listenerId).catch(() => undefined);
      } catch (err) {
        this.unsubscribe = undefined;
        if (this.closed) return;
        this.logger.warn({ msg: 'listening for execution events failed; retrying', err: String(err) });
      }
      if (!this.closed && (!ended || unregistered)) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /**
   * Registers this process as a listener and keeps the registration alive (the interval returned;
   * null when registering failed), then reads everything again now and once every transaction that
   * may have checked for listeners before the registration has ended.
   */
  private async register(stopped: () => boolean): Promise<NodeJS.Timeout | null> {
    let missed: string[];
    try {
      missed = await registerStreamListener(this.db, this.listenerId, LISTENER_TTL_S);
    } catch (err) {
      this.logger.warn({ msg: 'registering as a listener failed; retrying', err: String(err) });
      return null;
    }
    const refresh = setInterval(() => {
      registerStreamListener(this.db, this.listenerId, LISTENER_TTL_S).catch((err: unknown) =>
        this.logger.warn({ msg: 'renewing the listener registration failed', err: String(err) }),
      );
    }, LISTENER_REFRESH_MS);
    refresh.unref();
    this.readEverything();
    void untilEnded(this.db, missed, stopped).then((all) => {
      if (all) this.readEverything();
    });
    return refresh;
  }

  /** Every watched tree and project read again. */
  private readEverything(): void {
    for (const root of this.trees.keys()) this.treeReads.request(root);
    for (const key of this.projects.keys()) this.projectReads.request(key);
  }
}
