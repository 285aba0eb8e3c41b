import type { EntityManager } from 'typeorm';
import type { OutboxItem } from '@osc/messaging';
import {
  type Decision,
  type ExecutionSnapshot,
  type WorkflowExecution,
  historyEvents,
} from '@osc/workflow-domain';
import {
  appendExecutionEvents,
  applyChanges,
  applyChangesOfMany,
  executionEventsAppendCall,
} from '@osc/workflow-persistence';
import type { EffectItems } from './effect-items';
import type { TouchedExecutions } from './history-announcements';

/** A decision and the snapshot it was taken on. */
export interface Decided {
  snapshot: ExecutionSnapshot;
  decision: Decision;
}

/**
 * Writes decisions inside their transaction: the rows of their changes, their history entries, and
 * (through {@link EffectItems}) the outgoing messages they make. `touched` collects the executions that
 * got history entries, announced in this process after the commit (`history-announcements.ts`).
 */
export class DecisionStore {
  constructor(
    private readonly now: () => Date,
    private readonly effects: EffectItems,
  ) {}

  /** Writes a decision's rows; returns its outgoing messages for the outbox. */
  async store(
    em: EntityManager,
    snapshot: ExecutionSnapshot,
    decision: Decision,
    touched: TouchedExecutions,
  ): Promise<OutboxItem[]> {
    await applyChanges(em, decision.changes.execution ?? snapshot.execution, decision.changes, snapshot);
    return this.storeHistoryAndEffects(em, snapshot, decision, touched);
  }

  /**
   * The rows of several executions' decisions and their history in one statement (their trees in
   * root id order, see `executionEventsAppendCall`; a decision written on its own goes before it);
   * the outgoing messages are each member's own ({@link effectsOf}). `writes`: more data-modifying
   * statements for the last statement (the group's outbox rows, `OutboxWriter.addAlong`; see
   * `applyChangesOfMany`).
   */
  async storeRowsAndHistoryOfMany(
    em: EntityManager,
    decided: readonly Decided[],
    touched: TouchedExecutions,
    writes?: (bind: (value: unknown) => string) => readonly string[],
  ): Promise<void> {
    const histories = decided.map(({ snapshot, decision }) => ({
      ex: decision.changes.execution ?? snapshot.execution,
      events: historyEvents(snapshot, decision.changes),
    }));
    await applyChangesOfMany(
      em,
      decided.map(({ snapshot, decision }) => ({
        ex: decision.changes.execution ?? snapshot.execution,
        changes: decision.changes,
        before: snapshot,
      })),
      (bind) => executionEventsAppendCall(histories, this.now(), bind).call,
      writes,
    );
    // The story of the changes (log lines, transition metrics) is told whether or not history rows
    // were written: the benchmark's history switch must not turn the logs off with the rows.
    for (const h of histories) if (h.events.length > 0) touched.set(h.ex, h.events);
  }

  /**
   * A decision's outgoing messages if making them needs no query, so they can be written with its
   * rows; null otherwise ({@link effectsOf} after the rows then). See `EffectItems.withoutQueries`.
   */
  effectsWithoutQueries(ex: WorkflowExecution, decision: Decision): OutboxItem[] | null {
    return this.effects.withoutQueries(ex, decision);
  }

  /** A decision's outgoing messages (for the outbox). */
  effectsOf(em: EntityManager, ex: WorkflowExecution, decision: Decision): Promise<OutboxItem[]> {
    return this.effects.of(em, ex, decision);
  }

  /** What {@link store} writes after a decision's rows: its history entries; returns its outgoing messages. */
  private async storeHistoryAndEffects(
    em: EntityManager,
    snapshot: ExecutionSnapshot,
    decision: Decision,
    touched: TouchedExecutions,
  ): Promise<OutboxItem[]> {
    const ex = decision.changes.execution ?? snapshot.execution;
    const history = historyEvents(snapshot, decision.changes);
    await appendExecutionEvents(em, ex, history, this.now());
    if (history.length > 0) touched.set(ex, history);
    return this.effects.of(em, ex, decision);
  }
}
