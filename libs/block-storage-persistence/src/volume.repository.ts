import {
  isUuid,
  type VolumeDetailPlan,
  type ListFilter,
  type Paging,
  type SnapshotValue,
  type VolumeStatus,
  type VolumeValue,
  type SnapshotStatus,
  type MigrationOperation,
  MIGRATION_IN_FLIGHT_STATUSES,
} from '@osc/block-storage-domain';
import { UNMANAGED_METADATA_KEY } from '@osc/contracts';
import { afterMarker, orderBy, pageTail } from './list-sql';
import { MetadataWriter } from './metadata-sql';
import {
  affectedOf,
  likeEscape,
  Params,
  returnedRows,
  rowsOf,
  type Queryable,
  UUID_COLUMNS,
  uuidColumnEquals,
} from './sql';
import { recordStatusChange, type StatusChange } from './story/status-story';
import { StatusRepository } from './status-repository';

/** A volume as stored, with the fields only services need (never rendered directly). */
export interface StoredVolume extends VolumeValue {
  /** `attach_status` column (Cinder's volume attach_status: detached, reserved, attaching, attached, detaching). */
  readonly attachStatus: string;
  readonly errorReason: string | null;
  readonly deleted: boolean;
}

/** A snapshot as stored. */
export interface StoredSnapshot extends SnapshotValue {
  readonly volumeTypeId: string | null;
  readonly host: string | null;
  /** While a managed snapshot is `creating`: the back-end file it adopts (os-snapshot-manage). */
  readonly manageSource?: string | null;
}

type Row = Record<string, any>;

const bool = (v: unknown): boolean => v === true || v === 't' || v === 'true';

export function toVolume(r: Row): StoredVolume {
  return {
    id: r['id'],
    projectId: r['project_id'],
    userId: r['user_id'] ?? null,
    name: r['display_name'] ?? null,
    description: r['display_description'] ?? null,
    size: Number(r['size']),
    status: r['status'] as VolumeStatus,
    availabilityZone: r['availability_zone'] ?? null,
    volumeTypeId: r['volume_type_id'],
    volumeTypeName: r['type_name'] ?? null,
    snapshotId: r['snapshot_id'] ?? null,
    sourceVolid: r['source_volid'] ?? null,
    metadata: r['metadata'] ?? {},
    adminMetadata: r['admin_metadata'] ?? {},
    imageMetadata: r['image_metadata'] ?? null,
    bootable: bool(r['bootable']),
    encrypted: bool(r['encrypted']),
    encryptionKeyId: r['encryption_key_id'] ?? null,
    multiattach: bool(r['multiattach']),
    host: r['host'] ?? null,
    clusterName: r['cluster_name'] ?? null,
    providerId: r['provider_id'] ?? null,
    serviceUuid: r['service_uuid'] ?? null,
    sharedTargets:
      r['shared_targets'] === null || r['shared_targets'] === undefined ? null : bool(r['shared_targets']),
    migrationStatus: r['migration_status'] ?? null,
    nameId: r['name_id'] ?? null,
    replicationStatus: r['replication_status'] ?? null,
    consistencygroupId: r['consistencygroup_id'] ?? null,
    groupId: r['group_id'] ?? null,
    consumesQuota: bool(r['use_quota']),
    attachments: ((r['attachments'] ?? []) as Row[]).map((a) => ({
      id: a['id'],
      volumeId: a['volume_id'],
      serverId: a['instance_uuid'] ?? null,
      hostName: a['attached_host'] ?? null,
      device: a['mountpoint'] ?? null,
      attachedAt: a['attach_time'] ?? null,
      attachStatus: a['attach_status'],
    })),
    attachStatus: r['attach_status'] ?? 'detached',
    createdAt: r['created_at'],
    updatedAt: r['updated_at'] ?? null,
    errorReason: r['error_reason'] ?? null,
    deleted: bool(r['deleted']),
  };
}

export function toSnapshot(r: Row): StoredSnapshot {
  return {
    id: r['id'],
    projectId: r['project_id'],
    userId: r['user_id'] ?? null,
    volumeId: r['volume_id'],
    volumeTypeId: r['volume_type_id'] ?? null,
    name: r['display_name'] ?? null,
    description: r['display_description'] ?? null,
    size: Number(r['size']),
    status: r['status'] as SnapshotStatus,
    progress: r['progress'] ?? null,
    metadata: r['metadata'] ?? {},
    groupSnapshotId: r['group_snapshot_id'] ?? null,
    consumesQuota: bool(r['use_quota']),
    host: r['host'] ?? null,
    manageSource: r['manage_source'] ?? null,
    createdAt: r['created_at'],
    updatedAt: r['updated_at'] ?? null,
  };
}

/** Timestamps leave the database already in the wire format (UTC, microseconds, BS-1.6). */
export const wireTime = (col: string): string =>
  `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US')`;

const VOLUME_COLUMNS_SQL = [
  'id',
  'project_id',
  'user_id',
  'display_name',
  'display_description',
  'size',
  'status',
  'attach_status',
  'availability_zone',
  'volume_type_id',
  'snapshot_id',
  'source_volid',
  'metadata',
  'admin_metadata',
  'image_metadata',
  'bootable',
  'encrypted',
  'encryption_key_id',
  'multiattach',
  'host',
  'cluster_name',
  'provider_id',
  'service_uuid',
  'shared_targets',
  'migration_status',
  'name_id',
  'replication_status',
  'consistencygroup_id',
  'group_id',
  'use_quota',
  'error_reason',
  'deleted',
]
  .map((c) => `v."${c}"`)
  .join(', ');

/**
 * `"col" = $n` assignments of a volume update. The JSON columns are sent as text and cast; a value
 * given as a string is taken as JSON text already serialised by the caller.
 */
function volumeSets(p: Params, set: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(set).map(([col, value]) => {
    if (col !== 'metadata' && col !== 'admin_metadata') return `"${col}" = ${p.add(value)}`;
    return `"${col}" = ${p.add(typeof value === 'string' ? value : JSON.stringify(value))}::jsonb`;
  });
}

/** The live attachments of volume `v` (every attach status), oldest first, as a JSON array. */
const ATTACHMENTS_SQL = `COALESCE((SELECT json_agg(json_build_object('id', a.id, 'volume_id', a.volume_id, 'instance_uuid', a.instance_uuid,
    'attached_host', a.attached_host, 'mountpoint', a.mountpoint, 'attach_time', ${wireTime('a.attach_time')}, 'attach_status', a.attach_status)
    ORDER BY a.created_at, a.id) FROM "volume_attachments" a WHERE a.volume_id = v.id AND a.deleted = false), '[]'::json)`;

const VOLUME_SELECT = `SELECT ${VOLUME_COLUMNS_SQL}, ${wireTime('v.created_at')} AS created_at, ${wireTime('v.updated_at')} AS updated_at, t.name AS type_name,
    ${ATTACHMENTS_SQL} AS attachments
  FROM "volumes" v LEFT JOIN "volume_types" t ON t.id = v.volume_type_id`;

/** Domain field → column of `volumes`. */
const VOLUME_COLUMNS: Readonly<Record<string, string>> = {
  id: 'id',
  name: 'display_name',
  description: 'display_description',
  status: 'status',
  size: 'size',
  bootable: 'bootable',
  multiattach: 'multiattach',
  encrypted: 'encrypted',
  migration_status: 'migration_status',
  availability_zone: 'availability_zone',
  group_id: 'group_id',
  consistencygroup_id: 'consistencygroup_id',
  consumes_quota: 'use_quota',
  project_id: 'project_id',
  user_id: 'user_id',
  volume_type_id: 'volume_type_id',
  host: 'host',
  snapshot_id: 'snapshot_id',
  source_volid: 'source_volid',
  replication_status: 'replication_status',
  volume_id: 'volume_id',
  group_snapshot_id: 'group_snapshot_id',
  progress: 'progress',
};

const TEXT_SORT = new Set([
  'name',
  'description',
  'status',
  'availability_zone',
  'host',
  'project_id',
  'user_id',
]);

const sortExpr = (key: string, alias: string): string => {
  if (key === 'updated_at') return `COALESCE(${alias}."updated_at", ${alias}."created_at")`;
  const col = VOLUME_COLUMNS[key] ?? key;
  if (key === 'id' || key === 'volume_type_id' || key === 'volume_id') return `${alias}."${col}"`;
  return TEXT_SORT.has(key) ? `COALESCE(${alias}."${col}", '')` : `${alias}."${col}"`;
};

/** WHERE fragments of compiled filters (BS-5.9–5.11). */
function filterSql(filters: readonly ListFilter[], alias: string, p: Params): string[] {
  const out: string[] = [];
  for (const f of filters) {
    switch (f.kind) {
      case 'none':
        out.push('FALSE');
        break;
      case 'metadata':
        out.push(`(${alias}."metadata" @> ${p.add(JSON.stringify(f.pairs))}::jsonb)`);
        break;
      case 'like': {
        const col = VOLUME_COLUMNS[f.field];
        out.push(
          col === undefined ? 'FALSE' : `${alias}."${col}"::text LIKE ${p.add(`%${likeEscape(f.value)}%`)}`,
        );
        break;
      }
      case 'time': {
        const ops = { gt: '>', gte: '>=', eq: '=', neq: '<>', lt: '<', lte: '<=' } as const;
        out.push(
          `(${f.conditions.map((c) => `${alias}."${f.field}" ${ops[c.op]} ${p.add(c.at)}`).join(' OR ')})`,
        );
        break;
      }
      case 'eq': {
        if (f.field === 'volume_type') {
          const v = p.add(String(f.value));
          out.push(
            `${alias}."volume_type_id" IN (SELECT id FROM "volume_types" WHERE name = ${v} OR id::text = ${v})`,
          );
          break;
        }
        const col = VOLUME_COLUMNS[f.field];
        if (col === undefined) out.push('FALSE');
        else if (f.value === null) out.push(`${alias}."${col}" IS NULL`);
        else if (typeof f.value === 'string' && UUID_COLUMNS.has(col))
          out.push(uuidColumnEquals(`${alias}."${col}"`, f.value, p));
        else if (typeof f.value === 'string') out.push(`${alias}."${col}"::text = ${p.add(f.value)}`);
        else out.push(`${alias}."${col}" = ${p.add(f.value)}`);
        break;
      }
    }
  }
  return out;
}

export interface ListScope {
  /** Null: every project (admin with all_tenants). */
  readonly projectId: string | null;
  /** Non-admin lists never show migration targets (BS-5.6). */
  readonly hideMigrationTargets: boolean;
}

export interface ListPage<T> {
  readonly items: T[];
  readonly count: number | null;
}

/** Volume rows: lookups, filtered keyset lists, compare-and-set status changes and metadata. */
export class VolumeRepository extends StatusRepository<VolumeStatus> {
  /** Atomic writes of the user metadata (one UPDATE each). */
  readonly metadata = new MetadataWriter('volumes');

  async findById(
    db: Queryable,
    id: string,
    projectId: string | null,
    forUpdate = false,
  ): Promise<StoredVolume | null> {
    if (!isUuid(id)) return null;
    const p = new Params();
    const where = [`v.id = ${p.add(id)}::uuid`, 'v.deleted = false'];
    if (projectId !== null) where.push(`v.project_id = ${p.add(projectId)}`);
    const rows = rowsOf<Row>(
      await db.query(
        `${VOLUME_SELECT} WHERE ${where.join(' AND ')}${forUpdate ? ' FOR UPDATE OF v' : ''}`,
        p.values,
      ),
    );
    return rows[0] ? toVolume(rows[0]) : null;
  }

  async insert(db: Queryable, v: StoredVolume): Promise<void> {
    await db.query(
      `INSERT INTO "volumes" ("id","project_id","user_id","display_name","display_description","size","status","availability_zone",
        "volume_type_id","snapshot_id","source_volid","metadata","admin_metadata","image_metadata","bootable","encrypted","encryption_key_id",
        "multiattach","host","replication_status","consistencygroup_id","group_id","use_quota","shared_targets","service_uuid","created_at","updated_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12::jsonb,$13::jsonb,$14::jsonb,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24,$25,$26,$27)`,
      [
        v.id,
        v.projectId,
        v.userId,
        v.name,
        v.description,
        v.size,
        v.status,
        v.availabilityZone,
        v.volumeTypeId,
        v.snapshotId,
        v.sourceVolid,
        JSON.stringify(v.metadata),
        JSON.stringify(v.adminMetadata),
        v.imageMetadata === null ? null : JSON.stringify(v.imageMetadata),
        v.bootable,
        v.encrypted,
        v.encryptionKeyId,
        v.multiattach,
        v.host,
        v.replicationStatus,
        v.consistencygroupId,
        v.groupId,
        v.consumesQuota,
        v.sharedTargets,
        v.serviceUuid,
        v.createdAt,
        v.updatedAt,
      ],
    );
    recordStatusChange(db, {
      resource: 'volume',
      volumeId: v.id,
      projectId: v.projectId,
      status: v.status,
      previousStatus: null,
    });
  }

  async list(
    db: Queryable,
    scope: ListScope,
    filters: readonly ListFilter[],
    paging: Paging,
    withCount: boolean,
  ): Promise<ListPage<StoredVolume>> {
    const p = new Params();
    const where = ['v.deleted = false'];
    if (scope.projectId !== null) where.push(`v.project_id = ${p.add(scope.projectId)}`);
    if (scope.hideMigrationTargets)
      where.push(`(v.migration_status IS NULL OR v.migration_status NOT LIKE 'target:%')`);
    where.push(...filterSql(filters, 'v', p));
    let count: number | null = null;
    if (withCount) {
      const c = rowsOf<Row>(
        await db.query(`SELECT count(*)::int AS n FROM "volumes" v WHERE ${where.join(' AND ')}`, p.values),
      );
      count = Number(c[0]?.['n'] ?? 0);
    }
    if (paging.marker !== null)
      where.push(afterMarker(paging.sort, sortExpr, 'v', 'volumes', paging.marker, p));
    const sql = `${VOLUME_SELECT} WHERE ${where.join(' AND ')} ${pageTail(paging.sort, sortExpr, 'v', paging, p)}`;
    // The page travels as one JSON text (re-ordered by the same keys inside the aggregate): one
    // native JSON.parse instead of thousands of per-field conversions in the driver.
    const packed = rowsOf<Row>(
      await db.query(
        `SELECT COALESCE(json_agg(x ORDER BY ${orderBy(paging.sort, sortExpr, 'x')}), '[]')::text AS page FROM (${sql}) x`,
        p.values,
      ),
    );
    const items = (JSON.parse(String(packed[0]?.['page'] ?? '[]')) as Row[]).map(toVolume);
    return { items, count };
  }

  /**
   * The detail list page rendered by the database as JSON text: the comma-joined items of the
   * `volumes` array, exactly as {@link volumeDetailView} (kind `list`) renders them for `plan`, so
   * the page reaches the client without being parsed and re-serialised here.
   */
  async listDetailJson(
    db: Queryable,
    scope: ListScope,
    filters: readonly ListFilter[],
    paging: Paging,
    withCount: boolean,
    plan: VolumeDetailPlan,
  ): Promise<{ items: string; size: number; lastId: string | null; count: number | null }> {
    const p = new Params();
    const where = ['v.deleted = false'];
    if (scope.projectId !== null) where.push(`v.project_id = ${p.add(scope.projectId)}`);
    if (scope.hideMigrationTargets)
      where.push(`(v.migration_status IS NULL OR v.migration_status NOT LIKE 'target:%')`);
    where.push(...filterSql(filters, 'v', p));
    let count: number | null = null;
    if (withCount) {
      const c = rowsOf<Row>(
        await db.query(`SELECT count(*)::int AS n FROM "volumes" v WHERE ${where.join(' AND ')}`, p.values),
      );
      count = Number(c[0]?.['n'] ?? 0);
    }
    if (paging.marker !== null)
      where.push(afterMarker(paging.sort, sortExpr, 'v', 'volumes', paging.marker, p));
    const sql = `${VOLUME_SELECT} WHERE ${where.join(' AND ')} ${pageTail(paging.sort, sortExpr, 'v', paging, p)}`;
    const item = volumeDetailJsonSql(plan, p);
    const order = orderBy(paging.sort, sortExpr, 'x');
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT COALESCE(string_agg(${item}, ',' ORDER BY ${order}), '') AS items, count(*)::int AS n,
                (array_agg(x.id::text ORDER BY ${order}))[count(*)] AS last FROM (${sql}) x`,
        p.values,
      ),
    );
    const r = rows[0] ?? {};
    return { items: String(r['items'] ?? ''), size: Number(r['n'] ?? 0), lastId: r['last'] ?? null, count };
  }

  /**
   * `UPDATE volumes SET status = :to, ... WHERE id = :id AND status IN (:allowed)` (STYLE §2);
   * false when the row was not in an allowed status (or is gone).
   */
  async compareAndSetStatus(
    db: Queryable,
    id: string,
    allowed: readonly VolumeStatus[],
    to: VolumeStatus,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"status" = ${p.add(to)}`, `"updated_at" = ${p.add(now)}`, ...volumeSets(p, set)];
    const r = await db.query(
      `UPDATE "volumes" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false AND status = ANY(${p.add([...allowed])}::varchar[]) RETURNING project_id`,
      p.values,
    );
    return tellChanged(db, r, allowed, to, (row) => ({
      resource: 'volume',
      volumeId: id,
      projectId: row['project_id'],
    }));
  }

  /**
   * Compare-and-set on status and migration status together (a migration's start, end or failure):
   * `migration_status` must be one of `migrations` (null matches null), and JSON columns are cast.
   */
  async compareAndSetMigration(
    db: Queryable,
    id: string,
    allowed: readonly VolumeStatus[],
    migrations: readonly (string | null)[],
    to: VolumeStatus,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"status" = ${p.add(to)}`, `"updated_at" = ${p.add(now)}`, ...volumeSets(p, set)];
    const named = migrations.filter((m): m is string => m !== null);
    const orNull = migrations.includes(null) ? ' OR migration_status IS NULL' : '';
    const r = await db.query(
      `UPDATE "volumes" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false AND status = ANY(${p.add([...allowed])}::varchar[]) AND (migration_status = ANY(${p.add(named)}::varchar[])${orNull}) RETURNING project_id`,
      p.values,
    );
    return tellChanged(db, r, allowed, to, (row) => ({
      resource: 'volume',
      volumeId: id,
      projectId: row['project_id'],
    }));
  }

  /**
   * A domain migration operation (`MIGRATION_OPERATIONS`): migration_status from its sources to its
   * target, the volume's status from `from` (the status it was read or held in) to `to`.
   */
  async transitionMigration(
    db: Queryable,
    id: string,
    op: MigrationOperation,
    status: { readonly from: VolumeStatus; readonly to: VolumeStatus },
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    return this.compareAndSetMigration(db, id, [status.from], op.migrationSources, status.to, now, {
      ...set,
      migration_status: op.migrationTarget,
    });
  }

  /**
   * Where each of these volumes is (deleted ones included; unknown ids are absent). An unmanaged
   * volume (its deleted row marked `unmanaged` in admin metadata) is absent too: its file belongs
   * to the operator again.
   */
  async placementsOf(
    db: Queryable,
    ids: readonly string[],
  ): Promise<Map<string, { host: string | null; deleted: boolean; migrationStatus: string | null }>> {
    if (ids.length === 0) return new Map();
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT id, host, deleted, migration_status FROM "volumes" WHERE id = ANY($1::uuid[]) AND NOT (deleted AND (admin_metadata ->> $2::text) IS NOT NULL)`,
        [[...ids], UNMANAGED_METADATA_KEY],
      ),
    );
    return new Map(
      rows.map((r) => [
        String(r['id']),
        {
          host: r['host'] ?? null,
          deleted: r['deleted'] === true,
          migrationStatus: r['migration_status'] ?? null,
        },
      ]),
    );
  }

  /** Sets (or, with null, removes) one admin-metadata key in place, leaving the other keys as they are now. */
  async setAdminMetadataKey(db: Queryable, id: string, key: string, value: string | null): Promise<void> {
    if (value === null)
      await db.query(`UPDATE "volumes" SET admin_metadata = admin_metadata - $2::text WHERE id = $1`, [
        id,
        key,
      ]);
    else
      await db.query(
        `UPDATE "volumes" SET admin_metadata = admin_metadata || jsonb_build_object($2::text, $3::text) WHERE id = $1`,
        [id, key, value],
      );
  }

  /** Live volumes with a migration under way whose job (admin metadata) moves them to `backend`. */
  async listMigratingTo(db: Queryable, backend: string, metadataKey: string): Promise<StoredVolume[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `${VOLUME_SELECT} WHERE v.deleted = false AND v.migration_status = ANY($3::varchar[]) AND (v.admin_metadata ->> $1)::jsonb ->> 'destination' LIKE $2`,
        [metadataKey, `${likeEscape(backend)}#%`, [...MIGRATION_IN_FLIGHT_STATUSES]],
      ),
    );
    return rows.map(toVolume);
  }

  async update(
    db: Queryable,
    id: string,
    set: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"updated_at" = ${p.add(now)}`, ...volumeSets(p, set)];
    if (typeof set['status'] !== 'string') {
      const r = await db.query(
        `UPDATE "volumes" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false`,
        p.values,
      );
      return affectedOf(r) > 0;
    }
    const r = await db.query(
      `UPDATE "volumes" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false RETURNING project_id`,
      p.values,
    );
    return tellChanged(db, r, [], set['status'], (row) => ({
      resource: 'volume',
      volumeId: id,
      projectId: row['project_id'],
    }));
  }

  /** Soft-deletes the row if it is still in one of `allowed` statuses. */
  async softDelete(
    db: Queryable,
    id: string,
    allowed: readonly VolumeStatus[],
    now: Date,
  ): Promise<StoredVolume | null> {
    const rows = rowsOf<Row>(
      await db.query(
        `UPDATE "volumes" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted'
         WHERE id = $2 AND deleted = false AND status = ANY($3::varchar[]) RETURNING *`,
        [now, id, [...allowed]],
      ),
    );
    const first = Array.isArray(rows[0]) ? (rows[0] as Row[])[0] : rows[0];
    if (first)
      recordStatusChange(db, {
        resource: 'volume',
        volumeId: first['id'],
        projectId: first['project_id'],
        status: 'deleted',
      });
    return first ? toVolume(first) : null;
  }

  /**
   * Unmanage: soft-deletes the row if it is still `unmanaging` and marks it `unmanaged` in admin
   * metadata, so the back end never takes its file (kept on disk) for a stray copy.
   */
  async softDeleteUnmanaged(db: Queryable, id: string, now: Date): Promise<StoredVolume | null> {
    const rows = rowsOf<Row>(
      await db.query(
        `UPDATE "volumes" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted',
                admin_metadata = COALESCE(admin_metadata, '{}'::jsonb) || jsonb_build_object($3::text, 'True')
         WHERE id = $2 AND deleted = false AND status = 'unmanaging' RETURNING *`,
        [now, id, UNMANAGED_METADATA_KEY],
      ),
    );
    const first = Array.isArray(rows[0]) ? (rows[0] as Row[])[0] : rows[0];
    if (first)
      recordStatusChange(db, {
        resource: 'volume',
        volumeId: first['id'],
        projectId: first['project_id'],
        status: 'deleted',
      });
    return first ? toVolume(first) : null;
  }

  /**
   * Removes a volume no back end ever received (BS-7.7.12): only while `host` is still null, so a
   * placement that won the race keeps its volume.
   */
  async softDeleteUnplaced(db: Queryable, id: string, now: Date): Promise<StoredVolume | null> {
    const rows = rowsOf<Row>(
      await db.query(
        `UPDATE "volumes" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted'
         WHERE id = $2 AND deleted = false AND host IS NULL RETURNING *`,
        [now, id],
      ),
    );
    const first = Array.isArray(rows[0]) ? (rows[0] as Row[])[0] : rows[0];
    if (first)
      recordStatusChange(db, {
        resource: 'volume',
        volumeId: first['id'],
        projectId: first['project_id'],
        status: 'deleted',
      });
    return first ? toVolume(first) : null;
  }

  /** Places a `creating` volume on a pool, once (false when it was deleted or already placed). */
  async assignHost(db: Queryable, id: string, pool: string, now: Date): Promise<boolean> {
    const r = await db.query(
      `UPDATE "volumes" SET host = $1, updated_at = $2 WHERE id = $3 AND deleted = false AND status = 'creating' AND host IS NULL`,
      [pool, now, id],
    );
    return affectedOf(r) > 0;
  }

  /** Live volumes on a back end in one of `statuses` (restart recovery, BS-8.6.2). */
  async listOnBackend(db: Queryable, backend: string, statuses: readonly string[]): Promise<StoredVolume[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `${VOLUME_SELECT} WHERE v.deleted = false AND v.host LIKE $1 AND v.status = ANY($2::varchar[])`,
        [`${likeEscape(backend)}#%`, [...statuses]],
      ),
    );
    return rows.map(toVolume);
  }

  /** Live snapshots on a back end in one of `statuses`. */
  async snapshotsOnBackend(
    db: Queryable,
    backend: string,
    statuses: readonly string[],
  ): Promise<StoredSnapshot[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT * FROM "snapshots" WHERE deleted = false AND host LIKE $1 AND status = ANY($2::varchar[])`,
        [`${likeEscape(backend)}#%`, [...statuses]],
      ),
    );
    return rows.map(toSnapshot);
  }

  /** Sum of the sizes of live volumes on a back end (its provisioned capacity). */
  async provisionedOn(db: Queryable, backend: string): Promise<number> {
    const r = rowsOf<Row>(
      await db.query(
        `SELECT COALESCE(sum(size), 0)::bigint AS s FROM "volumes" WHERE deleted = false AND host LIKE $1`,
        [`${likeEscape(backend)}#%`],
      ),
    );
    return Number(r[0]?.['s'] ?? 0);
  }

  /** Live snapshots of a volume. */
  async snapshotsOf(db: Queryable, volumeId: string): Promise<StoredSnapshot[]> {
    return rowsOf<Row>(
      await db.query(
        `SELECT * FROM "snapshots" WHERE volume_id = $1 AND deleted = false ORDER BY created_at`,
        [volumeId],
      ),
    ).map(toSnapshot);
  }

  async countActiveSnapshots(db: Queryable, volumeId: string): Promise<number> {
    const r = rowsOf<Row>(
      await db.query(`SELECT count(*)::int AS n FROM "snapshots" WHERE volume_id = $1 AND deleted = false`, [
        volumeId,
      ]),
    );
    return Number(r[0]?.['n'] ?? 0);
  }

  async summary(
    db: Queryable,
    projectId: string | null,
  ): Promise<{ totalCount: number; totalSize: number; metadata: Record<string, string[]> }> {
    const p = new Params();
    const where = ['deleted = false'];
    if (projectId !== null) where.push(`project_id = ${p.add(projectId)}`);
    const r = rowsOf<Row>(
      await db.query(
        `SELECT count(*)::int AS n, COALESCE(sum(size), 0)::bigint AS s FROM "volumes" WHERE ${where.join(' AND ')}`,
        p.values,
      ),
    );
    const m = rowsOf<Row>(
      await db.query(
        `SELECT DISTINCT e.key AS k, e.value AS v FROM "volumes", jsonb_each_text(metadata) e WHERE ${where.join(' AND ')} ORDER BY 1, 2`,
        p.values,
      ),
    );
    const metadata: Record<string, string[]> = {};
    for (const row of m) (metadata[row['k']] ??= []).push(row['v']);
    return { totalCount: Number(r[0]?.['n'] ?? 0), totalSize: Number(r[0]?.['s'] ?? 0), metadata };
  }
}

const SNAPSHOT_SELECT = `SELECT s.*, ${wireTime('s.created_at')} AS created_at, ${wireTime('s.updated_at')} AS updated_at FROM "snapshots" s`;

const SNAPSHOT_SORT_TEXT = new Set(['name', 'description', 'status', 'project_id']);
const snapshotSortExpr = (key: string, alias: string): string => {
  if (key === 'updated_at') return `COALESCE(${alias}."updated_at", ${alias}."created_at")`;
  const col = VOLUME_COLUMNS[key] ?? key;
  if (key === 'id' || key === 'volume_id') return `${alias}."${col}"`;
  return SNAPSHOT_SORT_TEXT.has(key) ? `COALESCE(${alias}."${col}", '')` : `${alias}."${col}"`;
};

/** Snapshot rows. */
export class SnapshotRepository extends StatusRepository<SnapshotStatus> {
  /** Atomic writes of the user metadata (one UPDATE each). */
  readonly metadata = new MetadataWriter('snapshots');

  async findById(db: Queryable, id: string, projectId: string | null): Promise<StoredSnapshot | null> {
    if (!isUuid(id)) return null;
    const p = new Params();
    const where = [`s.id = ${p.add(id)}::uuid`, 's.deleted = false'];
    if (projectId !== null) where.push(`s.project_id = ${p.add(projectId)}`);
    const rows = rowsOf<Row>(await db.query(`${SNAPSHOT_SELECT} WHERE ${where.join(' AND ')}`, p.values));
    return rows[0] ? toSnapshot(rows[0]) : null;
  }

  async insert(db: Queryable, s: StoredSnapshot): Promise<void> {
    await db.query(
      `INSERT INTO "snapshots" ("id","project_id","user_id","volume_id","volume_type_id","display_name","display_description","size","status",
        "progress","metadata","use_quota","host","created_at","updated_at","manage_source") VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11::jsonb,$12,$13,$14,$15,$16)`,
      [
        s.id,
        s.projectId,
        s.userId,
        s.volumeId,
        s.volumeTypeId,
        s.name,
        s.description,
        s.size,
        s.status,
        s.progress,
        JSON.stringify(s.metadata),
        s.consumesQuota,
        s.host,
        s.createdAt,
        s.updatedAt,
        s.manageSource ?? null,
      ],
    );
    recordStatusChange(db, {
      resource: 'snapshot',
      snapshotId: s.id,
      volumeId: s.volumeId,
      projectId: s.projectId,
      status: s.status,
      previousStatus: null,
    });
  }

  async list(
    db: Queryable,
    projectId: string | null,
    filters: readonly ListFilter[],
    paging: Paging,
    withCount: boolean,
  ): Promise<ListPage<StoredSnapshot>> {
    const p = new Params();
    const where = ['s.deleted = false'];
    if (projectId !== null) where.push(`s.project_id = ${p.add(projectId)}`);
    const zoneFilter = filters.find((f) => f.kind === 'eq' && f.field === 'availability_zone');
    const rest = filters.filter((f) => f !== zoneFilter);
    if (zoneFilter && zoneFilter.kind === 'eq') {
      where.push(
        `s.volume_id IN (SELECT id FROM "volumes" WHERE availability_zone = ${p.add(String(zoneFilter.value))})`,
      );
    }
    where.push(...filterSql(rest, 's', p));
    let count: number | null = null;
    if (withCount) {
      const c = rowsOf<Row>(
        await db.query(`SELECT count(*)::int AS n FROM "snapshots" s WHERE ${where.join(' AND ')}`, p.values),
      );
      count = Number(c[0]?.['n'] ?? 0);
    }
    if (paging.marker !== null)
      where.push(afterMarker(paging.sort, snapshotSortExpr, 's', 'snapshots', paging.marker, p));
    const sql = `${SNAPSHOT_SELECT} WHERE ${where.join(' AND ')} ${pageTail(paging.sort, snapshotSortExpr, 's', paging, p)}`;
    return { items: rowsOf<Row>(await db.query(sql, p.values)).map(toSnapshot), count };
  }

  async compareAndSetStatus(
    db: Queryable,
    id: string,
    allowed: readonly SnapshotStatus[],
    to: SnapshotStatus,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"status" = ${p.add(to)}`, `"updated_at" = ${p.add(now)}`];
    for (const [col, value] of Object.entries(set)) sets.push(`"${col}" = ${p.add(value)}`);
    const r = await db.query(
      `UPDATE "snapshots" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false AND status = ANY(${p.add([...allowed])}::varchar[]) RETURNING project_id, volume_id`,
      p.values,
    );
    return tellChanged(db, r, allowed, to, (row) => ({
      resource: 'snapshot',
      snapshotId: id,
      volumeId: row['volume_id'],
      projectId: row['project_id'],
    }));
  }

  async update(
    db: Queryable,
    id: string,
    set: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<boolean> {
    const p = new Params();
    const sets = [`"updated_at" = ${p.add(now)}`];
    for (const [col, value] of Object.entries(set)) {
      const jsonCol = col === 'metadata';
      sets.push(`"${col}" = ${p.add(jsonCol ? JSON.stringify(value) : value)}${jsonCol ? '::jsonb' : ''}`);
    }
    if (typeof set['status'] !== 'string') {
      const r = await db.query(
        `UPDATE "snapshots" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false`,
        p.values,
      );
      return affectedOf(r) > 0;
    }
    const r = await db.query(
      `UPDATE "snapshots" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false RETURNING project_id, volume_id`,
      p.values,
    );
    return tellChanged(db, r, [], set['status'], (row) => ({
      resource: 'snapshot',
      snapshotId: id,
      volumeId: row['volume_id'],
      projectId: row['project_id'],
    }));
  }

  async softDelete(
    db: Queryable,
    id: string,
    allowed: readonly SnapshotStatus[],
    now: Date,
  ): Promise<StoredSnapshot | null> {
    const rows = rowsOf<Row>(
      await db.query(
        `UPDATE "snapshots" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted'
         WHERE id = $2 AND deleted = false AND status = ANY($3::varchar[]) RETURNING *`,
        [now, id, [...allowed]],
      ),
    );
    const first = Array.isArray(rows[0]) ? (rows[0] as Row[])[0] : rows[0];
    if (first)
      recordStatusChange(db, {
        resource: 'snapshot',
        snapshotId: first['id'],
        volumeId: first['volume_id'],
        projectId: first['project_id'],
        status: 'deleted',
      });
    return first ? toSnapshot(first) : null;
  }
}

/** `"key":<json of expr>` (compact, `null` for SQL NULL). */
const pair = (key: string, expr: string): string =>
  `'${JSON.stringify(key).slice(0, -1)}":' || COALESCE(to_json(${expr})::text, 'null')`;

/**
 * The `attachments` of the detail view (volumeDetailView's attachmentView) for a row aliased `x`:
 * attached ones only, `host_name` for admins only.
 */
const attachedViewSql = (plan: VolumeDetailPlan): string =>
  `COALESCE((SELECT json_agg(json_build_object('id', a.volume_id, 'attachment_id', a.id, 'volume_id', a.volume_id, 'server_id', a.instance_uuid,
    'host_name', ${plan.isAdmin ? 'a.attached_host' : 'NULL::varchar'}, 'device', a.mountpoint, 'attached_at', ${wireTime('a.attach_time')}) ORDER BY a.created_at, a.id)
    FROM "volume_attachments" a WHERE a.volume_id = x.id AND a.deleted = false AND a.attach_status = 'attached'), '[]'::json)`;

/**
 * One volume of the detail view as compact JSON text, from a row of VOLUME_SELECT aliased `x`;
 * keys in the order volumeDetailView writes them.
 */
function volumeDetailJsonSql(plan: VolumeDetailPlan, p: Params): string {
  const status = `CASE x.status ${Object.entries(plan.displayedStatus)
    .map(([from, to]) => `WHEN ${p.add(from)} THEN ${p.add(to)}`)
    .join(' ')} ELSE x.status END`;
  const shown = plan.shownAdminMetadata
    .map((k) => `${p.add(k)}::text, COALESCE(x.admin_metadata, '{}'::jsonb) -> ${p.add(k)}::text`)
    .join(', ');
  const metadata = `(COALESCE(x.metadata, '{}'::jsonb) || jsonb_strip_nulls(jsonb_build_object(${shown})))`;
  const links = `json_build_array(json_build_object('rel', 'self', 'href', ${p.add(plan.selfPrefix)}::text || x.id::text), json_build_object('rel', 'bookmark', 'href', ${p.add(plan.bookmarkPrefix)}::text || x.id::text))`;
  const parts: string[] = [
    pair('id', 'x.id'),
    pair('name', 'x.display_name'),
    pair('description', 'x.display_description'),
    pair('status', status),
    pair('size', 'x.size'),
    pair('availability_zone', 'x.availability_zone'),
    pair('created_at', 'x.created_at'),
    pair('updated_at', 'x.updated_at'),
    pair('volume_type', 'x.type_name'),
    pair('snapshot_id', 'x.snapshot_id'),
    pair('source_volid', 'x.source_volid'),
    pair('metadata', metadata),
    pair('links', links),
    pair('user_id', 'x.user_id'),
    pair('bootable', `CASE WHEN x.bootable THEN 'true' ELSE 'false' END`),
    pair('encrypted', 'COALESCE(x.encrypted, false)'),
    pair('replication_status', 'x.replication_status'),
    pair('consistencygroup_id', 'x.consistencygroup_id'),
    pair('multiattach', 'COALESCE(x.multiattach, false)'),
    pair('attachments', attachedViewSql(plan)),
  ];
  if (plan.isAdmin) parts.push(pair('migration_status', 'x.migration_status'));
  if (plan.groupId) parts.push(pair('group_id', 'x.group_id'));
  if (plan.providerId && plan.isAdmin) parts.push(pair('provider_id', 'x.provider_id'));
  if (plan.sharedTargets) {
    parts.push(
      pair(
        'shared_targets',
        plan.sharedTargetsNullable ? 'x.shared_targets' : 'COALESCE(x.shared_targets, true)',
      ),
    );
    parts.push(pair('service_uuid', 'x.service_uuid'));
  }
  if (plan.clusterName && plan.isAdmin) parts.push(pair('cluster_name', 'x.cluster_name'));
  if (plan.volumeTypeId) parts.push(pair('volume_type_id', 'x.volume_type_id'));
  if (plan.encryptionKeyId)
    parts.push(
      `CASE WHEN x.encrypted THEN ${pair('encryption_key_id', 'x.encryption_key_id')} ELSE NULL END`,
    );
  if (plan.consumesQuota) parts.push(pair('consumes_quota', 'COALESCE(x.use_quota, false)'));
  parts.push(pair('os-vol-tenant-attr:tenant_id', 'x.project_id'));
  if (plan.isAdmin) {
    parts.push(pair('os-vol-host-attr:host', 'x.host'));
    parts.push(pair('os-vol-mig-status-attr:migstat', 'x.migration_status'));
    parts.push(pair('os-vol-mig-status-attr:name_id', 'x.name_id'));
  }
  parts.push(
    `CASE WHEN x.image_metadata IS NOT NULL AND jsonb_typeof(x.image_metadata) <> 'null' THEN ${pair('volume_image_metadata', 'x.image_metadata')} ELSE NULL END`,
  );
  return `'{' || concat_ws(',', ${parts.join(', ')}) || '}'`;
}

/**
 * The story line of a status write that returned its row (none when nothing changed): the change
 * is told after commit. `previousStatus` is known when exactly one source status was allowed; a
 * write that keeps the status (allowed = [to]) is not a change.
 */
export function tellChanged(
  db: Queryable,
  result: unknown,
  allowed: readonly string[],
  to: string,
  ids: (row: Row) => Omit<StatusChange, 'status' | 'previousStatus'>,
): boolean {
  const row = returnedRows<Row>(result)[0];
  if (row === undefined) return false;
  if (allowed.length === 1 && allowed[0] === to) return true;
  recordStatusChange(db, {
    ...ids(row),
    status: to,
    ...(allowed.length === 1 ? { previousStatus: allowed[0] } : {}),
  });
  return true;
}
