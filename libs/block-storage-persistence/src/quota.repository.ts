import { checkQuota, type QuotaDelta, type QuotaLimits, type QuotaUsages } from '@osc/block-storage-domain';
import { Params, rowsOf, type Queryable } from './sql';

type Row = Record<string, any>;

/** Per-type quota keys (`gigabytes_<type>`), in the order their rows are locked (sorted). */
export const TYPE_KEY_PREFIXES = ['gigabytes_', 'snapshots_', 'volumes_'] as const;

/** The quota class every project falls back to (BS-9.1). */
export const DEFAULT_QUOTA_CLASS = 'default';

/**
 * Quota limits (class `default` overridden per project) and usage rows. `apply` locks the usage
 * rows of the touched resources (FOR UPDATE, in the caller's transaction), checks the limits with
 * the domain rule and moves `in_use` (or `reserved`) by the deltas, so concurrent creates cannot
 * both take the last unit.
 */
export class QuotaRepository {
  async limits(db: Queryable, projectId: string): Promise<Record<string, number>> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT resource, hard_limit, 0 AS prio FROM "quota_class_limits" WHERE class_name = $1
         UNION ALL SELECT resource, hard_limit, 1 AS prio FROM "quota_limits" WHERE project_id = $2 ORDER BY prio`,
        [DEFAULT_QUOTA_CLASS, projectId],
      ),
    );
    const out: Record<string, number> = {};
    for (const r of rows) out[r['resource']] = Number(r['hard_limit']);
    return out;
  }

  async usages(
    db: Queryable,
    projectId: string,
  ): Promise<Record<string, { inUse: number; reserved: number }>> {
    const rows = rowsOf<Row>(
      await db.query(`SELECT resource, in_use, reserved FROM "quota_usages" WHERE project_id = $1`, [
        projectId,
      ]),
    );
    const out: Record<string, { inUse: number; reserved: number }> = {};
    for (const r of rows)
      out[r['resource']] = { inUse: Number(r['in_use']), reserved: Number(r['reserved']) };
    return out;
  }

  private async lock(db: Queryable, projectId: string, resources: string[]): Promise<QuotaUsages> {
    const p = new Params();
    const pid = p.add(projectId);
    const values = resources.map((r) => `(${pid}, ${p.add(r)})`);
    await db.query(
      `INSERT INTO "quota_usages" (project_id, resource) VALUES ${values.join(', ')} ON CONFLICT DO NOTHING`,
      p.values,
    );
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT resource, in_use, reserved FROM "quota_usages" WHERE project_id = $1 AND resource = ANY($2::varchar[]) ORDER BY resource FOR UPDATE`,
        [projectId, resources],
      ),
    );
    const out: Record<string, { inUse: number; reserved: number }> = {};
    for (const r of rows)
      out[r['resource']] = { inUse: Number(r['in_use']), reserved: Number(r['reserved']) };
    return out;
  }

  /**
   * Checks (positive deltas only) and applies deltas to `in_use` (`column: 'in_use'`) or to
   * `reserved`. Throws the domain's OverLimitError when a limit would be exceeded.
   */
  async apply(
    db: Queryable,
    projectId: string,
    deltas: readonly QuotaDelta[],
    column: 'in_use' | 'reserved' = 'in_use',
    check = true,
  ): Promise<void> {
    const merged = new Map<string, number>();
    for (const d of deltas) merged.set(d.resource, (merged.get(d.resource) ?? 0) + d.delta);
    const list = [...merged.entries()]
      .filter(([, d]) => d !== 0)
      .map(([resource, delta]) => ({ resource, delta }));
    if (list.length === 0) return;
    const usages = await this.lock(db, projectId, list.map((d) => d.resource).sort());
    if (check) {
      const limits: QuotaLimits = await this.limits(db, projectId);
      checkQuota(list, limits, usages);
    }
    for (const d of list) {
      await db.query(
        `UPDATE "quota_usages" SET "${column}" = GREATEST("${column}" + $1, 0) WHERE project_id = $2 AND resource = $3`,
        [d.delta, projectId, d.resource],
      );
    }
  }

  /** Moves reserved units to in_use (commit) or drops them (rollback); rows in lock order (sorted by resource). */
  async settleReserved(
    db: Queryable,
    projectId: string,
    deltas: readonly QuotaDelta[],
    commit: boolean,
  ): Promise<void> {
    for (const d of [...deltas].sort((a, b) =>
      a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0,
    )) {
      if (d.delta === 0) continue;
      await db.query(
        `UPDATE "quota_usages" SET reserved = GREATEST(reserved - $1, 0)${commit ? ', in_use = in_use + $1' : ''} WHERE project_id = $2 AND resource = $3`,
        [d.delta, projectId, d.resource],
      );
    }
  }

  /**
   * Reserves `deltas` (checked against the limits) and records the reservation in the same
   * transaction; `settleReservation` commits or releases it exactly once.
   */
  async reserve(
    db: Queryable,
    r: {
      id: string;
      projectId: string;
      volumeId: string;
      operation: string;
      newSize: number | null;
      deltas: readonly QuotaDelta[];
      now: Date;
    },
  ): Promise<void> {
    await this.apply(db, r.projectId, r.deltas, 'reserved');
    await db.query(
      `INSERT INTO "quota_reservations" (id, project_id, volume_id, operation, new_size, deltas, created_at) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`,
      [r.id, r.projectId, r.volumeId, r.operation, r.newSize, JSON.stringify(r.deltas), r.now],
    );
  }

  /**
   * Commits (reserved → in_use) or releases a recorded reservation and forgets it. False when it
   * was already settled (another run of the job, or recovery, got there first).
   */
  async settleReservation(db: Queryable, id: string, commit: boolean): Promise<boolean> {
    // TypeORM answers a DELETE ... RETURNING with [rows, count].
    const result: unknown = await db.query(
      `DELETE FROM "quota_reservations" WHERE id = $1 RETURNING project_id, deltas`,
      [id],
    );
    const rows =
      Array.isArray(result) && result.length === 2 && typeof result[1] === 'number'
        ? (result[0] as Row[])
        : rowsOf<Row>(result);
    const row = rows[0];
    if (!row) return false;
    const deltas = (
      typeof row['deltas'] === 'string' ? JSON.parse(row['deltas']) : row['deltas']
    ) as QuotaDelta[];
    await this.settleReserved(db, row['project_id'], deltas, commit);
    return true;
  }

  /** Open reservations of a volume, oldest first. */
  async reservationsOf(
    db: Queryable,
    volumeId: string,
  ): Promise<{ id: string; operation: string; newSize: number | null }[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT id, operation, new_size FROM "quota_reservations" WHERE volume_id = $1 ORDER BY created_at, id`,
        [volumeId],
      ),
    );
    return rows.map((r) => ({
      id: String(r['id']),
      operation: String(r['operation']),
      newSize: r['new_size'] === null ? null : Number(r['new_size']),
    }));
  }

  /** Releases every open reservation of a volume (its operation is over without a result). */
  async releaseReservationsOf(db: Queryable, volumeId: string): Promise<number> {
    let n = 0;
    for (const r of await this.reservationsOf(db, volumeId))
      if (await this.settleReservation(db, r.id, false)) n++;
    return n;
  }

  async setLimits(db: Queryable, projectId: string, limits: Readonly<Record<string, number>>): Promise<void> {
    for (const [resource, limit] of Object.entries(limits)) {
      await db.query(
        `INSERT INTO "quota_limits" (project_id, resource, hard_limit) VALUES ($1, $2, $3) ON CONFLICT (project_id, resource) DO UPDATE SET hard_limit = EXCLUDED.hard_limit`,
        [projectId, resource, limit],
      );
    }
  }

  /**
   * Renaming a type renames its per-type quota keys (BS-7.2.4). The usage rows are taken in the
   * order `apply` locks them (by resource name: gigabytes_, snapshots_, volumes_), so a rename and a
   * create or delete of the same project cannot deadlock (each would hold a row the other waits for).
   */
  async renameTypeKeys(db: Queryable, oldName: string, newName: string): Promise<void> {
    for (const prefix of TYPE_KEY_PREFIXES) {
      for (const table of ['quota_limits', 'quota_usages', 'quota_class_limits']) {
        await db.query(`UPDATE "${table}" SET resource = $1 WHERE resource = $2`, [
          prefix + newName,
          prefix + oldName,
        ]);
      }
    }
  }

  async resetLimits(db: Queryable, projectId: string): Promise<void> {
    await db.query(`DELETE FROM "quota_limits" WHERE project_id = $1`, [projectId]);
  }
}

export interface StoredPool {
  readonly name: string;
  readonly backend: string;
  readonly availabilityZone: string;
  readonly capabilities: Record<string, unknown>;
  readonly updatedAt: Date;
}

/** Pool stats as back ends last reported them (BS-10.1). */
export class PoolRepository {
  async upsert(db: Queryable, pools: readonly Omit<StoredPool, 'updatedAt'>[], now: Date): Promise<void> {
    for (const pool of pools) {
      await db.query(
        `INSERT INTO "storage_pools" (name, backend, availability_zone, capabilities, updated_at) VALUES ($1, $2, $3, $4::jsonb, $5)
         ON CONFLICT (name) DO UPDATE SET backend = EXCLUDED.backend, availability_zone = EXCLUDED.availability_zone, capabilities = EXCLUDED.capabilities, updated_at = EXCLUDED.updated_at`,
        [pool.name, pool.backend, pool.availabilityZone, JSON.stringify(pool.capabilities), now],
      );
    }
  }

  /** Pools whose last report is newer than `since` (older stats are ignored, BS-10.1). */
  async listFresh(db: Queryable, since: Date): Promise<StoredPool[]> {
    return rowsOf<Row>(
      await db.query(`SELECT * FROM "storage_pools" WHERE updated_at >= $1 ORDER BY name`, [since]),
    ).map((r) => ({
      name: r['name'],
      backend: r['backend'],
      availabilityZone: r['availability_zone'],
      capabilities: r['capabilities'],
      updatedAt: r['updated_at'],
    }));
  }

  /** One pool as last reported, however old the report (its location does not age). */
  async find(db: Queryable, name: string): Promise<StoredPool | null> {
    const r = rowsOf<Row>(await db.query(`SELECT * FROM "storage_pools" WHERE name = $1`, [name]))[0];
    return r
      ? {
          name: r['name'],
          backend: r['backend'],
          availabilityZone: r['availability_zone'],
          capabilities: r['capabilities'],
          updatedAt: r['updated_at'],
        }
      : null;
  }

  /** Debits a placement in the shared view (BS-10.4) until the next report replaces it. */
  async debit(db: Queryable, name: string, size: number): Promise<void> {
    await db.query(
      `UPDATE "storage_pools" SET capabilities = capabilities
         || jsonb_build_object('free_capacity_gb', CASE WHEN jsonb_typeof(capabilities->'free_capacity_gb') = 'number' THEN to_jsonb((capabilities->>'free_capacity_gb')::numeric - $1) ELSE capabilities->'free_capacity_gb' END)
         || jsonb_build_object('allocated_capacity_gb', COALESCE((capabilities->>'allocated_capacity_gb')::numeric, 0) + $1)
         || jsonb_build_object('provisioned_capacity_gb', COALESCE((capabilities->>'provisioned_capacity_gb')::numeric, (capabilities->>'allocated_capacity_gb')::numeric, 0) + $1)
       WHERE name = $2`,
      [size, name],
    );
  }
}
