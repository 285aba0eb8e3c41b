import { InvalidStateError } from '@osc/errors';

/**
 * A status machine as data: `next[from]` lists the statuses reachable from `from` through a
 * normal (non-admin) transition. Admin reset-status and force-delete bypass it on purpose.
 */
export interface TransitionTable<S extends string> {
  readonly statuses: readonly S[];
  readonly next: Readonly<Record<S, readonly S[]>>;
}

/** Every status from which `to` may be entered: the `IN (...)` set of a compare-and-set UPDATE. */
export const sourcesOf = <S extends string>(table: TransitionTable<S>, to: S): S[] =>
  table.statuses.filter((from) => table.next[from].includes(to));

export const canTransition = <S extends string>(table: TransitionTable<S>, from: S, to: S): boolean =>
  table.next[from].includes(to);

/** Throws InvalidStateError naming the resource and the allowed sources when `from → to` is not allowed. */
export function assertTransition<S extends string>(
  table: TransitionTable<S>,
  resource: string,
  from: S,
  to: S,
): void {
  if (!canTransition(table, from, to)) {
    throw new InvalidStateError(
      `Invalid ${resource}: status must be ${sourcesOf(table, to).join(', ') || '(none)'} to become ${to}, but it is ${from}.`,
    );
  }
}
