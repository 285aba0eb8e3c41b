import type { EntityManager } from 'typeorm';
import { AppError } from '@osc/errors';
import type { StandardActionRunner } from '@osc/actions';
import {
  type Decision,
  type EngineChanges,
  type EngineEvent,
  type ExecutionSnapshot,
  ItemsNeeded,
  applyItemChanges,
  decide,
  decideBatch,
  decideInline,
} from '@osc/workflow-domain';
import { loadTaskItems } from '@osc/workflow-persistence';
import { DecisionError } from './command-failures';
import { runInline } from './inline-actions';

/** Item loads one decision may ask for before it is given up (each asks for more than the last). */
const MAX_ITEM_LOADS = 4;

/** A failure of the database while a decision loaded what it needed (not the pure core's). */
class StoreFailure extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * Decides the events of one execution inside its transaction: the rounds of inline actions
 * (`inline-actions.ts`) and the with-items rows a decision asks for are the only reads it makes.
 * A throw of the pure core comes out as a {@link DecisionError}; a failure of the store as itself.
 */
export class EventDecider {
  constructor(
    private readonly now: () => Date,
    private readonly newId: () => string,
    private readonly inlineRunner: StandardActionRunner | null,
    /** Items a decision starts per with-items task (`DecideOptions`); 0: all at once. */
    private readonly itemsPerDecision: number,
  ) {}

  async decide(
    em: EntityManager,
    snapshot: ExecutionSnapshot,
    events: readonly EngineEvent[],
  ): Promise<Decision> {
    // each inline round is a later moment, at least 1 ms after the previous one: tasks created by
    // successive rounds keep their order in lists sorted by created_at (Mistral's default sort)
    let prev = 0;
    /** Changes of the earlier rounds of this transaction, not yet in the database. */
    const earlier: EngineChanges[] = [];
    const decideEvents = async (s: ExecutionSnapshot, evs: readonly EngineEvent[]): Promise<Decision> => {
      prev = Math.max(this.now().getTime(), prev + 1);
      const now = new Date(prev);
      // with-items rows are loaded when a decision asks for them (the next items to start, or every
      // item when a task completes), then the same events are decided again with them
      let current = s;
      const options = { itemsPerDecision: this.itemsPerDecision };
      for (let attempt = 0; ; attempt++) {
        try {
          const d =
            evs.length === 1
              ? decide(current, evs[0] as EngineEvent, now, this.newId, options)
              : decideBatch(current, evs, now, this.newId, options);
          earlier.push(d.changes);
          return d;
        } catch (err) {
          if (!(err instanceof ItemsNeeded) || attempt >= MAX_ITEM_LOADS) throw err;
          const asked = new Set(err.requests.map((r) => r.taskExecutionId));
          let loads = await loadTaskItems(em, err.requests).catch((e: unknown) =>
            Promise.reject(new StoreFailure(e)),
          );
          for (const c of earlier)
            loads = applyItemChanges(loads, c).filter((l) => asked.has(l.taskExecutionId));
          current = {
            ...current,
            items: [...(current.items ?? []).filter((l) => !asked.has(l.taskExecutionId)), ...loads],
          };
        }
      }
    };
    const runner = this.inlineRunner;
    try {
      return runner
        ? await decideInline(snapshot, events, decideEvents, (ex, e) => runInline(runner, ex, e))
        : await decideEvents(snapshot, events);
    } catch (err) {
      // the database failed while loading items: as any failure of the store
      if (err instanceof StoreFailure) throw err.cause;
      // an AppError of an inline action may be transient (it says so); anything else thrown here is the pure core's
      throw err instanceof AppError ? err : new DecisionError(err);
    }
  }
}
