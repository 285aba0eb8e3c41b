import {
  isUuid,
  type AttachMode,
  type AttachmentRecord,
  type AttachStatus,
  type Paging,
} from '@osc/block-storage-domain';
import { afterMarker, pageTail } from '../list-sql';
import { affectedOf, Params, rowsOf, type Queryable } from '../sql';
import { wireTime } from '../volume.repository';

type Row = Record<string, any>;

/** An attachment row with the project of its volume (attachments are scoped by their volume's project). */
export interface StoredAttachment extends AttachmentRecord {
  readonly projectId: string;
}

const SELECT = `SELECT a.id, a.volume_id, a.instance_uuid, a.attached_host, a.mountpoint, a.attach_status, a.attach_mode,
    ${wireTime('a.attach_time')} AS attach_time, ${wireTime('a.detach_time')} AS detach_time, a.connector, a.connection_info, v.project_id
  FROM "volume_attachments" a JOIN "volumes" v ON v.id = a.volume_id`;

const toAttachment = (r: Row): StoredAttachment => ({
  id: r['id'],
  volumeId: r['volume_id'],
  instanceUuid: r['instance_uuid'] ?? null,
  attachedHost: r['attached_host'] ?? null,
  mountpoint: r['mountpoint'] ?? null,
  attachStatus: r['attach_status'] as AttachStatus,
  attachMode: (r['attach_mode'] ?? 'null') as AttachMode,
  attachTime: r['attach_time'] ?? null,
  detachTime: r['detach_time'] ?? null,
  connector: r['connector'] ?? null,
  connectionInfo: r['connection_info'] ?? null,
  projectId: r['project_id'],
});

/** List filters of `GET /attachments` (Cinder's allowed_filters, instance_id already renamed). */
export interface AttachmentFilters {
  readonly volumeId?: string;
  readonly instanceUuid?: string;
  /** `status` and `attach_status` both filter the attachment's attach_status. */
  readonly attachStatus?: string;
}

const SORT_COLUMNS: Readonly<Record<string, string>> = {
  created_at: 'created_at',
  updated_at: 'updated_at',
  id: 'id',
  volume_id: 'volume_id',
  instance_uuid: 'instance_uuid',
  attach_status: 'attach_status',
  attached_host: 'attached_host',
};

const sortExpr = (key: string, alias: string): string => {
  if (key === 'updated_at') return `COALESCE(${alias}."updated_at", ${alias}."created_at")`;
  const col = SORT_COLUMNS[key] ?? 'created_at';
  return col === 'instance_uuid' || col === 'attached_host'
    ? `COALESCE(${alias}."${col}", '')`
    : `${alias}."${col}"`;
};

/** What changes when an attachment is connected, attached or detached. */
export interface AttachmentChange {
  readonly attachStatus?: AttachStatus;
  readonly attachMode?: AttachMode;
  readonly instanceUuid?: string | null;
  readonly attachedHost?: string | null;
  readonly mountpoint?: string | null;
  readonly attachTime?: Date | null;
  readonly connector?: Readonly<Record<string, unknown>> | null;
  readonly connectionInfo?: Readonly<Record<string, unknown>> | null;
}

const COLUMN_OF: Readonly<Record<keyof AttachmentChange, string>> = {
  attachStatus: 'attach_status',
  attachMode: 'attach_mode',
  instanceUuid: 'instance_uuid',
  attachedHost: 'attached_host',
  mountpoint: 'mountpoint',
  attachTime: 'attach_time',
  connector: 'connector',
  connectionInfo: 'connection_info',
};

/** Volume attachment rows (Cinder's `volume_attachment`). */
export class AttachmentRepository {
  /** A live attachment; with `projectId`, only one of that project's volumes (others read as absent). */
  async findById(
    db: Queryable,
    id: string,
    projectId: string | null,
    forUpdate = false,
  ): Promise<StoredAttachment | null> {
    if (!isUuid(id)) return null;
    const p = new Params();
    const where = [`a.id = ${p.add(id)}::uuid`, 'a.deleted = false', 'v.deleted = false'];
    if (projectId !== null) where.push(`v.project_id = ${p.add(projectId)}`);
    const rows = rowsOf<Row>(
      await db.query(
        `${SELECT} WHERE ${where.join(' AND ')}${forUpdate ? ' FOR UPDATE OF a' : ''}`,
        p.values,
      ),
    );
    return rows[0] ? toAttachment(rows[0]) : null;
  }

  /** Live attachments of a volume, oldest first. */
  async listOfVolume(db: Queryable, volumeId: string): Promise<StoredAttachment[]> {
    return rowsOf<Row>(
      await db.query(`${SELECT} WHERE a.volume_id = $1 AND a.deleted = false ORDER BY a.created_at, a.id`, [
        volumeId,
      ]),
    ).map(toAttachment);
  }

  async insert(
    db: Queryable,
    a: {
      id: string;
      volumeId: string;
      volumeHost: string | null;
      instanceUuid: string | null;
      attachStatus: AttachStatus;
      attachMode: AttachMode;
      now: Date;
    },
  ): Promise<void> {
    await db.query(
      `INSERT INTO "volume_attachments" (id, volume_id, volume_host, instance_uuid, attach_status, attach_mode, connection_info, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, '{}'::jsonb, $7)`,
      [a.id, a.volumeId, a.volumeHost, a.instanceUuid, a.attachStatus, a.attachMode, a.now],
    );
  }

  /** Applies `change` to a live attachment; false when it is gone. */
  async update(db: Queryable, id: string, change: AttachmentChange, now: Date): Promise<boolean> {
    const p = new Params();
    const sets = [`"updated_at" = ${p.add(now)}`];
    for (const [key, value] of Object.entries(change) as [keyof AttachmentChange, unknown][]) {
      if (value === undefined) continue;
      const col = COLUMN_OF[key];
      if (col === 'connector' || col === 'connection_info')
        sets.push(`"${col}" = ${p.add(value === null ? null : JSON.stringify(value))}::jsonb`);
      else sets.push(`"${col}" = ${p.add(value)}`);
    }
    const r = await db.query(
      `UPDATE "volume_attachments" SET ${sets.join(', ')} WHERE id = ${p.add(id)} AND deleted = false`,
      p.values,
    );
    return affectedOf(r) > 0;
  }

  /** Soft-deletes an attachment as Cinder's `volume_detached` does (status detached, detach time set). */
  async softDelete(db: Queryable, id: string, now: Date): Promise<boolean> {
    const r = await db.query(
      `UPDATE "volume_attachments" SET deleted = true, deleted_at = $1, updated_at = $1, detach_time = $1, attach_status = 'detached' WHERE id = $2 AND deleted = false`,
      [now, id],
    );
    return affectedOf(r) > 0;
  }

  /** Soft-deletes every live attachment of a volume (admin reset to attach_status detached, volume delete). */
  async softDeleteOfVolume(db: Queryable, volumeId: string, now: Date): Promise<number> {
    const r = await db.query(
      `UPDATE "volume_attachments" SET deleted = true, deleted_at = $1, updated_at = $1, detach_time = $1, attach_status = 'detached' WHERE volume_id = $2 AND deleted = false`,
      [now, volumeId],
    );
    return affectedOf(r);
  }

  /** `GET /attachments[/detail]`: one project's (or, null, every project's) live attachments of live volumes. */
  async list(
    db: Queryable,
    projectId: string | null,
    filters: AttachmentFilters,
    paging: Paging,
  ): Promise<StoredAttachment[]> {
    const p = new Params();
    const where = ['a.deleted = false', 'v.deleted = false'];
    if (projectId !== null) where.push(`v.project_id = ${p.add(projectId)}`);
    if (filters.volumeId !== undefined)
      where.push(isUuid(filters.volumeId) ? `a.volume_id = ${p.add(filters.volumeId)}::uuid` : 'FALSE');
    if (filters.instanceUuid !== undefined) where.push(`a.instance_uuid = ${p.add(filters.instanceUuid)}`);
    if (filters.attachStatus !== undefined) where.push(`a.attach_status = ${p.add(filters.attachStatus)}`);
    if (paging.marker !== null)
      where.push(afterMarker(paging.sort, sortExpr, 'a', 'volume_attachments', paging.marker, p));
    const sql = `${SELECT} WHERE ${where.join(' AND ')} ${pageTail(paging.sort, sortExpr, 'a', paging, p)}`;
    return rowsOf<Row>(await db.query(sql, p.values)).map(toAttachment);
  }
}
