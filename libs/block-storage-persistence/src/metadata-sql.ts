import { affectedOf, returnedRows, type Queryable } from './sql';

/** The tables whose `metadata` jsonb column holds a resource's user metadata (BS-7.7.13, BS-7.8). */
export type MetadataTable = 'volumes' | 'snapshots';

type Metadata = Record<string, string>;

const json = (v: unknown): Metadata =>
  typeof v === 'string' ? (JSON.parse(v) as Metadata) : ((v ?? {}) as Metadata);

/**
 * User-metadata writes as one UPDATE each, so concurrent writers never lose each other's keys:
 * the merge happens in the statement (`metadata || patch`, `metadata - key`), not as a read, a
 * merge in the service and a rewrite of the whole column. A replace guarded by If-Match carries
 * the metadata its ETag was computed from and matches it in the same statement, so a change made
 * after the ETag was checked refuses the write instead of being overwritten.
 */
export class MetadataWriter {
  constructor(private readonly table: MetadataTable) {}

  /** Adds or overwrites the given keys, leaving the others as they are now; null when the row is gone. */
  async merge(db: Queryable, id: string, patch: Readonly<Metadata>, now: Date): Promise<Metadata | null> {
    const [row] = returnedRows<Record<string, unknown>>(
      await db.query(
        `UPDATE "${this.table}" SET metadata = metadata || $1::jsonb, updated_at = $2 WHERE id = $3 AND deleted = false RETURNING metadata`,
        [JSON.stringify(patch), now, id],
      ),
    );
    return row ? json(row['metadata']) : null;
  }

  /**
   * Replaces the whole metadata. With `expected` (the metadata an If-Match ETag was checked
   * against) the row must still hold exactly that; null when it does not, or the row is gone.
   */
  async replace(
    db: Queryable,
    id: string,
    metadata: Readonly<Metadata>,
    now: Date,
    expected: Readonly<Metadata> | null = null,
  ): Promise<Metadata | null> {
    const [row] = returnedRows<Record<string, unknown>>(
      await db.query(
        `UPDATE "${this.table}" SET metadata = $1::jsonb, updated_at = $2
         WHERE id = $3 AND deleted = false AND ($4::jsonb IS NULL OR metadata = $4::jsonb) RETURNING metadata`,
        [JSON.stringify(metadata), now, id, expected === null ? null : JSON.stringify(expected)],
      ),
    );
    return row ? json(row['metadata']) : null;
  }

  /** Removes one key; false when the row is gone or no longer has that key. */
  async deleteKey(db: Queryable, id: string, key: string, now: Date): Promise<boolean> {
    const r = await db.query(
      `UPDATE "${this.table}" SET metadata = metadata - $1::text, updated_at = $2 WHERE id = $3 AND deleted = false AND metadata ? $1::text`,
      [key, now, id],
    );
    return affectedOf(r) > 0;
  }
}
