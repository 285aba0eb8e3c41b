import { isUuid, type BackupStatus, type BackupValue, type Paging } from '@osc/block-storage-domain';
import { afterMarker, pageTail } from '../list-sql';
import { affectedOf, Params, rowsOf, type Queryable, UUID_COLUMNS, uuidColumnEquals } from '../sql';
import { recordStatusChange } from '../story/status-story';
import { tellChanged, wireTime } from '../volume.repository';
import { StatusRepository } from '../status-repository';

/** A backup as stored: the domain value plus what only services and workers read. */
export interface StoredBackup extends BackupValue {
  readonly volumePreviousStatus: string | null;
  readonly importRecord: Readonly<Record<string, unknown>> | null;
  readonly deleted: boolean;
}

type Row = Record<string, any>;

export function toBackup(r: Row): StoredBackup {
  const json = (v: unknown): any => (typeof v === 'string' ? JSON.parse(v) : v);
  return {
    id: r['id'],
    projectId: r['project_id'],
    userId: r['user_id'] ?? null,
    volumeId: r['volume_id'],
    snapshotId: r['snapshot_id'] ?? null,
    parentId: r['parent_id'] ?? null,
    name: r['display_name'] ?? null,
    description: r['display_description'] ?? null,
    status: r['status'] as BackupStatus,
    failReason: r['fail_reason'] ?? null,
    size: Number(r['size']),
    objectCount: Number(r['object_count'] ?? 0),
    availabilityZone: r['availability_zone'] ?? null,
    container: r['container'] ?? null,
    host: r['host'] ?? null,
    service: r['service'] ?? null,
    serviceMetadata: r['service_metadata'] ?? null,
    numDependentBackups: Number(r['num_dependent_backups'] ?? 0),
    metadata: json(r['metadata']) ?? {},
    encryptionKeyId: r['encryption_key_id'] ?? null,
    restoreVolumeId: r['restore_volume_id'] ?? null,
    progress: r['progress'] === null || r['progress'] === undefined ? null : Number(r['progress']),
    dataTimestamp: r['data_timestamp'],
    createdAt: r['created_at'],
    updatedAt: r['updated_at'] ?? null,
    volumePreviousStatus: r['volume_previous_status'] ?? null,
    importRecord: json(r['import_record']) ?? null,
    deleted: r['deleted'] === true || r['deleted'] === 't',
  };
}

const SELECT = `SELECT b.*, ${wireTime('b.created_at')} AS created_at, ${wireTime('b.updated_at')} AS updated_at, ${wireTime('b.data_timestamp')} AS data_timestamp FROM "backups" b`;

/** Domain field → column. */
const COLUMNS: Readonly<Record<string, string>> = {
  id: 'id',
  name: 'display_name',
  status: 'status',
  size: 'size',
  volume_id: 'volume_id',
  project_id: 'project_id',
  availability_zone: 'availability_zone',
  container: 'container',
  snapshot_id: 'snapshot_id',
  created_at: 'created_at',
  updated_at: 'updated_at',
};
const TEXT = new Set(['name', 'status', 'project_id', 'availability_zone', 'container']);

const sortExpr = (key: string, alias: string): string => {
  if (key === 'updated_at') return `COALESCE(${alias}."updated_at", ${alias}."created_at")`;
  const col = COLUMNS[key] ?? 'id';
  return TEXT.has(key) ? `COALESCE(${alias}."${col}", '')` : `${alias}."${col}"`;
};

/** What a status write returns for its story line. */
const STORY_COLUMNS = 'project_id, volume_id, snapshot_id, restore_volume_id';
const storyIds =
  (id: string) =>
  (
    row: Row,
  ): {
    resource: 'backup';
    backupId: string;
    volumeId: string;
    snapshotId: string | null;
    restoreVolumeId: string | null;
    projectId: string;
  } => ({
    resource: 'backup',
    backupId: id,
    volumeId: row['volume_id'],
    snapshotId: row['snapshot_id'] ?? null,
    restoreVolumeId: row['restore_volume_id'] ?? null,
    projectId: row['project_id'],
  });

/** Columns a service may set through {@link BackupRepository.update}. */
const JSON_COLUMNS = new Set(['metadata', 'import_record']);

/** Backup rows: lookups, keyset lists, compare-and-set status changes, dependent counts. */
export class BackupRepository extends StatusRepository<BackupStatus> {
  async findById(
    db: Queryable,
    id: string,
    projectId: string | null,
    opts: { forUpdate?: boolean; withDeleted?: boolean } = {},
  ): Promise<StoredBackup | null> {
    if (!isUuid(id)) return null;
    const p = new Params();
    const where = [`b.id = ${p.add(id)}::uuid`];
    if (!opts.withDeleted) where.push('b.deleted = false');
    if (projectId !== null) where.push(`b.project_id = ${p.add(projectId)}`);
    const rows = rowsOf<Row>(
      await db.query(
        `${SELECT} WHERE ${where.join(' AND ')}${opts.forUpdate ? ' FOR UPDATE OF b' : ''}`,
        p.values,
      ),
    );
    return rows[0] ? toBackup(rows[0]) : null;
  }

  async insert(db: Queryable, b: StoredBackup): Promise<void> {
    await db.query(
      `INSERT INTO "backups" ("id","project_id","user_id","volume_id","snapshot_id","parent_id","display_name","display_description","status",
        "fail_reason","size","object_count","availability_zone","container","host","service","service_metadata","num_dependent_backups",
        "metadata","encryption_key_id","restore_volume_id","volume_previous_status","import_record","data_timestamp","created_at","updated_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19::jsonb,$20,$21,$22,$23::jsonb,$24,$25,$26)`,
      [
        b.id,
        b.projectId,
        b.userId,
        b.volumeId,
        b.snapshotId,
        b.parentId,
        b.name,
        b.description,
        b.status,
        b.failReason,
        b.size,
        b.objectCount,
        b.availabilityZone,
        b.container,
        b.host,
        b.service,
        b.serviceMetadata,
        b.numDependentBackups,
        JSON.stringify(b.metadata),
        b.encryptionKeyId,
        b.restoreVolumeId,
        b.volumePreviousStatus,
        b.importRecord === null ? null : JSON.stringify(b.importRecord),
        b.dataTimestamp,
        b.createdAt,
        b.updatedAt,
      ],
    );
    recordStatusChange(db, {
      resource: 'backup',
      backupId: b.id,
      volumeId: b.volumeId,
      snapshotId: b.snapshotId,
      projectId: b.projectId,
      status: b.status,
      previousStatus: null,
    });
  }

  /** Removes a soft-deleted row so an import can revive its id (BS-7.9.9). */
  async purgeDeleted(db: Queryable, id: string): Promise<void> {
    await db.query(`DELETE FROM "backups" WHERE id = $1 AND deleted = true`, [id]);
  }

  /** A page of backups: `filters` are exact matches on known fields (an unknown field matches nothing). */
  async list(
    db: Queryable,
    projectId: string | null,
    filters: Readonly<Record<string, string>>,
    paging: Paging,
    withCount: boolean,
  ): Promise<{ items: StoredBackup[]; count: number | null }> {
    const p = new Params();
    const where = ['b.deleted = false'];
    if (projectId !== null) where.push(`b.project_id = ${p.add(projectId)}`);
    for (const [key, value] of Object.entries(filters)) {
      const col = COLUMNS[key];
      if (col === undefined) where.push('FALSE');
      else if (UUID_COLUMNS.has(col)) where.push(uuidColumnEquals(`b."${col}"`, value, p));
      else where.push(`b."${col}"::text = ${p.add(value)}`);
    }
    let count: number | null = null;
    if (withCount) {
      const c = rowsOf<Row>(
        await db.query(`SELECT count(*)::int AS n FROM "backups" b WHERE ${where.join(' AND ')}`, p.values),
      );
      count = Number(c[0]?.['n'] ?? 0);
    }
    if (paging.marker !== null)
      where.push(afterMarker(paging.sort, sortExpr, 'b', 'backups', paging.marker, p));
    const sql = `${SELECT} WHERE ${where.join(' AND ')} ${pageTail(paging.sort, sortExpr, 'b', paging, p)}`;
    return { items: rowsOf<Row>(await db.query(sql, p.values)).map(toBackup), count };
  }

  /**
   * The parent of a new incremental backup (BS-7.9.4): the project's `available` backup of the
   * volume with the newest data_timestamp, older than `before` when given (snapshot sources).
   */
  async latestAvailable(
    db: Queryable,
    projectId: string,
    volumeId: string,
    before: Date | string | null,
  ): Promise<StoredBackup | null> {
    const p = new Params();
    const where = [
      'b.deleted = false',
      `b.status = 'available'`,
      `b.project_id = ${p.add(projectId)}`,
      `b.volume_id = ${p.add(volumeId)}::uuid`,
    ];
    if (before !== null) where.push(`b.data_timestamp < ${p.add(before)}::timestamptz`);
    const rows = rowsOf<Row>(
      await db.query(
        `${SELECT} WHERE ${where.join(' AND ')} ORDER BY b.data_timestamp DESC, b.created_at DESC LIMIT 1`,
        p.values,
      ),
    );
    return rows[0] ? toBackup(rows[0]) : null;
  }

  /** `UPDATE backups SET status = :to ... WHERE id = :id AND status IN (:allowed)` (STYLE §2). */
  async compareAndSetStatus(
    db: Queryable,
    id: string,
    allowed: readonly BackupStatus[],
    to: BackupStatus,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"status" = ${p.add(to)}`, `"updated_at" = ${p.add(now)}`];
    for (const [col, value] of Object.entries(set))
      sets.push(
        `"${col}" = ${p.add(JSON_COLUMNS.has(col) && value !== null ? JSON.stringify(value) : value)}${JSON_COLUMNS.has(col) ? '::jsonb' : ''}`,
      );
    const r = await db.query(
      `UPDATE "backups" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false AND status = ANY(${p.add([...allowed])}::varchar[]) RETURNING ${STORY_COLUMNS}`,
      p.values,
    );
    return tellChanged(db, r, allowed, to, storyIds(id));
  }

  async update(
    db: Queryable,
    id: string,
    set: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"updated_at" = ${p.add(now)}`];
    for (const [col, value] of Object.entries(set))
      sets.push(
        `"${col}" = ${p.add(JSON_COLUMNS.has(col) && value !== null ? JSON.stringify(value) : value)}${JSON_COLUMNS.has(col) ? '::jsonb' : ''}`,
      );
    const status = set['status'];
    const r = await db.query(
      `UPDATE "backups" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false${typeof status === 'string' ? ` RETURNING ${STORY_COLUMNS}` : ''}`,
      p.values,
    );
    return typeof status === 'string' ? tellChanged(db, r, [], status, storyIds(id)) : affectedOf(r) > 0;
  }

  /**
   * A running job's progress report: bumps `updated_at` (the reconciler leaves a backup alone while
   * it moves) and stores `percent` while the backup is still in `status`. False when the backup
   * left that status or is gone: the job was cancelled or ended by someone else.
   */
  async reportProgress(
    db: Queryable,
    id: string,
    status: BackupStatus,
    now: Date,
    percent: number,
  ): Promise<boolean> {
    const r = await db.query(
      `UPDATE "backups" SET updated_at = $1, progress = $4 WHERE id = $2 AND deleted = false AND status = $3`,
      [now, id, status, Math.max(0, Math.min(100, Math.floor(percent)))],
    );
    return affectedOf(r) > 0;
  }

  /** Moves the dependent count of a parent by `delta` (BS-8.3.1, 8.3.2). */
  async addDependent(db: Queryable, parentId: string, delta: 1 | -1): Promise<void> {
    await db.query(
      `UPDATE "backups" SET num_dependent_backups = GREATEST(num_dependent_backups + $1, 0) WHERE id = $2`,
      [delta, parentId],
    );
  }

  /** Soft-deletes the row if it is still in one of `allowed`; returns it as it was. */
  async softDelete(
    db: Queryable,
    id: string,
    allowed: readonly BackupStatus[],
    now: Date,
  ): Promise<StoredBackup | null> {
    const result: unknown = await db.query(
      `UPDATE "backups" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted'
       WHERE id = $2 AND deleted = false AND status = ANY($3::varchar[]) RETURNING *`,
      [now, id, [...allowed]],
    );
    const rows =
      Array.isArray(result) && result.length === 2 && typeof result[1] === 'number'
        ? (result[0] as Row[])
        : rowsOf<Row>(result);
    const first = rows[0];
    if (first) recordStatusChange(db, { ...storyIds(id)(first), status: 'deleted' });
    return first ? toBackup(first) : null;
  }

  /** Live backups a back end owns in one of `statuses` (restart recovery, BS-8.3.6). */
  async listOnHost(db: Queryable, host: string, statuses: readonly BackupStatus[]): Promise<StoredBackup[]> {
    return rowsOf<Row>(
      await db.query(`${SELECT} WHERE b.deleted = false AND b.host = $1 AND b.status = ANY($2::varchar[])`, [
        host,
        [...statuses],
      ]),
    ).map(toBackup);
  }

  /** Live backups of a volume whose bytes are still being read (a volume delete must wait). */
  async activeOnVolume(db: Queryable, volumeId: string): Promise<number> {
    const r = rowsOf<Row>(
      await db.query(
        `SELECT count(*)::int AS n FROM "backups" WHERE volume_id = $1 AND deleted = false AND status IN ('creating', 'restoring')`,
        [volumeId],
      ),
    );
    return Number(r[0]?.['n'] ?? 0);
  }
}
