import { type Context, type Span, SpanStatusCode } from '@opentelemetry/api';
import type { DataSource } from 'typeorm';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import type { EngineEvent } from '@osc/workflow-domain';
import type { SpecCache } from '@osc/workflow-persistence';
import { batchActionRuns } from './action-run-batches';
import type { Decided, DecisionStore } from './decision-store';
import type { EventDecider } from './event-decider';
import { DEFAULT_GROUP_TRANSACTIONS } from './group-transactions-default';
import { type EngineLog, type TouchedExecutions, announceHistory } from './history-announcements';
import { inSnapshotTransaction } from './snapshot-transactions';
import { inTrace, transactionSpan } from './transaction-spans';

/** Executions per group transaction at most. */
const MAX_GROUP_SIZE = 32;

interface GroupMember {
  executionId: string;
  events: EngineEvent[];
  /** The trace context of the message that brought the events. */
  ctx: Context;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Only the action rows the events name (plus plain tasks' and failed ones): with-items items are
 * counted in their task. Those completed with ERROR also need their position in the task (the
 * failure summary's `idx`); the others do not, which spares the store a window over every action.
 */
const namedActions = (events: readonly EngineEvent[]): { ids: string[]; failing: string[] } => ({
  ids: events.flatMap((e) => ('actionExecutionId' in e ? [e.actionExecutionId] : [])),
  failing: events.flatMap((e) =>
    e.type === 'action-completed' && e.state === 'ERROR' ? [e.actionExecutionId] : [],
  ),
});

/**
 * Runs decisions in transactions: per execution, lock the row and load the snapshot, decide, write
 * the changes and the outgoing messages (outbox), commit, then tell this process the history grew.
 * Requests of different executions that wait at the same time share a transaction.
 */
export class GroupTransactions {
  /** Decision requests waiting for a transaction, and the group transactions running. */
  private readonly queued: GroupMember[] = [];
  private running = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly specs: SpecCache,
    private readonly decider: EventDecider,
    private readonly store: DecisionStore,
    private readonly log: EngineLog | undefined,
    private readonly maxRunning = DEFAULT_GROUP_TRANSACTIONS,
  ) {}

  /**
   * Applies `events` to one execution. Requests of different executions that wait at the same time
   * share a transaction (see {@link runGroup}); at most `maxRunning` run at once.
   */
  apply(executionId: string, events: EngineEvent[], ctx: Context): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ executionId, events, ctx, resolve, reject });
      this.startGroups();
    });
  }

  private startGroups(): void {
    while (this.running < this.maxRunning && this.queued.length > 0) {
      const group = this.queued.splice(0, MAX_GROUP_SIZE);
      this.running++;
      void this.runGroup(group).finally(() => {
        this.running--;
        this.startGroups();
      });
    }
  }

  /**
   * The group's outgoing messages, each member's in its own trace, if none needs a query (made before
   * the rows are written, they are the same: they read only the decisions); null otherwise.
   */
  private effectsWithoutQueries(
    decided: readonly (Decided & { i: number })[],
    group: readonly GroupMember[],
    spans: readonly Span[],
  ): OutboxItem[] | null {
    const items: OutboxItem[] = [];
    for (const { i, snapshot, decision } of decided) {
      const out = this.store.effectsWithoutQueries(
        decision.changes.execution ?? snapshot.execution,
        decision,
      );
      const member = group[i];
      if (!out || !member) return null;
      items.push(...inTrace(spans[i], member.ctx, out));
    }
    return items;
  }

  /** The members' decisions in one transaction (see {@link runGroup}); rejects if it does not commit. */
  private async runTogether(group: readonly GroupMember[], spans: readonly Span[]): Promise<void> {
    const touched: TouchedExecutions = new Map();
    const named = new Map(group.map((m) => [m.executionId, namedActions(m.events)]));
    await inSnapshotTransaction(
      this.dataSource,
      this.specs,
      [...named.keys()],
      named,
      async (em, snapshots) => {
        touched.clear();
        const decided: (Decided & { i: number })[] = [];
        for (const [i, m] of group.entries()) {
          const snapshot = snapshots.get(m.executionId);
          if (!snapshot) continue; // deleted execution: nothing to do
          decided.push({ i, snapshot, decision: await this.decider.decide(em, snapshot, m.events) });
        }
        // Every member's rows, history and messages in one statement when no member's messages
        // need a query (nearly always: action runs, timers, notifications) — the outbox rows
        // (and the DELETE they carry) ride on the rows' statement, `OutboxWriter.addAlong`.
        const early = this.effectsWithoutQueries(decided, group, spans);
        if (early) {
          await this.outbox.addAlong(em, batchActionRuns(early), (writes) =>
            this.store.storeRowsAndHistoryOfMany(em, decided, touched, writes),
          );
          return;
        }
        // otherwise: the rows and history in one statement, then each member's messages
        await this.store.storeRowsAndHistoryOfMany(em, decided, touched);
        const items: OutboxItem[] = [];
        for (const { i, snapshot, decision } of decided) {
          const out = await this.store.effectsOf(
            em,
            decision.changes.execution ?? snapshot.execution,
            decision,
          );
          items.push(...inTrace(spans[i], group[i]!.ctx, out));
        }
        await this.outbox.add(em, batchActionRuns(items));
      },
    );
    announceHistory(touched, this.log);
  }

  /**
   * One transaction for the decisions of several executions: lock them all (in id order) and load
   * their snapshots in the transaction's first round trip (`inSnapshotTransaction`), decide each,
   * write each and every outgoing message (in one statement when the messages need no query), commit;
   * the fixed costs (begin, lock, load, rows and outbox statements, commit) are paid once per group
   * instead of once per command. A request alone takes the same path (3 round trips instead of the
   * 5 of `DecisionStore.store` and `OutboxWriter.add`), and fails on its own. If a group of several
   * fails, each member is retried in a transaction of its own, so one bad execution cannot hold the
   * others back.
   */
  private async runGroup(group: GroupMember[]): Promise<void> {
    const [alone] = group;
    if (alone && group.length === 1) {
      const span = transactionSpan(alone, 1);
      try {
        await this.runTogether(group, [span]);
        alone.resolve();
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR });
        alone.reject(err);
      } finally {
        span.end();
      }
      return;
    }
    const spans = group.map((m) => transactionSpan(m, group.length));
    try {
      await this.runTogether(group, spans);
      for (const span of spans) span.end();
      for (const m of group) m.resolve();
      return;
    } catch {
      // fall through: each on its own
      for (const span of spans) {
        span.setAttribute('osc.engine.group_failed', true);
        span.end();
      }
    }
    for (const m of group) {
      const span = transactionSpan(m, 1);
      try {
        const touched: TouchedExecutions = new Map();
        const named = new Map([[m.executionId, namedActions(m.events)]]);
        await inSnapshotTransaction(
          this.dataSource,
          this.specs,
          [m.executionId],
          named,
          async (em, snapshots) => {
            touched.clear();
            const snapshot = snapshots.get(m.executionId);
            if (!snapshot) return; // deleted execution: nothing to do
            const out = await this.store.store(
              em,
              snapshot,
              await this.decider.decide(em, snapshot, m.events),
              touched,
            );
            await this.outbox.add(em, batchActionRuns(inTrace(span, m.ctx, out)));
          },
        );
        announceHistory(touched, this.log);
        m.resolve();
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR });
        m.reject(err);
      } finally {
        span.end();
      }
    }
  }
}
