import { type Context, context } from '@opentelemetry/api';
import type { DeliveryInfo } from '@osc/messaging';
import type { EngineEvent } from '@osc/workflow-domain';

/** A command waiting for the transaction that applies its event. */
export interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  type: string;
  deliveryCount: number;
}

/** Where a batch of one execution's events is applied (in a transaction). */
export interface EventApplier {
  apply(executionId: string, events: EngineEvent[], ctx: Context): Promise<void>;
}

/** What happens to a command whose event could not be applied on its own. */
export interface FailureHandler {
  onFailure(executionId: string, w: Waiter, err: unknown): Promise<void>;
}

/**
 * Command intake: messages of one execution that arrive in one turn of the event loop, or while a
 * transaction of that execution is running, are applied together in the next one (one lock, one snapshot load, one write); each message
 * is acknowledged only after the transaction holding its event committed, so delivery stays at least
 * once.
 */
export class CommandBatches {
  /** Events waiting for the batch in progress of their execution, by execution id. */
  private readonly pending = new Map<string, { events: EngineEvent[]; waiters: Waiter[]; ctx: Context }>();
  private readonly draining = new Set<string>();

  constructor(
    private readonly applier: EventApplier,
    private readonly failures: FailureHandler,
  ) {}

  /** Queues one event of `executionId`; settles when the transaction holding it committed (or failed). */
  enqueue(executionId: string, event: EngineEvent, type: string, info?: DeliveryInfo): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let batch = this.pending.get(executionId);
      if (!batch) {
        // The trace of the first message of a batch continues into its transaction and what it sends.
        batch = { events: [], waiters: [], ctx: context.active() };
        this.pending.set(executionId, batch);
      }
      batch.events.push(event);
      batch.waiters.push({ resolve, reject, type, deliveryCount: info?.deliveryCount ?? 1 });
      if (!this.draining.has(executionId)) {
        // The transaction starts once the messages at hand are in: the results of one message
        // (an executor sends many at once) and of every message read in this turn of the event
        // loop join one batch, instead of the first alone and the rest in a second transaction.
        this.draining.add(executionId);
        setImmediate(() => void this.drain(executionId));
      }
    });
  }

  private async drain(executionId: string): Promise<void> {
    try {
      for (let batch = this.pending.get(executionId); batch; batch = this.pending.get(executionId)) {
        this.pending.delete(executionId);
        try {
          await this.applier.apply(executionId, batch.events, batch.ctx);
          for (const w of batch.waiters) w.resolve();
        } catch (err) {
          if (batch.events.length === 1) {
            const w = batch.waiters[0];
            if (w) await this.failures.onFailure(executionId, w, err);
            continue;
          }
          // one bad event must not fail the others: apply them one by one
          for (let i = 0; i < batch.events.length; i++) {
            const w = batch.waiters[i];
            try {
              await this.applier.apply(executionId, [batch.events[i] as EngineEvent], batch.ctx);
              w?.resolve();
            } catch (one) {
              if (w) await this.failures.onFailure(executionId, w, one);
            }
          }
        }
      }
    } finally {
      this.draining.delete(executionId);
    }
  }
}
