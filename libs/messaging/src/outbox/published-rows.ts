import type { DataSource, EntityManager } from 'typeorm';
import type { MessagingLogger } from '../logger';
import { describeError } from '../retryable';

/** How long a published row may wait for an INSERT to carry its DELETE before one of its own. */
export const PUBLISHED_ROWS_DELETE_DELAY_MS = 100;

/**
 * Outbox rows a hand-off has published (`OutboxRelay.handOff`) and that are still to be deleted.
 * Their DELETE rides on the next outbox INSERT of the process's writer (`OutboxWriter.onHandOff`: a
 * data-modifying CTE of that statement, so a busy engine pays no statement and no commit of its
 * own for it), or, when no INSERT takes them within `delayMs`, goes as one statement for all of
 * them. Until it commits, a row keeps its hand-off lease, so no relay publishes it meanwhile; if
 * the process dies first, a relay publishes it again once the lease has passed — a duplicate, as
 * after any crash between a publish and its DELETE (at least once).
 */
export class PublishedRows {
  private ids: string[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger: MessagingLogger,
    private readonly delayMs = PUBLISHED_ROWS_DELETE_DELAY_MS,
  ) {}

  /** How many published rows wait for their DELETE. */
  get waiting(): number {
    return this.ids.length;
  }

  /** Rows published: delete them with the next INSERT, or after `delayMs` at the latest. */
  add(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.ids.push(...ids);
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.delayMs);
  }

  /**
   * Runs `insert` (an outbox INSERT with `params`) carrying the DELETE of the rows waiting, as a
   * data-modifying CTE, and returns their ids: the caller gives them back (`add`) if its transaction
   * does not commit. If the statement fails they wait again.
   */
  async insertCarryingDeletes(em: EntityManager, insert: string, params: unknown[]): Promise<string[]> {
    const ids = this.take();
    if (ids.length === 0) {
      await em.query(insert, params);
      return [];
    }
    try {
      await em.query(
        `WITH "published" AS (DELETE FROM "outbox" WHERE "id" = ANY($${params.length + 1}::uuid[])) ${insert}`,
        [...params, ids],
      );
    } catch (e) {
      this.add(ids);
      throw e;
    }
    return ids;
  }

  /**
   * Empties the list (and its timer): the caller deletes these rows (`OutboxWriter.addAlong`: in a
   * statement of its transaction), and gives them back (`add`) if that does not commit.
   */
  take(): string[] {
    const ids = this.ids;
    this.ids = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    return ids;
  }

  /** Deletes the rows still waiting now, in one statement (at a stop, or when no INSERT came). */
  flush(): Promise<void> {
    const ids = this.take();
    if (ids.length > 0) this.flushing = this.flushing.then(() => this.delete(this.dataSource.manager, ids));
    return this.flushing;
  }

  private async delete(em: EntityManager, ids: string[]): Promise<void> {
    try {
      await em.query(`DELETE FROM "outbox" WHERE "id" = ANY($1::uuid[])`, [ids]);
    } catch (e) {
      // The rows stay; once their lease passes a relay publishes them again (a duplicate).
      this.logger.warn('deleting published outbox rows failed; a relay will publish them again', {
        error: describeError(e),
        rows: ids.length,
      });
    }
  }
}
