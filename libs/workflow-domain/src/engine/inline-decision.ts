import { AdvancingSnapshot, MergedChanges } from './merged-changes';
import type { Decision, EngineEffect, EngineEvent, ExecutionSnapshot, WorkflowExecution } from './model';

/**
 * Standard actions the engine may complete itself, inside the transaction that started them: they
 * read nothing but their input, touch nothing outside the engine, and finish at once. Every other
 * action (std.http, std.email, std.javascript, std.ssh, std.sleep, ad-hoc actions, …) keeps going
 * through an executor job, claim and result command.
 */
export const SIDE_EFFECT_FREE_ACTIONS: ReadonlySet<string> = new Set(['std.noop', 'std.echo', 'std.fail']);

/** Decide rounds per transaction: bounds a cycle of inline tasks; what is left goes out as jobs. */
export const MAX_INLINE_ROUNDS = 50;

export type RunAction = Extract<EngineEffect, { type: 'run-action' }>;

/**
 * Whether `effect` may be completed inline: a side-effect-free standard action, not a with-items
 * item (those go to executors in batches), and `std.echo` only without a `delay`.
 */
export function isInlineAction(effect: EngineEffect): effect is RunAction {
  if (effect.type !== 'run-action' || effect.itemIndex !== null) return false;
  if (!SIDE_EFFECT_FREE_ACTIONS.has(effect.actionName)) return false;
  if (effect.actionName === 'std.echo') {
    const delay = effect.input['delay'];
    if (delay !== undefined && delay !== null && delay !== 0) return false;
  }
  return true;
}

/** Effects that leave the next round's snapshot exact (no sub-execution or parent to look up). */
const CONTINUABLE: ReadonlySet<EngineEffect['type']> = new Set([
  'run-action',
  'notify',
  'arm-timer',
  'start-items',
]);

/**
 * Decides `events`, then keeps completing the side-effect-free actions the decision starts and
 * deciding their results, in memory, until no such action is left (or {@link MAX_INLINE_ROUNDS}):
 * a chain of `std.noop` tasks runs in one transaction. The caller writes the merged changes and the
 * remaining effects together, so each inline action still has its action execution row (created
 * RUNNING and finished in the same commit) and its task its full result. Rounds stop early when a
 * decision has effects whose next snapshot would need the database (sub-workflows, parents), and
 * never run for workflows that read other executions (`tasks()`, `executions()`).
 */
export async function decideInline(
  snapshot: ExecutionSnapshot,
  events: readonly EngineEvent[],
  decideEvents: (s: ExecutionSnapshot, events: readonly EngineEvent[]) => Decision | Promise<Decision>,
  complete: (ex: WorkflowExecution, effect: RunAction) => Promise<EngineEvent>,
  maxRounds = MAX_INLINE_ROUNDS,
): Promise<Decision> {
  let decision = await decideEvents(snapshot, events);
  if (snapshot.world) return decision;
  const first = decision.changes;
  let merged: MergedChanges | undefined;
  const commands: EngineEffect[] = [];
  const advancing = new AdvancingSnapshot(snapshot);
  for (let round = 1; ; round++) {
    const inline =
      round < maxRounds && decision.commands.every((c) => CONTINUABLE.has(c.type))
        ? decision.commands.filter(isInlineAction)
        : [];
    for (const c of decision.commands) if (!inline.includes(c as RunAction)) commands.push(c);
    if (inline.length === 0) break;
    const current = advancing.advance(decision.changes);
    const ex = current.execution;
    const results: EngineEvent[] = [];
    for (const e of inline) results.push(await complete(ex, e));
    decision = await decideEvents(current, results);
    (merged ??= new MergedChanges(first)).add(decision.changes);
  }
  return { changes: merged ? merged.changes() : first, commands };
}
