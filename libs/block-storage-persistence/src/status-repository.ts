import type { StatusOperation } from '@osc/block-storage-domain';
import type { Queryable } from './sql';

/**
 * A repository whose rows move between statuses by compare-and-set (STYLE §2): each says how
 * (`compareAndSetStatus`, its own table and columns); `transition` runs a domain operation
 * (`VOLUME_OPERATIONS`, `BACKUP_OPERATIONS`, …) as that compare-and-set, its sources → its target.
 */
export abstract class StatusRepository<S extends string> {
  abstract compareAndSetStatus(
    db: Queryable,
    id: string,
    allowed: readonly S[],
    to: S,
    now: Date,
    set?: Readonly<Record<string, unknown>>,
  ): Promise<boolean>;

  /** A domain operation's compare-and-set: its sources → its target, with more columns in `set`. */
  transition(
    db: Queryable,
    id: string,
    op: Pick<StatusOperation<S>, 'sources' | 'target'>,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    return this.compareAndSetStatus(db, id, op.sources, op.target, now, set);
  }
}
