import {
  isUuid,
  USER_VISIBLE_EXTRA_SPECS,
  type EncryptionValue,
  type Paging,
  type VolumeTypeValue,
} from '@osc/block-storage-domain';
import { afterMarker, pageTail } from './list-sql';
import { affectedOf, likeEscape, Params, rowsOf, type Queryable } from './sql';

type Row = Record<string, any>;

/** Who is looking: admins see every type, others public types plus private ones granted to them (BS-7.2.6). */
export interface TypeScope {
  readonly projectId: string;
  readonly isAdmin: boolean;
}

/** `is_public` list filter after policy (BS-7.2.7): public(+own grants), private only, or all. */
export type TypeVisibilityFilter = 'public-and-granted' | 'private' | 'all';

export interface StoredVolumeType extends VolumeTypeValue {
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

const typeSortExpr = (key: string, alias: string): string => {
  if (key === 'updated_at') return `COALESCE(${alias}."updated_at", ${alias}."created_at")`;
  if (key === 'id') return `${alias}."id"`;
  if (key === 'name' || key === 'description') return `COALESCE(${alias}."${key}", '')`;
  return `${alias}."${key}"`;
};

/** A type row with its extra specs as one JSON object, in one round trip. */
const TYPE_SELECT = `SELECT t.*, (SELECT jsonb_object_agg(s.key, s.value) FROM "volume_type_extra_specs" s WHERE s.volume_type_id = t.id) AS extra_specs FROM "volume_types" t`;

const visibleSql = (scope: TypeScope, alias: string, p: Params): string =>
  scope.isAdmin
    ? 'TRUE'
    : `(${alias}.is_public OR EXISTS (SELECT 1 FROM "volume_type_projects" a WHERE a.volume_type_id = ${alias}.id AND a.project_id = ${p.add(scope.projectId)}))`;

/** Volume types with their extra specs, access grants, encryption and per-project defaults. */
export class VolumeTypeRepository {
  /** Rows selected with {@link TYPE_SELECT} (specs aggregated in the same query) → values. */
  private toTypes(rows: Row[]): StoredVolumeType[] {
    return rows.map((r) => ({
      id: r['id'],
      name: r['name'],
      description: r['description'] ?? null,
      isPublic: r['is_public'] === true,
      qosSpecsId: r['qos_specs_id'] ?? null,
      extraSpecs: (r['extra_specs'] as Record<string, string | null> | null) ?? {},
      createdAt: r['created_at'],
      updatedAt: r['updated_at'] ?? null,
    }));
  }

  private async withSpecs(_db: Queryable, rows: Row[]): Promise<StoredVolumeType[]> {
    return this.toTypes(rows);
  }

  /** A type by id (if the text is a UUID) or by name, visible to `scope`; null otherwise. */
  async findVisible(db: Queryable, idOrName: string, scope: TypeScope): Promise<StoredVolumeType | null> {
    const p = new Params();
    const key = isUuid(idOrName)
      ? `t.id = ${p.add(idOrName.toLowerCase())}::uuid`
      : `t.name = ${p.add(idOrName)}`;
    const rows = rowsOf<Row>(
      await db.query(
        `${TYPE_SELECT} WHERE ${key} AND t.deleted = false AND ${visibleSql(scope, 't', p)}`,
        p.values,
      ),
    );
    return (await this.withSpecs(db, rows))[0] ?? null;
  }

  /** Lookup by id or name regardless of visibility (admin paths, defaults, worker). */
  async findAny(db: Queryable, idOrName: string): Promise<StoredVolumeType | null> {
    return this.findVisible(db, idOrName, { projectId: '', isAdmin: true });
  }

  async list(
    db: Queryable,
    scope: TypeScope,
    visibility: TypeVisibilityFilter,
    specFilter: Readonly<Record<string, string>> | null,
    paging: Paging,
  ): Promise<StoredVolumeType[]> {
    const p = new Params();
    const where = ['t.deleted = false'];
    if (!scope.isAdmin) where.push(visibleSql(scope, 't', p));
    else if (visibility === 'public-and-granted') {
      where.push(
        `(t.is_public OR EXISTS (SELECT 1 FROM "volume_type_projects" a WHERE a.volume_type_id = t.id AND a.project_id = ${p.add(scope.projectId)}))`,
      );
    } else if (visibility === 'private') where.push('t.is_public = false');
    if (specFilter !== null) {
      for (const [k, v] of Object.entries(specFilter)) {
        if (!scope.isAdmin && !USER_VISIBLE_EXTRA_SPECS.includes(k)) {
          where.push('FALSE');
          continue;
        }
        const cond =
          k === 'RESKEY:availability_zones'
            ? `s.value LIKE ${p.add(`%${likeEscape(v)}%`)}`
            : `s.value = ${p.add(v)}`;
        where.push(
          `EXISTS (SELECT 1 FROM "volume_type_extra_specs" s WHERE s.volume_type_id = t.id AND s.key = ${p.add(k)} AND ${cond})`,
        );
      }
    }
    if (paging.marker !== null)
      where.push(afterMarker(paging.sort, typeSortExpr, 't', 'volume_types', paging.marker, p));
    const rows = rowsOf<Row>(
      await db.query(
        `${TYPE_SELECT} WHERE ${where.join(' AND ')} ${pageTail(paging.sort, typeSortExpr, 't', paging, p)}`,
        p.values,
      ),
    );
    return this.withSpecs(db, rows);
  }

  async markerExists(db: Queryable, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    return (
      rowsOf(await db.query(`SELECT 1 FROM "volume_types" WHERE id = $1::uuid AND deleted = false`, [id]))
        .length > 0
    );
  }

  async nameTaken(db: Queryable, name: string, exceptId: string | null): Promise<boolean> {
    return (
      rowsOf(
        await db.query(
          `SELECT 1 FROM "volume_types" WHERE name = $1 AND deleted = false AND ($2::uuid IS NULL OR id <> $2::uuid)`,
          [name, exceptId],
        ),
      ).length > 0
    );
  }

  async insert(
    db: Queryable,
    t: {
      id: string;
      name: string;
      description: string | null;
      isPublic: boolean;
      extraSpecs: Readonly<Record<string, string | null>>;
      now: Date;
    },
  ): Promise<void> {
    await db.query(
      `INSERT INTO "volume_types" (id, name, description, is_public, created_at) VALUES ($1, $2, $3, $4, $5)`,
      [t.id, t.name, t.description, t.isPublic, t.now],
    );
    await this.upsertSpecs(db, t.id, t.extraSpecs);
  }

  async update(
    db: Queryable,
    id: string,
    set: { name?: string; description?: string | null; isPublic?: boolean },
    now: Date,
  ): Promise<void> {
    const p = new Params();
    const sets = [`updated_at = ${p.add(now)}`];
    if (set.name !== undefined) sets.push(`name = ${p.add(set.name)}`);
    if (set.description !== undefined) sets.push(`description = ${p.add(set.description)}`);
    if (set.isPublic !== undefined) sets.push(`is_public = ${p.add(set.isPublic)}`);
    await db.query(
      `UPDATE "volume_types" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false`,
      p.values,
    );
  }

  /** Soft delete; also removes specs, encryption and access entries (BS-7.2.5). */
  async softDelete(db: Queryable, id: string, now: Date): Promise<void> {
    await db.query(`UPDATE "volume_types" SET deleted = true, deleted_at = $1 WHERE id = $2`, [now, id]);
    await db.query(`DELETE FROM "volume_type_extra_specs" WHERE volume_type_id = $1`, [id]);
    await db.query(`DELETE FROM "volume_type_encryption" WHERE volume_type_id = $1`, [id]);
    await db.query(`DELETE FROM "volume_type_projects" WHERE volume_type_id = $1`, [id]);
  }

  async countActive(db: Queryable): Promise<number> {
    const r = rowsOf<Row>(
      await db.query(`SELECT count(*)::int AS n FROM "volume_types" WHERE deleted = false`),
    );
    return Number(r[0]?.['n'] ?? 0);
  }

  /** Whether any non-deleted volume (any project) has the type. */
  async isInUse(db: Queryable, id: string): Promise<boolean> {
    return (
      rowsOf(
        await db.query(`SELECT 1 FROM "volumes" WHERE volume_type_id = $1 AND deleted = false LIMIT 1`, [id]),
      ).length > 0
    );
  }

  async upsertSpecs(
    db: Queryable,
    id: string,
    specs: Readonly<Record<string, string | null>>,
  ): Promise<void> {
    const entries = Object.entries(specs);
    if (entries.length === 0) return;
    const p = new Params();
    const values = entries.map(([k, v]) => `(${p.add(id)}::uuid, ${p.add(k)}, ${p.add(v)})`);
    await db.query(
      `INSERT INTO "volume_type_extra_specs" (volume_type_id, key, value) VALUES ${values.join(', ')} ON CONFLICT (volume_type_id, key) DO UPDATE SET value = EXCLUDED.value`,
      p.values,
    );
  }

  async deleteSpec(db: Queryable, id: string, key: string): Promise<boolean> {
    return (
      affectedOf(
        await db.query(`DELETE FROM "volume_type_extra_specs" WHERE volume_type_id = $1 AND key = $2`, [
          id,
          key,
        ]),
      ) > 0
    );
  }

  async listAccess(db: Queryable, id: string): Promise<string[]> {
    return rowsOf<Row>(
      await db.query(
        `SELECT project_id FROM "volume_type_projects" WHERE volume_type_id = $1 ORDER BY project_id`,
        [id],
      ),
    ).map((r) => r['project_id']);
  }

  /** False when the grant already existed. */
  async addAccess(db: Queryable, id: string, projectId: string, now: Date): Promise<boolean> {
    const r = await db.query(
      `INSERT INTO "volume_type_projects" (volume_type_id, project_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1`,
      [id, projectId, now],
    );
    return rowsOf(r).length > 0;
  }

  async removeAccess(db: Queryable, id: string, projectId: string): Promise<boolean> {
    return (
      affectedOf(
        await db.query(`DELETE FROM "volume_type_projects" WHERE volume_type_id = $1 AND project_id = $2`, [
          id,
          projectId,
        ]),
      ) > 0
    );
  }

  async getEncryption(db: Queryable, typeId: string): Promise<EncryptionValue | null> {
    const r = rowsOf<Row>(
      await db.query(`SELECT * FROM "volume_type_encryption" WHERE volume_type_id = $1`, [typeId]),
    )[0];
    return r
      ? {
          encryptionId: r['encryption_id'],
          volumeTypeId: r['volume_type_id'],
          provider: r['provider'],
          cipher: r['cipher'] ?? null,
          keySize: r['key_size'] === null || r['key_size'] === undefined ? null : Number(r['key_size']),
          controlLocation: r['control_location'],
          createdAt: r['created_at'],
          updatedAt: r['updated_at'] ?? null,
        }
      : null;
  }

  async insertEncryption(
    db: Queryable,
    e: {
      encryptionId: string;
      volumeTypeId: string;
      provider: string;
      cipher: string | null;
      keySize: number | null;
      controlLocation: string;
      now: Date;
    },
  ): Promise<void> {
    await db.query(
      `INSERT INTO "volume_type_encryption" (encryption_id, volume_type_id, provider, cipher, key_size, control_location, created_at) VALUES ($1,$2,$3,$4,$5,$6,$7)`,
      [e.encryptionId, e.volumeTypeId, e.provider, e.cipher, e.keySize, e.controlLocation, e.now],
    );
  }

  async updateEncryption(
    db: Queryable,
    typeId: string,
    set: Readonly<Record<string, unknown>>,
    now: Date,
  ): Promise<void> {
    const p = new Params();
    const sets = [`updated_at = ${p.add(now)}`];
    for (const [col, v] of Object.entries(set)) sets.push(`"${col}" = ${p.add(v)}`);
    await db.query(
      `UPDATE "volume_type_encryption" SET ${sets.join(', ')} WHERE volume_type_id = ${p.add(typeId)}`,
      p.values,
    );
  }

  async deleteEncryption(db: Queryable, typeId: string): Promise<boolean> {
    return (
      affectedOf(await db.query(`DELETE FROM "volume_type_encryption" WHERE volume_type_id = $1`, [typeId])) >
      0
    );
  }

  async getDefault(
    db: Queryable,
    projectId: string,
  ): Promise<{ projectId: string; volumeTypeId: string } | null> {
    const r = rowsOf<Row>(
      await db.query(`SELECT project_id, volume_type_id FROM "default_volume_types" WHERE project_id = $1`, [
        projectId,
      ]),
    )[0];
    return r ? { projectId: r['project_id'], volumeTypeId: r['volume_type_id'] } : null;
  }

  async listDefaults(db: Queryable): Promise<{ projectId: string; volumeTypeId: string }[]> {
    return rowsOf<Row>(
      await db.query(`SELECT project_id, volume_type_id FROM "default_volume_types" ORDER BY project_id`),
    ).map((r) => ({
      projectId: r['project_id'],
      volumeTypeId: r['volume_type_id'],
    }));
  }

  async setDefault(db: Queryable, projectId: string, typeId: string, now: Date): Promise<void> {
    await db.query(
      `INSERT INTO "default_volume_types" (project_id, volume_type_id, created_at) VALUES ($1, $2, $3)
       ON CONFLICT (project_id) DO UPDATE SET volume_type_id = EXCLUDED.volume_type_id, updated_at = $3`,
      [projectId, typeId, now],
    );
  }

  async unsetDefault(db: Queryable, projectId: string): Promise<boolean> {
    return (
      affectedOf(await db.query(`DELETE FROM "default_volume_types" WHERE project_id = $1`, [projectId])) > 0
    );
  }

  async isProjectDefault(db: Queryable, typeId: string): Promise<boolean> {
    return (
      rowsOf(
        await db.query(`SELECT 1 FROM "default_volume_types" WHERE volume_type_id = $1 LIMIT 1`, [typeId]),
      ).length > 0
    );
  }
}
