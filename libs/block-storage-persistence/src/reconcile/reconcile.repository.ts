import { MIGRATION_IN_FLIGHT_STATUSES, type QuotaFigure } from '@osc/block-storage-domain';
import { toBackup, type StoredBackup } from '../backups/backup.repository';
import { Params, rowsOf, type Queryable } from '../sql';

type Row = Record<string, any>;

/** What the reconciler last did to a row (its resumes in the current status). */
export interface ReconcileMark {
  readonly status: string;
  readonly resumes: number;
}

interface Idle {
  /** When the row last changed (or the reconciler last resumed it). */
  readonly since: Date;
  readonly mark: ReconcileMark | null;
}

export interface StuckVolumeRow extends Idle {
  readonly id: string;
  readonly projectId: string;
  readonly status: string;
  readonly host: string | null;
  readonly size: number;
  readonly availabilityZone: string | null;
  readonly sourceVolid: string | null;
  readonly snapshotId: string | null;
  readonly migrationStatus: string | null;
  readonly adminMetadata: Readonly<Record<string, string>>;
  readonly attached: boolean;
  /** A `creating` backup of the volume itself (it holds `backing-up`). */
  readonly backupLive: boolean;
  /** A `restoring` backup into the volume (it holds `restoring-backup`). */
  readonly restoreLive: boolean;
  /** The open extend reservation's target size. */
  readonly extendNewSize: number | null;
  /** The `restoring` snapshot of a revert. */
  readonly restoringSnapshotId: string | null;
}

export interface StuckSnapshotRow extends Idle {
  readonly id: string;
  readonly projectId: string;
  readonly volumeId: string;
  readonly status: string;
  readonly host: string | null;
  readonly manageSource: string | null;
  /** A `creating` backup of the snapshot (holds `backing-up`). */
  readonly backupLive: boolean;
  /** Its volume is `reverting` (holds `restoring`). */
  readonly revertLive: boolean;
}

export interface StuckBackupRow extends Idle {
  readonly backup: StoredBackup;
}

export interface StuckGroupRow extends Idle {
  readonly id: string;
  readonly projectId: string;
  readonly status: string;
  readonly pending: boolean;
  /** Statuses of its live members (volumes of a group, snapshots of a group snapshot). */
  readonly members: string[];
}

/**
 * A scan (no locks: rows left alone are never locked) or the claim of one row before acting on it
 * (`FOR UPDATE SKIP LOCKED`: a row another replica, a request or a worker holds is not waited for).
 */
export interface StuckQuery {
  readonly statuses: readonly string[];
  readonly before: Date;
  readonly limit: number;
  readonly claim?: string;
}

const claimSql = (q: StuckQuery, p: Params): { where: string; lock: string } =>
  q.claim === undefined
    ? { where: '', lock: '' }
    : { where: ` AND x.id = ${p.add(q.claim)}`, lock: ' FOR UPDATE OF x SKIP LOCKED' };

/** `GREATEST(changed, resumed)` of a row aliased `x` joined to its mark `m`. */
const SINCE = `GREATEST(COALESCE(x.updated_at, x.created_at), COALESCE(m.resumed_at, x.created_at))`;
const markJoin = (resource: string): string =>
  `LEFT JOIN "reconcile_marks" m ON m.resource = '${resource}' AND m.resource_id = x.id`;
const markOf = (r: Row): ReconcileMark | null =>
  r['mark_status'] === null || r['mark_status'] === undefined
    ? null
    : { status: String(r['mark_status']), resumes: Number(r['mark_resumes']) };
const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : v);

/**
 * The reconciler's SQL: rows in a transitional status idle since before a cutoff (scanned without
 * locks, then claimed one at a time `FOR UPDATE SKIP LOCKED` in the transaction that acts on it),
 * the resume marks, and the quota recount.
 */
export class ReconcileRepository {
  async stuckVolumes(em: Queryable, q: StuckQuery): Promise<StuckVolumeRow[]> {
    const p = new Params();
    p.add([...q.statuses]);
    p.add(q.before);
    p.add(q.limit);
    const c = claimSql(q, p);
    const inFlight = p.add([...MIGRATION_IN_FLIGHT_STATUSES]);
    const rows = rowsOf<Row>(
      await em.query(
        `SELECT x.id, x.project_id, x.status, x.host, x.size, x.availability_zone, x.source_volid, x.snapshot_id, x.migration_status,
                x.admin_metadata, x.attach_status, ${SINCE} AS since, m.status AS mark_status, m.resumes AS mark_resumes,
                EXISTS (SELECT 1 FROM "backups" b WHERE b.volume_id = x.id AND b.snapshot_id IS NULL AND b.status = 'creating' AND b.deleted = false) AS backup_live,
                EXISTS (SELECT 1 FROM "backups" b WHERE b.restore_volume_id = x.id AND b.status = 'restoring' AND b.deleted = false) AS restore_live,
                (SELECT r.new_size FROM "quota_reservations" r WHERE r.volume_id = x.id AND r.operation = 'extend' AND r.new_size IS NOT NULL ORDER BY r.created_at, r.id LIMIT 1) AS extend_new_size,
                (SELECT s.id FROM "snapshots" s WHERE s.volume_id = x.id AND s.status = 'restoring' AND s.deleted = false ORDER BY s.created_at LIMIT 1) AS restoring_snapshot_id
         FROM "volumes" x ${markJoin('volume')}
         WHERE x.deleted = false AND (x.status = ANY($1::varchar[]) OR x.migration_status = ANY(${inFlight}::varchar[])) AND ${SINCE} < $2${c.where}
         ORDER BY since, x.id LIMIT $3${c.lock}`,
        p.values,
      ),
    );
    return rows.map((r) => ({
      id: String(r['id']),
      projectId: r['project_id'],
      status: r['status'],
      host: r['host'] ?? null,
      size: Number(r['size']),
      availabilityZone: r['availability_zone'] ?? null,
      sourceVolid: r['source_volid'] ?? null,
      snapshotId: r['snapshot_id'] ?? null,
      migrationStatus: r['migration_status'] ?? null,
      adminMetadata: json(r['admin_metadata']) ?? {},
      attached: (r['attach_status'] ?? 'detached') !== 'detached',
      backupLive: r['backup_live'] === true,
      restoreLive: r['restore_live'] === true,
      extendNewSize:
        r['extend_new_size'] === null || r['extend_new_size'] === undefined
          ? null
          : Number(r['extend_new_size']),
      restoringSnapshotId: r['restoring_snapshot_id'] ?? null,
      since: new Date(r['since']),
      mark: markOf(r),
    }));
  }

  async stuckSnapshots(em: Queryable, q: StuckQuery): Promise<StuckSnapshotRow[]> {
    const p = new Params();
    p.add([...q.statuses]);
    p.add(q.before);
    p.add(q.limit);
    const c = claimSql(q, p);
    const rows = rowsOf<Row>(
      await em.query(
        `SELECT x.id, x.project_id, x.volume_id, x.status, x.host, x.manage_source, ${SINCE} AS since, m.status AS mark_status, m.resumes AS mark_resumes,
                EXISTS (SELECT 1 FROM "backups" b WHERE b.snapshot_id = x.id AND b.status = 'creating' AND b.deleted = false) AS backup_live,
                EXISTS (SELECT 1 FROM "volumes" v WHERE v.id = x.volume_id AND v.status = 'reverting' AND v.deleted = false) AS revert_live
         FROM "snapshots" x ${markJoin('snapshot')}
         WHERE x.deleted = false AND x.status = ANY($1::varchar[]) AND ${SINCE} < $2${c.where}
         ORDER BY since, x.id LIMIT $3${c.lock}`,
        p.values,
      ),
    );
    return rows.map((r) => ({
      id: String(r['id']),
      projectId: r['project_id'],
      volumeId: String(r['volume_id']),
      status: r['status'],
      host: r['host'] ?? null,
      manageSource: r['manage_source'] ?? null,
      backupLive: r['backup_live'] === true,
      revertLive: r['revert_live'] === true,
      since: new Date(r['since']),
      mark: markOf(r),
    }));
  }

  async stuckBackups(em: Queryable, q: StuckQuery): Promise<StuckBackupRow[]> {
    const p = new Params();
    p.add([...q.statuses]);
    p.add(q.before);
    p.add(q.limit);
    const c = claimSql(q, p);
    const rows = rowsOf<Row>(
      await em.query(
        `SELECT x.*, ${SINCE} AS since, m.status AS mark_status, m.resumes AS mark_resumes
         FROM "backups" x ${markJoin('backup')}
         WHERE x.deleted = false AND x.status = ANY($1::varchar[]) AND ${SINCE} < $2${c.where}
         ORDER BY since, x.id LIMIT $3${c.lock}`,
        p.values,
      ),
    );
    return rows.map((r) => ({ backup: toBackup(r), since: new Date(r['since']), mark: markOf(r) }));
  }

  /**
   * Groups (`group`) or group snapshots (`group_snapshot`) in a transitional status idle since
   * before the cutoff, with their members' statuses.
   */
  async stuckGroups(
    em: Queryable,
    resource: 'group' | 'group_snapshot',
    q: StuckQuery,
  ): Promise<StuckGroupRow[]> {
    const [table, members] =
      resource === 'group'
        ? ['groups', `SELECT v.status FROM "volumes" v WHERE v.group_id = x.id AND v.deleted = false`]
        : [
            'group_snapshots',
            `SELECT s.status FROM "snapshots" s WHERE s.group_snapshot_id = x.id AND s.deleted = false`,
          ];
    const p = new Params();
    p.add([...q.statuses]);
    p.add(q.before);
    p.add(q.limit);
    const c = claimSql(q, p);
    const rows = rowsOf<Row>(
      await em.query(
        `SELECT x.id, x.project_id, x.status, x.pending, ${SINCE} AS since, m.status AS mark_status, m.resumes AS mark_resumes,
                ARRAY(${members}) AS members
         FROM "${table}" x ${markJoin(resource)}
         WHERE x.deleted = false AND x.status = ANY($1::varchar[]) AND ${SINCE} < $2${c.where}
         ORDER BY since, x.id LIMIT $3${c.lock}`,
        p.values,
      ),
    );
    return rows.map((r) => ({
      id: String(r['id']),
      projectId: r['project_id'],
      status: r['status'],
      pending: r['pending'] === true,
      members: Array.isArray(r['members']) ? (r['members'] as string[]) : [],
      since: new Date(r['since']),
      mark: markOf(r),
    }));
  }

  /** Counts one more resume of the row in `status` (a new status starts at 1); the bound restarts now. */
  async markResumed(em: Queryable, resource: string, id: string, status: string, now: Date): Promise<void> {
    await em.query(
      `INSERT INTO "reconcile_marks" (resource, resource_id, status, resumes, resumed_at) VALUES ($1, $2, $3, 1, $4)
       ON CONFLICT (resource, resource_id) DO UPDATE SET
         resumes = CASE WHEN "reconcile_marks".status = EXCLUDED.status THEN "reconcile_marks".resumes + 1 ELSE 1 END,
         status = EXCLUDED.status, resumed_at = EXCLUDED.resumed_at`,
      [resource, id, status, now],
    );
  }

  /** Forgets the marks of rows that are gone or no longer in the marked status' resource table. */
  async forgetMark(em: Queryable, resource: string, id: string): Promise<void> {
    await em.query(`DELETE FROM "reconcile_marks" WHERE resource = $1 AND resource_id = $2`, [resource, id]);
  }

  /** Projects with usage rows or quota-consuming rows. */
  async quotaProjects(em: Queryable): Promise<string[]> {
    return rowsOf<Row>(
      await em.query(
        `SELECT project_id FROM "quota_usages" UNION SELECT project_id FROM "volumes" WHERE deleted = false
         UNION SELECT project_id FROM "snapshots" WHERE deleted = false UNION SELECT project_id FROM "backups" WHERE deleted = false
         UNION SELECT project_id FROM "groups" WHERE deleted = false ORDER BY 1`,
      ),
    ).map((r) => String(r['project_id']));
  }

  /**
   * Creates the usage rows the recount needs (0/0), then locks every usage row of the project
   * (FOR UPDATE): a request or worker changing usage locks these rows too, so the recount that
   * follows sees no change half done. Returns the stored figures of the locked rows.
   */
  async lockUsages(
    em: Queryable,
    projectId: string,
    keys: readonly string[],
  ): Promise<Record<string, QuotaFigure>> {
    if (keys.length > 0) {
      const p = new Params();
      const pid = p.add(projectId);
      await em.query(
        `INSERT INTO "quota_usages" (project_id, resource) VALUES ${keys.map((k) => `(${pid}, ${p.add(k)})`).join(', ')} ON CONFLICT DO NOTHING`,
        p.values,
      );
    }
    const out: Record<string, QuotaFigure> = {};
    for (const r of rowsOf<Row>(
      await em.query(
        `SELECT resource, in_use, reserved FROM "quota_usages" WHERE project_id = $1 ORDER BY resource FOR UPDATE`,
        [projectId],
      ),
    )) {
      out[String(r['resource'])] = { inUse: Number(r['in_use']), reserved: Number(r['reserved']) };
    }
    return out;
  }

  /**
   * Usage as the rows say (Cinder's quota sync): live quota-consuming volumes and snapshots
   * (count and gigabytes, in total and per volume type), backups whose reservation was settled
   * (a `creating` backup still counts as reserved), live groups; reserved = the open reservations'
   * deltas.
   */
  async recount(em: Queryable, projectId: string): Promise<Record<string, QuotaFigure>> {
    const rows = rowsOf<Row>(
      await em.query(
        `WITH vol AS (SELECT v.size, t.name AS type FROM "volumes" v LEFT JOIN "volume_types" t ON t.id = v.volume_type_id
                      WHERE v.project_id = $1 AND v.deleted = false AND v.use_quota),
              snap AS (SELECT s.size, t.name AS type FROM "snapshots" s LEFT JOIN "volume_types" t ON t.id = s.volume_type_id
                       WHERE s.project_id = $1 AND s.deleted = false AND s.use_quota),
              bak AS (SELECT b.size FROM "backups" b WHERE b.project_id = $1 AND b.deleted = false
                      AND NOT EXISTS (SELECT 1 FROM "quota_reservations" r WHERE r.id = b.id)),
              used (resource, n) AS (
                SELECT 'volumes', count(*) FROM vol
                UNION ALL SELECT 'gigabytes', COALESCE(sum(size), 0) FROM (SELECT size FROM vol UNION ALL SELECT size FROM snap) g
                UNION ALL SELECT 'snapshots', count(*) FROM snap
                UNION ALL SELECT 'backups', count(*) FROM bak
                UNION ALL SELECT 'backup_gigabytes', COALESCE(sum(size), 0) FROM bak
                UNION ALL SELECT 'groups', count(*) FROM "groups" WHERE project_id = $1 AND deleted = false
                UNION ALL SELECT 'volumes_' || type, count(*) FROM vol WHERE type IS NOT NULL GROUP BY type
                UNION ALL SELECT 'snapshots_' || type, count(*) FROM snap WHERE type IS NOT NULL GROUP BY type
                UNION ALL SELECT 'gigabytes_' || type, sum(size) FROM (SELECT size, type FROM vol UNION ALL SELECT size, type FROM snap) g WHERE type IS NOT NULL GROUP BY type),
              held (resource, n) AS (
                SELECT d->>'resource', sum((d->>'delta')::bigint) FROM "quota_reservations" r, jsonb_array_elements(r.deltas) d
                WHERE r.project_id = $1 GROUP BY d->>'resource')
         SELECT resource, sum(used_n)::bigint AS in_use, sum(held_n)::bigint AS reserved FROM (
           SELECT resource, n AS used_n, 0 AS held_n FROM used UNION ALL SELECT resource, 0, n FROM held) u
         GROUP BY resource`,
        [projectId],
      ),
    );
    const out: Record<string, QuotaFigure> = {};
    for (const r of rows)
      out[String(r['resource'])] = {
        inUse: Number(r['in_use']),
        reserved: Math.max(0, Number(r['reserved'])),
      };
    return out;
  }

  async setUsage(
    em: Queryable,
    projectId: string,
    resource: string,
    column: 'in_use' | 'reserved',
    value: number,
  ): Promise<void> {
    await em.query(`UPDATE "quota_usages" SET "${column}" = $1 WHERE project_id = $2 AND resource = $3`, [
      value,
      projectId,
      resource,
    ]);
  }
}
