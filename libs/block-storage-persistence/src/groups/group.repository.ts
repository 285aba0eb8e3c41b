import type {
  GroupSnapshotStatus,
  GroupSnapshotValue,
  GroupStatus,
  GroupTypeValue,
  GroupValue,
  TransferValue,
} from '@osc/block-storage-domain';
import { affectedOf, Params, rowsOf, type Queryable } from '../sql';
import { wireTime } from '../volume.repository';
import { StatusRepository } from '../status-repository';

type Row = Record<string, any>;
const bool = (v: unknown): boolean => v === true || v === 't' || v === 'true';
const first = (result: unknown): Row | undefined => {
  const rows = rowsOf<Row>(result);
  return Array.isArray(rows[0]) ? (rows[0] as Row[])[0] : rows[0];
};

/** Page of a simple created_at/id ordered list. */
export interface SimplePage {
  readonly limit: number;
  readonly offset: number;
  /** Only rows after this id (in list order). */
  readonly marker: string | null;
  readonly desc: boolean;
  /** A column to order by before created_at and id (a trusted key from an allow-list). */
  readonly sortKey?: string | undefined;
}

const pageSql = (
  alias: string,
  table: string,
  page: SimplePage,
  p: Params,
): { where: string[]; tail: string } => {
  const dir = page.desc ? 'DESC' : 'ASC';
  const cols = (a: string): string[] => [
    ...(page.sortKey ? [`COALESCE(${a}."${page.sortKey}"::text, '')`] : []),
    `${a}.created_at`,
    `${a}.id`,
  ];
  const where: string[] = [];
  if (page.marker !== null) {
    const m = p.add(page.marker);
    where.push(
      `(${cols(alias).join(', ')}) ${page.desc ? '<' : '>'} (SELECT ${cols('mk').join(', ')} FROM "${table}" mk WHERE mk.id = ${m}::uuid)`,
    );
  }
  return {
    where,
    tail: `ORDER BY ${cols(alias)
      .map((c) => `${c} ${dir}`)
      .join(', ')} LIMIT ${p.add(page.limit)} OFFSET ${p.add(page.offset)}`,
  };
};

// ---------------------------------------------------------------------------------------------

const toTransfer = (r: Row): TransferValue => ({
  id: r['id'],
  volumeId: r['volume_id'],
  name: r['display_name'] ?? null,
  salt: r['salt'],
  cryptHash: r['crypt_hash'],
  noSnapshots: bool(r['no_snapshots']),
  sourceProjectId: r['source_project_id'],
  destinationProjectId: r['destination_project_id'] ?? null,
  accepted: bool(r['accepted']),
  createdAt: r['created_at'],
});

const TRANSFER_SELECT = `SELECT t.id, t.volume_id, t.display_name, t.salt, t.crypt_hash, t.no_snapshots, t.source_project_id,
  t.destination_project_id, t.accepted, ${wireTime('t.created_at')} AS created_at FROM "volume_transfers" t`;

/** Volume transfers (BS-7.10): open transfers are `deleted = false`. */
export class TransferRepository {
  /** An open transfer; `projectId` limits it to transfers of that project's volumes. */
  async findById(
    db: Queryable,
    id: string,
    projectId: string | null,
    forUpdate = false,
  ): Promise<TransferValue | null> {
    const p = new Params();
    const where = [`t.id = ${p.add(id)}::uuid`, 't.deleted = false'];
    if (projectId !== null) where.push(`t.source_project_id = ${p.add(projectId)}`);
    const r = first(
      await db.query(
        `${TRANSFER_SELECT} WHERE ${where.join(' AND ')}${forUpdate ? ' FOR UPDATE OF t' : ''}`,
        p.values,
      ),
    );
    return r ? toTransfer(r) : null;
  }

  async insert(db: Queryable, t: TransferValue): Promise<void> {
    await db.query(
      `INSERT INTO "volume_transfers" ("id","volume_id","display_name","salt","crypt_hash","no_snapshots","source_project_id","created_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8)`,
      [t.id, t.volumeId, t.name, t.salt, t.cryptHash, t.noSnapshots, t.sourceProjectId, t.createdAt],
    );
  }

  async list(db: Queryable, projectId: string | null, page: SimplePage): Promise<TransferValue[]> {
    const p = new Params();
    const where = ['t.deleted = false'];
    if (projectId !== null) where.push(`t.source_project_id = ${p.add(projectId)}`);
    const { where: w, tail } = pageSql('t', 'volume_transfers', page, p);
    return rowsOf<Row>(
      await db.query(`${TRANSFER_SELECT} WHERE ${[...where, ...w].join(' AND ')} ${tail}`, p.values),
    ).map(toTransfer);
  }

  /** Closes an open transfer (delete, or accept with the recipient); false when it was already closed. */
  async close(db: Queryable, id: string, now: Date, acceptedBy: string | null): Promise<boolean> {
    const r = await db.query(
      `UPDATE "volume_transfers" SET deleted = true, deleted_at = $1, updated_at = $1, accepted = $2, destination_project_id = $3
       WHERE id = $4 AND deleted = false`,
      [now, acceptedBy !== null, acceptedBy, id],
    );
    return affectedOf(r) > 0;
  }
}

// ---------------------------------------------------------------------------------------------

const toGroupType = (r: Row): GroupTypeValue => ({
  id: r['id'],
  name: r['name'],
  description: r['description'] ?? null,
  isPublic: bool(r['is_public']),
  groupSpecs: r['specs'] ?? {},
});

const GROUP_TYPE_SELECT = `SELECT gt.id, gt.name, gt.description, gt.is_public,
  COALESCE((SELECT json_object_agg(s.key, s.value) FROM "group_type_specs" s WHERE s.group_type_id = gt.id), '{}'::json) AS specs
  FROM "group_types" gt`;

export class GroupTypeRepository {
  async find(db: Queryable, idOrName: string, byName: boolean): Promise<GroupTypeValue | null> {
    const r = first(
      await db.query(
        `${GROUP_TYPE_SELECT} WHERE gt.deleted = false AND ${byName ? 'gt.name = $1' : 'gt.id = $1::uuid'}`,
        [idOrName],
      ),
    );
    return r ? toGroupType(r) : null;
  }

  async list(
    db: Queryable,
    includePrivate: boolean,
    page: SimplePage,
    isPublic: boolean | null,
  ): Promise<GroupTypeValue[]> {
    const p = new Params();
    const where = ['gt.deleted = false'];
    if (!includePrivate) where.push('gt.is_public = true');
    else if (isPublic !== null) where.push(`gt.is_public = ${p.add(isPublic)}`);
    const { where: w, tail } = pageSql('gt', 'group_types', page, p);
    return rowsOf<Row>(
      await db.query(`${GROUP_TYPE_SELECT} WHERE ${[...where, ...w].join(' AND ')} ${tail}`, p.values),
    ).map(toGroupType);
  }

  async insert(db: Queryable, t: GroupTypeValue, now: Date): Promise<void> {
    await db.query(
      `INSERT INTO "group_types" ("id","name","description","is_public","created_at") VALUES ($1,$2,$3,$4,$5)`,
      [t.id, t.name, t.description, t.isPublic, now],
    );
    await this.setSpecs(db, t.id, t.groupSpecs);
  }

  async update(
    db: Queryable,
    id: string,
    set: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<boolean> {
    const p = new Params();
    const sets = [
      `updated_at = ${p.add(now)}`,
      ...Object.entries(set).map(([c, v]) => `"${c}" = ${p.add(v)}`),
    ];
    return (
      affectedOf(
        await db.query(
          `UPDATE "group_types" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false`,
          p.values,
        ),
      ) > 0
    );
  }

  async softDelete(db: Queryable, id: string, now: Date): Promise<boolean> {
    return (
      affectedOf(
        await db.query(
          `UPDATE "group_types" SET deleted = true, deleted_at = $1 WHERE id = $2 AND deleted = false`,
          [now, id],
        ),
      ) > 0
    );
  }

  async inUse(db: Queryable, id: string): Promise<boolean> {
    return (
      rowsOf(
        await db.query(`SELECT 1 FROM "groups" WHERE group_type_id = $1 AND deleted = false LIMIT 1`, [id]),
      ).length > 0
    );
  }

  async setSpecs(db: Queryable, id: string, specs: Readonly<Record<string, string | null>>): Promise<void> {
    for (const [k, v] of Object.entries(specs)) {
      await db.query(
        `INSERT INTO "group_type_specs" ("group_type_id","key","value") VALUES ($1,$2,$3) ON CONFLICT ("group_type_id","key") DO UPDATE SET value = EXCLUDED.value`,
        [id, k, v],
      );
    }
  }

  async deleteSpec(db: Queryable, id: string, key: string): Promise<boolean> {
    return (
      affectedOf(
        await db.query(`DELETE FROM "group_type_specs" WHERE group_type_id = $1 AND key = $2`, [id, key]),
      ) > 0
    );
  }
}

// ---------------------------------------------------------------------------------------------

const toGroup = (r: Row): GroupValue => ({
  id: r['id'],
  projectId: r['project_id'],
  userId: r['user_id'] ?? null,
  name: r['display_name'] ?? null,
  description: r['display_description'] ?? null,
  availabilityZone: r['availability_zone'],
  host: r['host'] ?? null,
  status: r['status'] as GroupStatus,
  pending: bool(r['pending']),
  groupTypeId: r['group_type_id'],
  groupSnapshotId: r['group_snapshot_id'] ?? null,
  sourceGroupId: r['source_group_id'] ?? null,
  replicationStatus: r['replication_status'] ?? null,
  volumeTypeIds: r['volume_type_ids'] ?? [],
  createdAt: r['created_at'],
});

const GROUP_SELECT = `SELECT g.id, g.project_id, g.user_id, g.display_name, g.display_description, g.availability_zone, g.host, g.status,
  g.pending, g.group_type_id, g.group_snapshot_id, g.source_group_id, g.replication_status, ${wireTime('g.created_at')} AS created_at,
  COALESCE((SELECT json_agg(gvt.volume_type_id ORDER BY gvt.position) FROM "group_volume_types" gvt WHERE gvt.group_id = g.id), '[]'::json) AS volume_type_ids
  FROM "groups" g`;

export interface GroupMember {
  readonly id: string;
  readonly status: string;
  readonly host: string | null;
  readonly size: number;
  readonly volumeTypeId: string;
  readonly volumeTypeName: string | null;
  readonly attached: boolean;
  readonly migrationStatus: string | null;
  readonly snapshotCount: number;
}

export class GroupRepository extends StatusRepository<GroupStatus> {
  async findById(
    db: Queryable,
    id: string,
    projectId: string | null,
    forUpdate = false,
  ): Promise<GroupValue | null> {
    const p = new Params();
    const where = [`g.id = ${p.add(id)}::uuid`, 'g.deleted = false'];
    if (projectId !== null) where.push(`g.project_id = ${p.add(projectId)}`);
    const r = first(
      await db.query(
        `${GROUP_SELECT} WHERE ${where.join(' AND ')}${forUpdate ? ' FOR UPDATE OF g' : ''}`,
        p.values,
      ),
    );
    return r ? toGroup(r) : null;
  }

  async list(db: Queryable, projectId: string | null, page: SimplePage): Promise<GroupValue[]> {
    const p = new Params();
    const where = ['g.deleted = false'];
    if (projectId !== null) where.push(`g.project_id = ${p.add(projectId)}`);
    const { where: w, tail } = pageSql('g', 'groups', page, p);
    return rowsOf<Row>(
      await db.query(`${GROUP_SELECT} WHERE ${[...where, ...w].join(' AND ')} ${tail}`, p.values),
    ).map(toGroup);
  }

  async insert(db: Queryable, g: GroupValue, now: Date): Promise<void> {
    await db.query(
      `INSERT INTO "groups" ("id","project_id","user_id","display_name","display_description","availability_zone","host","status","pending",
        "group_type_id","group_snapshot_id","source_group_id","replication_status","created_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14)`,
      [
        g.id,
        g.projectId,
        g.userId,
        g.name,
        g.description,
        g.availabilityZone,
        g.host,
        g.status,
        g.pending,
        g.groupTypeId,
        g.groupSnapshotId,
        g.sourceGroupId,
        g.replicationStatus,
        now,
      ],
    );
    let position = 0;
    for (const t of g.volumeTypeIds) {
      await db.query(
        `INSERT INTO "group_volume_types" ("group_id","volume_type_id","position") VALUES ($1,$2,$3)`,
        [g.id, t, position++],
      );
    }
  }

  /** Compare-and-set of the status (STYLE §2), with more columns. */
  async compareAndSetStatus(
    db: Queryable,
    id: string,
    allowed: readonly GroupStatus[],
    to: GroupStatus,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const p = new Params();
    const sets = [
      `status = ${p.add(to)}`,
      `updated_at = ${p.add(now)}`,
      ...Object.entries(set).map(([c, v]) => `"${c}" = ${p.add(v)}`),
    ];
    return (
      affectedOf(
        await db.query(
          `UPDATE "groups" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false AND status = ANY(${p.add([...allowed])}::varchar[])`,
          p.values,
        ),
      ) > 0
    );
  }

  async update(
    db: Queryable,
    id: string,
    set: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<boolean> {
    const p = new Params();
    const sets = [
      `updated_at = ${p.add(now)}`,
      ...Object.entries(set).map(([c, v]) => `"${c}" = ${p.add(v)}`),
    ];
    return (
      affectedOf(
        await db.query(
          `UPDATE "groups" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false`,
          p.values,
        ),
      ) > 0
    );
  }

  /** Soft-deletes the group if it is still in one of `allowed`; the row is returned. */
  async softDelete(db: Queryable, id: string, allowed: readonly GroupStatus[], now: Date): Promise<boolean> {
    const r = await db.query(
      `UPDATE "groups" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted', pending = false WHERE id = $2 AND deleted = false AND status = ANY($3::varchar[])`,
      [now, id, [...allowed]],
    );
    return affectedOf(r) > 0;
  }

  /** Member volumes (not deleted) with what membership rules need. */
  async members(db: Queryable, groupId: string): Promise<GroupMember[]> {
    const rows = rowsOf<Row>(
      await db.query(
        `SELECT v.id, v.status, v.host, v.size, v.volume_type_id, t.name AS type_name, v.attach_status, v.migration_status,
           (SELECT count(*)::int FROM "snapshots" s WHERE s.volume_id = v.id AND s.deleted = false) AS snaps
         FROM "volumes" v LEFT JOIN "volume_types" t ON t.id = v.volume_type_id
         WHERE v.group_id = $1 AND v.deleted = false ORDER BY v.created_at, v.id`,
        [groupId],
      ),
    );
    return rows.map((r) => ({
      id: r['id'],
      status: r['status'],
      host: r['host'] ?? null,
      size: Number(r['size']),
      volumeTypeId: r['volume_type_id'],
      volumeTypeName: r['type_name'] ?? null,
      attached: r['attach_status'] !== 'detached',
      migrationStatus: r['migration_status'] ?? null,
      snapshotCount: Number(r['snaps'] ?? 0),
    }));
  }

  /** Sets (or clears, `groupId` null) the group of volumes, both group columns (BS-7.11.1). */
  async setMembership(
    db: Queryable,
    volumeIds: readonly string[],
    groupId: string | null,
    consistencygroup: boolean,
    now: Date,
  ): Promise<void> {
    if (volumeIds.length === 0) return;
    await db.query(
      `UPDATE "volumes" SET group_id = $1, consistencygroup_id = $2, updated_at = $3 WHERE id = ANY($4::uuid[]) AND deleted = false`,
      [groupId, consistencygroup ? groupId : null, now, [...volumeIds]],
    );
  }

  async hasGroupSnapshots(db: Queryable, groupId: string): Promise<boolean> {
    return (
      rowsOf(
        await db.query(`SELECT 1 FROM "group_snapshots" WHERE group_id = $1 AND deleted = false LIMIT 1`, [
          groupId,
        ]),
      ).length > 0
    );
  }

  async creatingFrom(db: Queryable, sourceId: string): Promise<boolean> {
    return (
      rowsOf(
        await db.query(
          `SELECT 1 FROM "groups" WHERE (group_snapshot_id = $1 OR source_group_id = $1) AND status = 'creating' AND deleted = false LIMIT 1`,
          [sourceId],
        ),
      ).length > 0
    );
  }
}

// ---------------------------------------------------------------------------------------------

const toGroupSnapshot = (r: Row): GroupSnapshotValue => ({
  id: r['id'],
  projectId: r['project_id'],
  userId: r['user_id'] ?? null,
  groupId: r['group_id'],
  groupTypeId: r['group_type_id'],
  name: r['display_name'] ?? null,
  description: r['display_description'] ?? null,
  status: r['status'] as GroupSnapshotStatus,
  pending: bool(r['pending']),
  createdAt: r['created_at'],
});

const GROUP_SNAPSHOT_SELECT = `SELECT gs.id, gs.project_id, gs.user_id, gs.group_id, gs.group_type_id, gs.display_name, gs.display_description,
  gs.status, gs.pending, ${wireTime('gs.created_at')} AS created_at FROM "group_snapshots" gs`;

export class GroupSnapshotRepository extends StatusRepository<GroupSnapshotStatus> {
  async findById(db: Queryable, id: string, projectId: string | null): Promise<GroupSnapshotValue | null> {
    const p = new Params();
    const where = [`gs.id = ${p.add(id)}::uuid`, 'gs.deleted = false'];
    if (projectId !== null) where.push(`gs.project_id = ${p.add(projectId)}`);
    const r = first(await db.query(`${GROUP_SNAPSHOT_SELECT} WHERE ${where.join(' AND ')}`, p.values));
    return r ? toGroupSnapshot(r) : null;
  }

  /** Group snapshots; `cgOnly` keeps those of consistency groups (cgsnapshots). */
  async list(
    db: Queryable,
    projectId: string | null,
    page: SimplePage,
    groupTypeId: string | null = null,
  ): Promise<GroupSnapshotValue[]> {
    const p = new Params();
    const where = ['gs.deleted = false'];
    if (projectId !== null) where.push(`gs.project_id = ${p.add(projectId)}`);
    if (groupTypeId !== null) where.push(`gs.group_type_id = ${p.add(groupTypeId)}::uuid`);
    const { where: w, tail } = pageSql('gs', 'group_snapshots', page, p);
    return rowsOf<Row>(
      await db.query(`${GROUP_SNAPSHOT_SELECT} WHERE ${[...where, ...w].join(' AND ')} ${tail}`, p.values),
    ).map(toGroupSnapshot);
  }

  async insert(db: Queryable, s: GroupSnapshotValue, now: Date): Promise<void> {
    await db.query(
      `INSERT INTO "group_snapshots" ("id","project_id","user_id","group_id","group_type_id","display_name","display_description","status","pending","created_at")
       VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)`,
      [
        s.id,
        s.projectId,
        s.userId,
        s.groupId,
        s.groupTypeId,
        s.name,
        s.description,
        s.status,
        s.pending,
        now,
      ],
    );
  }

  async compareAndSetStatus(
    db: Queryable,
    id: string,
    allowed: readonly GroupSnapshotStatus[],
    to: GroupSnapshotStatus,
    now: Date,
    set: Readonly<Record<string, unknown>> = {},
  ): Promise<boolean> {
    const p = new Params();
    const sets = [
      `status = ${p.add(to)}`,
      `updated_at = ${p.add(now)}`,
      ...Object.entries(set).map(([c, v]) => `"${c}" = ${p.add(v)}`),
    ];
    return (
      affectedOf(
        await db.query(
          `UPDATE "group_snapshots" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false AND status = ANY(${p.add([...allowed])}::varchar[])`,
          p.values,
        ),
      ) > 0
    );
  }

  async softDelete(db: Queryable, id: string, now: Date): Promise<boolean> {
    return (
      affectedOf(
        await db.query(
          `UPDATE "group_snapshots" SET deleted = true, deleted_at = $1, updated_at = $1, status = 'deleted', pending = false WHERE id = $2 AND deleted = false`,
          [now, id],
        ),
      ) > 0
    );
  }

  /** Makes a snapshot a member of a group snapshot. */
  async attachSnapshot(db: Queryable, snapshotId: string, groupSnapshotId: string): Promise<void> {
    await db.query(`UPDATE "snapshots" SET group_snapshot_id = $1 WHERE id = $2`, [
      groupSnapshotId,
      snapshotId,
    ]);
  }

  /** Statuses of the member snapshots (not deleted). */
  async memberSnapshots(
    db: Queryable,
    id: string,
  ): Promise<
    {
      id: string;
      status: string;
      volumeId: string;
      host: string | null;
      size: number;
      volumeTypeId: string | null;
    }[]
  > {
    return rowsOf<Row>(
      await db.query(
        `SELECT id, status, volume_id, host, size, volume_type_id FROM "snapshots" WHERE group_snapshot_id = $1 AND deleted = false ORDER BY created_at, id`,
        [id],
      ),
    ).map((r) => ({
      id: r['id'],
      status: r['status'],
      volumeId: r['volume_id'],
      host: r['host'] ?? null,
      size: Number(r['size']),
      volumeTypeId: r['volume_type_id'] ?? null,
    }));
  }
}
