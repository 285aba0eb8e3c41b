import { rowsOf, type Queryable } from './sql';

type Row = Record<string, any>;

/** First key of the two-key advisory lock a back end's file report holds (the second: its name's hash). */
const BACKEND_FILES_LOCK = 0x6266; // "bf"

export interface BackendFile {
  readonly name: string;
  readonly bytes: number;
}

/** The files a back end reported (manageable lists), and the rows those files belong to. */
export class BackendFileRepository {
  /**
   * Replaces the back end's whole report; `db` must be in a transaction. Replicas of one back end
   * (same directory, same name) report the same files: each report takes the back end's
   * transaction-scoped advisory lock first, so they take turns instead of one inserting the rows the
   * other's delete could not see yet.
   */
  async replace(db: Queryable, backend: string, files: readonly BackendFile[], now: Date): Promise<void> {
    await db.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [BACKEND_FILES_LOCK, backend]);
    await db.query(`DELETE FROM "backend_files" WHERE backend = $1`, [backend]);
    if (files.length === 0) return;
    await db.query(
      `INSERT INTO "backend_files" (backend, name, bytes, reported_at)
       SELECT $1, f.name, f.bytes, $4 FROM unnest($2::varchar[], $3::bigint[]) AS f(name, bytes)`,
      [backend, files.map((f) => f.name), files.map((f) => f.bytes), now],
    );
  }

  /** The files of `backend` whose name starts with `prefix`, by name. */
  async list(db: Queryable, backend: string, prefix: string): Promise<BackendFile[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT name, bytes FROM "backend_files" WHERE backend = $1 AND starts_with(name, $2) ORDER BY name`,
        [backend, prefix],
      ),
    );
    return rows.map((r) => ({ name: String(r['name']), bytes: Number(r['bytes']) }));
  }

  /** Which of these ids are live volumes. */
  async liveVolumes(db: Queryable, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = rowsOf<Row>(
      await db.query(`SELECT id FROM "volumes" WHERE deleted = false AND id = ANY($1::uuid[])`, [[...ids]]),
    );
    return new Set(rows.map((r) => String(r['id'])));
  }

  /** The snapshots with these ids (deleted ones included): whether live, and their volume. */
  async snapshotsOf(
    db: Queryable,
    ids: readonly string[],
  ): Promise<Map<string, { live: boolean; volumeId: string }>> {
    if (ids.length === 0) return new Map();
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT id, deleted, volume_id FROM "snapshots" WHERE id = ANY($1::uuid[]) ORDER BY deleted DESC, created_at`,
        [[...ids]],
      ),
    );
    return new Map(
      rows.map((r) => [String(r['id']), { live: r['deleted'] !== true, volumeId: String(r['volume_id']) }]),
    );
  }
}
