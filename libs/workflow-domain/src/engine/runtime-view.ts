import type { WithItemsProgress, WithItemsState } from './model';

/** Keys of a task's runtime context that the API shows as they are stored. */
const SHOWN_AS_STORED = ['triggered_by', 'retry_task_policy'];

/**
 * A task's `runtime_context` as Mistral shows it. The engine keeps with-items state as
 * `with_items: {count, concurrency}` plus counters in `with_items_progress`; Mistral 15 shows
 * `concurrency` at the top level (only when the task has one) and `with_items: {capacity, count}`,
 * `capacity` being the free slots (`null` without a concurrency) — observed on the reference server:
 * `{"concurrency": 2, "with_items": {"capacity": 0, "count": 3}}` with two items running,
 * `{"with_items": {"capacity": null, "count": 3}}` without a concurrency. Other internal keys stay hidden.
 */
export function publicRuntimeContext(runtime: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SHOWN_AS_STORED) if (runtime[key] !== undefined) out[key] = runtime[key];
  const wi = runtime['with_items'] as WithItemsState | null | undefined;
  if (wi && typeof wi === 'object') {
    const running = (runtime['with_items_progress'] as WithItemsProgress | undefined)?.running ?? 0;
    if (wi.concurrency > 0) out['concurrency'] = wi.concurrency;
    out['with_items'] = {
      capacity: wi.concurrency > 0 ? Math.max(0, wi.concurrency - running) : null,
      count: wi.count,
    };
  }
  return out;
}
