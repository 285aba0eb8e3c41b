import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';
import { RUNTIME, type Runtime } from '@osc/platform';
import {
  EXECUTION_EVENTS_CHANNEL,
  type ExecutionEventSignal,
  type StoredExecutionEvent,
  listExecutionEvents,
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

/** Someone watching the execution state changes of a project (list views). */
export interface ProjectWatcher {
  readonly projectId: string;
  deliver(rootExecutionId: string): void;
}

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
  private readonly projects = new Map<string, Set<ProjectWatcher>>();
  private readonly reading = new Map<string, boolean>();
  private listener?: QueryRunner;
  private closed = false;
  private readonly onLocal = (s: ExecutionEventSignal) => this.signal(s);

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

  watchProject(w: ProjectWatcher): () => void {
    let set = this.projects.get(w.projectId);
    if (!set) this.projects.set(w.projectId, (set = new Set()));
    set.add(w);
    return () => {
      set.delete(w);
      if (set.size === 0) this.projects.delete(w.projectId);
    };
  }

  private signal(s: ExecutionEventSignal): void {
    for (const w of this.projects.get(s.projectId) ?? []) w.deliver(s.rootExecutionId);
    if (this.trees.has(s.rootExecutionId)) void this.read(s.rootExecutionId);
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
              const { p, r } = JSON.parse(payload) as { p: string; r: string };
              this.signal({ projectId: p, rootExecutionId: r });
            } catch {
              // not ours
            }
          });
          client.on('error', () => resolve());
          client.on('end', () => resolve());
        });
        await qr.query(`LISTEN ${EXECUTION_EVENTS_CHANNEL}`);
        for (const root of this.trees.keys()) void this.read(root);
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
