import type { Execution, ExecutionFilters, ExecutionStateChange } from '../api/mistral';

/** Mistral's timestamp text (`YYYY-MM-DD HH:MM:SS`, UTC) of an ISO instant. */
const mistralText = (iso: string): string => new Date(iso).toISOString().slice(0, 19).replace('T', ' ');

/**
 * Applies one state change from the project stream to the rows on screen. Pure.
 *
 * A row of that execution takes the new state at once (and leaves the list when a state filter no
 * longer matches it). `reload` says the list must be read again: an execution the page does not
 * show yet may belong in it (a new one, or one that entered the filtered state); the list's own
 * query decides, with its filters and order. The changes received while a list is read are applied
 * again to that list when it arrives, in order: the stream brings every change of each execution
 * after the list's start, the latest last, so the rows end in the latest state whatever the list's
 * moment was.
 */
export function applyStateChange(
  rows: readonly Execution[],
  change: ExecutionStateChange,
  filters: ExecutionFilters,
): { rows: Execution[]; reload: boolean } {
  const i = rows.findIndex((r) => r.id === change.execution_id);
  if (i < 0) {
    const couldMatch = !filters.state || filters.state === change.state;
    return { rows: [...rows], reload: couldMatch };
  }
  const row = rows[i] as Execution;
  if (filters.state && filters.state !== change.state)
    return { rows: rows.filter((r) => r.id !== change.execution_id), reload: false };
  const next = [...rows];
  next[i] = {
    ...row,
    state: change.state,
    state_info: change.state_info,
    updated_at: mistralText(change.created_at),
  };
  return { rows: next, reload: false };
}
