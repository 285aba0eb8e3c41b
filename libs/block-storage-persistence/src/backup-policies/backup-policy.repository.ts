import { isUuid, type PolicyBackup } from '@osc/block-storage-domain';
import { affectedOf, Params, rowsOf, type Queryable } from '../sql';
import { wireTime } from '../volume.repository';

/** A backup policy as stored (ours, issue 21 item 3). Exactly one of volumeId and volumeTypeId is set. */
export interface StoredBackupPolicy {
  readonly id: string;
  readonly projectId: string;
  readonly userId: string | null;
  readonly name: string | null;
  readonly description: string | null;
  readonly volumeId: string | null;
  readonly volumeTypeId: string | null;
  /** The client's cron text, as accepted by `parseBackupSchedule`. */
  readonly schedule: string;
  readonly retention: number;
  readonly fullEvery: number;
  readonly skipUnchanged: boolean;
  readonly enabled: boolean;
  readonly nextRunAt: Date;
  readonly lastRunAt: Date | null;
  /** What the newest firing did (null before the first). */
  readonly lastRun: BackupPolicyRun | null;
  /** The newest failure of the policy's retention (a rebase that could not merge a chain), until one succeeds. */
  readonly lastError: string | null;
  readonly lastErrorAt: Date | null;
  /** Wire timestamps (`YYYY-MM-DDTHH:MM:SS.ffffff`, UTC) as the other block-storage rows give them. */
  readonly createdAt: string;
  readonly updatedAt: string | null;
}

/**
 * The outcome of a policy's newest firing, as GET shows it: the backups it started and the volumes it
 * did not back up, with why (a volume found unchanged since its previous backup moves from the first
 * list to the second when its worker drops the empty incremental).
 */
export interface BackupPolicyRun {
  readonly at: string;
  readonly backups: readonly string[];
  readonly skipped: readonly { readonly volume_id: string; readonly reason: string }[];
}

/** Columns a PUT may change. */
export interface BackupPolicyChanges {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly schedule?: string;
  readonly retention?: number;
  readonly fullEvery?: number;
  readonly skipUnchanged?: boolean;
  readonly enabled?: boolean;
  readonly nextRunAt?: Date;
}

type Row = Record<string, any>;

const date = (v: unknown): Date => (v instanceof Date ? v : new Date(String(v)));
const bool = (v: unknown): boolean => v === true || v === 't';

function toPolicy(r: Row): StoredBackupPolicy {
  return {
    id: r['id'],
    projectId: r['project_id'],
    userId: r['user_id'] ?? null,
    name: r['name'] ?? null,
    description: r['description'] ?? null,
    volumeId: r['volume_id'] ?? null,
    volumeTypeId: r['volume_type_id'] ?? null,
    schedule: r['schedule'],
    retention: Number(r['retention']),
    fullEvery: Number(r['full_every']),
    skipUnchanged: bool(r['skip_unchanged']),
    enabled: bool(r['enabled']),
    nextRunAt: date(r['next_run_at']),
    lastRunAt: r['last_run_at'] === null || r['last_run_at'] === undefined ? null : date(r['last_run_at']),
    lastRun: (typeof r['last_run'] === 'string' ? JSON.parse(r['last_run']) : r['last_run']) ?? null,
    lastError: r['last_error'] ?? null,
    lastErrorAt:
      r['last_error_at'] === null || r['last_error_at'] === undefined ? null : date(r['last_error_at']),
    createdAt: r['created_at_wire'],
    updatedAt: r['updated_at_wire'] ?? null,
  };
}

const SELECT = `SELECT p.*, ${wireTime('p.created_at')} AS created_at_wire, ${wireTime('p.updated_at')} AS updated_at_wire FROM "backup_policies" p`;

const CHANGE_COLUMNS: Readonly<Record<keyof BackupPolicyChanges, string>> = {
  name: 'name',
  description: 'description',
  schedule: 'schedule',
  retention: 'retention',
  fullEvery: 'full_every',
  skipUnchanged: 'skip_unchanged',
  enabled: 'enabled',
  nextRunAt: 'next_run_at',
};

/**
 * Backup policy rows, and the reads the cron-scheduler makes when one fires. Deletes and the
 * scheduler's claim both lock the row, so a policy being deleted is either fired before the
 * delete commits or never (as for workflow cron triggers).
 */
export class BackupPolicyRepository {
  async insert(
    db: Queryable,
    p: Omit<
      StoredBackupPolicy,
      'createdAt' | 'updatedAt' | 'lastRunAt' | 'lastRun' | 'lastError' | 'lastErrorAt'
    >,
    now: Date,
  ): Promise<void> {
    await db.query(
      `INSERT INTO "backup_policies" ("id","project_id","user_id","name","description","volume_id","volume_type_id","schedule",
        "retention","full_every","skip_unchanged","enabled","next_run_at","created_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
      [
        p.id,
        p.projectId,
        p.userId,
        p.name,
        p.description,
        p.volumeId,
        p.volumeTypeId,
        p.schedule,
        p.retention,
        p.fullEvery,
        p.skipUnchanged,
        p.enabled,
        p.nextRunAt,
        now,
      ],
    );
  }

  async findById(db: Queryable, id: string, projectId: string | null): Promise<StoredBackupPolicy | null> {
    if (!isUuid(id)) return null;
    const p = new Params();
    const where = [`p.id = ${p.add(id)}::uuid`];
    if (projectId !== null) where.push(`p.project_id = ${p.add(projectId)}`);
    const rows = rowsOf<Row>(await db.query(`${SELECT} WHERE ${where.join(' AND ')}`, p.values));
    return rows[0] ? toPolicy(rows[0]) : null;
  }

  /**
   * Newest first, a page of `limit` after `marker` (a policy id of the previous page); `projectId`
   * null lists every project's (an admin's all_tenants).
   */
  async list(
    db: Queryable,
    projectId: string | null,
    limit: number,
    marker: StoredBackupPolicy | null,
  ): Promise<StoredBackupPolicy[]> {
    const p = new Params();
    const where = [projectId === null ? 'TRUE' : `p.project_id = ${p.add(projectId)}`];
    if (marker !== null) {
      where.push(
        `(p.created_at, p.id) < ((SELECT created_at FROM "backup_policies" WHERE id = ${p.add(marker.id)}::uuid), ${p.add(marker.id)}::uuid)`,
      );
    }
    const rows = rowsOf<Row>(
      await db.query(
        `${SELECT} WHERE ${where.join(' AND ')} ORDER BY p.created_at DESC, p.id DESC LIMIT ${p.add(limit)}`,
        p.values,
      ),
    );
    return rows.map(toPolicy);
  }

  /** Applies a PUT; false when the row is gone. */
  async update(db: Queryable, id: string, changes: BackupPolicyChanges, now: Date): Promise<boolean> {
    const p = new Params();
    const sets = [`"updated_at" = ${p.add(now)}`];
    for (const [key, column] of Object.entries(CHANGE_COLUMNS) as [keyof BackupPolicyChanges, string][]) {
      if (changes[key] !== undefined) sets.push(`"${column}" = ${p.add(changes[key])}`);
    }
    return (
      affectedOf(
        await db.query(
          `UPDATE "backup_policies" SET ${sets.join(', ')} WHERE "id" = ${p.add(id)}::uuid`,
          p.values,
        ),
      ) > 0
    );
  }

  /** Deletes the row (waiting for a firing that holds it); false when it was already gone. */
  async delete(db: Queryable, id: string): Promise<boolean> {
    return affectedOf(await db.query(`DELETE FROM "backup_policies" WHERE "id" = $1::uuid`, [id])) > 0;
  }

  /**
   * Claims due enabled policies for this transaction: replicas skip rows another one holds, so each
   * due run is taken by one of them; the caller advances `next_run_at` before committing.
   */
  async claimDue(db: Queryable, now: Date, limit: number): Promise<StoredBackupPolicy[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `${SELECT} WHERE p."enabled" = true AND p."next_run_at" <= $1::timestamptz
          ORDER BY p."next_run_at", p."id" LIMIT $2 FOR UPDATE OF p SKIP LOCKED`,
        [now.toISOString(), limit],
      ),
    );
    return rows.map(toPolicy);
  }

  /** Claims one policy (retention passes); null when another replica holds it or it is gone. */
  async claim(db: Queryable, id: string): Promise<StoredBackupPolicy | null> {
    const rows = rowsOf<Row>(
      await db.query(`${SELECT} WHERE p.id = $1::uuid FOR UPDATE OF p SKIP LOCKED`, [id]),
    );
    return rows[0] ? toPolicy(rows[0]) : null;
  }

  /** Records a firing: the next run, and what this one did. */
  async advance(
    db: Queryable,
    id: string,
    nextRunAt: Date,
    ranAt: Date,
    run: BackupPolicyRun,
  ): Promise<void> {
    await db.query(
      `UPDATE "backup_policies" SET "next_run_at" = $2, "last_run_at" = $3, "last_run" = $4::jsonb WHERE "id" = $1::uuid`,
      [id, nextRunAt, ranAt, JSON.stringify(run)],
    );
  }

  /**
   * The policy that made this backup when it asks to drop an incremental that changed nothing
   * (`skip_unchanged`), or null (not a policy's backup, or the policy keeps every run).
   */
  async skippingPolicyOf(db: Queryable, backupId: string): Promise<string | null> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT p.id FROM "backups" b JOIN "backup_policies" p ON p.id = b.backup_policy_id
          WHERE b.id = $1::uuid AND p.skip_unchanged = true`,
        [backupId],
      ),
    );
    return rows[0] ? String(rows[0]['id']) : null;
  }

  /**
   * A started backup the worker dropped: it leaves the newest run's `backups` for its `skipped`,
   * with the reason; a run that has been replaced since (the policy fired again) is left alone.
   */
  async recordDropped(
    db: Queryable,
    policyId: string,
    backupId: string,
    volumeId: string,
    reason: string,
  ): Promise<void> {
    await db.query(
      `UPDATE "backup_policies"
          SET "last_run" = jsonb_set(
                jsonb_set("last_run", '{backups}', ("last_run"->'backups') - $2::text),
                '{skipped}', COALESCE("last_run"->'skipped', '[]'::jsonb) || jsonb_build_array(jsonb_build_object('volume_id', $3::text, 'reason', $4::text)))
        WHERE "id" = $1::uuid AND "last_run"->'backups' ? $2::text`,
      [policyId, backupId, volumeId, reason],
    );
  }

  /**
   * Records a failure of the retention of the policy that made `backupId` (a rebase that gave up), or,
   * with `error` null, clears it (a rebase of that policy succeeded).
   */
  async recordRetentionError(
    db: Queryable,
    backupId: string,
    error: string | null,
    now: Date,
  ): Promise<void> {
    await db.query(
      `UPDATE "backup_policies" SET "last_error" = $2, "last_error_at" = $3
        WHERE "id" = (SELECT "backup_policy_id" FROM "backups" WHERE "id" = $1::uuid)
          AND ($2::text IS NOT NULL OR "last_error" IS NOT NULL)`,
      [backupId, error, error === null ? null : now],
    );
  }

  /** The earliest next run of any enabled policy (the scheduler sleeps until then), or null. */
  async earliestDue(db: Queryable): Promise<Date | null> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT "next_run_at" FROM "backup_policies" WHERE "enabled" = true ORDER BY "next_run_at" LIMIT 1`,
      ),
    );
    return rows[0] ? date(rows[0]['next_run_at']) : null;
  }

  /** The volumes a policy backs up now: its volume, or its project's volumes of its type (not deleted). */
  async targetVolumeIds(db: Queryable, policy: StoredBackupPolicy): Promise<string[]> {
    const rows =
      policy.volumeId !== null
        ? rowsOf<Row>(
            await db.query(
              `SELECT id FROM "volumes" WHERE id = $1::uuid AND deleted = false AND project_id = $2`,
              [policy.volumeId, policy.projectId],
            ),
          )
        : rowsOf<Row>(
            await db.query(
              `SELECT id FROM "volumes" WHERE volume_type_id = $1::uuid AND deleted = false AND project_id = $2 ORDER BY created_at, id`,
              [policy.volumeTypeId, policy.projectId],
            ),
          );
    return rows.map((r) => String(r['id']));
  }

  /** The volume's backups (not deleted) as the policy decisions see them, `byPolicy` for this policy's. */
  async backupsOfVolume(db: Queryable, volumeId: string, policyId: string): Promise<PolicyBackup[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT id, parent_id, created_at, status, backup_policy_id FROM "backups" WHERE volume_id = $1::uuid AND deleted = false ORDER BY created_at, id`,
        [volumeId],
      ),
    );
    return rows.map((r) => ({
      id: String(r['id']),
      parentId: r['parent_id'] ?? null,
      createdAt: date(r['created_at']),
      status: String(r['status']),
      byPolicy: r['backup_policy_id'] === policyId,
    }));
  }

  /** Volumes holding more available backups of this policy than `retention` (candidates for a retention pass). */
  async volumesOverRetention(db: Queryable, policy: StoredBackupPolicy): Promise<string[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT volume_id FROM "backups" WHERE backup_policy_id = $1::uuid AND deleted = false AND status = 'available'
          GROUP BY volume_id HAVING count(*) > $2`,
        [policy.id, policy.retention],
      ),
    );
    return rows.map((r) => String(r['volume_id']));
  }

  /** Policies with more available backups of some volume than their retention (ids only). */
  async overRetention(db: Queryable, limit: number): Promise<string[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT DISTINCT p.id FROM "backup_policies" p
           JOIN LATERAL (SELECT volume_id FROM "backups" b WHERE b.backup_policy_id = p.id AND b.deleted = false AND b.status = 'available'
                         GROUP BY volume_id HAVING count(*) > p.retention) o ON TRUE
          LIMIT $1`,
        [limit],
      ),
    );
    return rows.map((r) => String(r['id']));
  }

  /**
   * Whether a restore reads one of the volume's backups now (a backup `restoring`): a restore reads
   * its whole chain from the locations it found when it started, so while one runs no object of the
   * volume's backups may go (retention waits; a rebase keeps the old objects until it ends).
   */
  async restoreReadsVolume(db: Queryable, volumeId: string): Promise<boolean> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT 1 FROM "backups" WHERE "volume_id" = $1::uuid AND "deleted" = false AND "status" = 'restoring' LIMIT 1`,
        [volumeId],
      ),
    );
    return rows.length > 0;
  }

  /** Marks a backup as made by the policy (in the transaction that inserted it). */
  async markPolicyBackup(db: Queryable, backupId: string, policyId: string): Promise<void> {
    await db.query(`UPDATE "backups" SET "backup_policy_id" = $2::uuid WHERE "id" = $1::uuid`, [
      backupId,
      policyId,
    ]);
  }

  /**
   * The commit point of a rebase: the backup leaves its parent for the merged full under `toPrefix`,
   * by compare-and-set on (status available, parent, prefix); the old parent loses a dependent.
   * False when the row moved on (already rebased, deleted, busy): the caller retries or stops.
   */
  async completeRebase(
    db: Queryable,
    id: string,
    from: { readonly parentId: string; readonly prefix: string },
    to: { readonly prefix: string; readonly objectCount: number },
    now: Date,
  ): Promise<boolean> {
    const done = affectedOf(
      await db.query(
        `UPDATE "backups" SET "parent_id" = NULL, "service_metadata" = $4, "object_count" = $5, "updated_at" = $6
          WHERE "id" = $1::uuid AND "deleted" = false AND "status" = 'available' AND "parent_id" = $2::uuid AND "service_metadata" = $3`,
        [id, from.parentId, from.prefix, to.prefix, to.objectCount, now],
      ),
    );
    if (done > 0) {
      await db.query(
        `UPDATE "backups" SET "num_dependent_backups" = GREATEST("num_dependent_backups" - 1, 0) WHERE "id" = $1::uuid`,
        [from.parentId],
      );
    }
    return done > 0;
  }
}
