import { randomUUID } from 'node:crypto';
import {
  MESSAGE_ACTIONS,
  MESSAGE_DETAILS,
  type MessageAction,
  type MessageDetail,
  type MessageResourceType,
} from '@osc/block-storage-domain';
import { Params, affectedOf, rowsOf, type Queryable } from '../sql';

type Row = Record<string, any>;

export {
  MESSAGE_ACTIONS,
  MESSAGE_DETAILS,
  type MessageAction,
  type MessageDetail,
} from '@osc/block-storage-domain';

export interface StoredMessage {
  readonly id: string;
  readonly projectId: string;
  readonly requestId: string | null;
  readonly resourceType: string | null;
  readonly resourceUuid: string | null;
  readonly eventId: string;
  readonly userMessage: string;
  readonly messageLevel: string;
  readonly createdAt: Date;
  readonly expiresAt: Date;
}

const ACTION_TEXT = new Map<string, string>(Object.values(MESSAGE_ACTIONS).map(([id, text]) => [id, text]));
const DETAIL_TEXT = new Map<string, string>(Object.values(MESSAGE_DETAILS).map(([id, text]) => [id, text]));

const toMessage = (r: Row): StoredMessage => ({
  id: r['id'],
  projectId: r['project_id'],
  requestId: r['request_id'] ?? null,
  resourceType: r['resource_type'] ?? null,
  resourceUuid: r['resource_uuid'] ?? null,
  eventId: r['event_id'],
  userMessage: `${ACTION_TEXT.get(r['action_id']) ?? ''}:${DETAIL_TEXT.get(r['detail_id']) ?? DETAIL_TEXT.get('001') ?? ''}`,
  messageLevel: r['message_level'],
  createdAt: new Date(r['created_at']),
  expiresAt: new Date(r['expires_at']),
});

/** Cinder's default `message_ttl`: 30 days. */
export const MESSAGE_TTL_SECONDS = 2592000;

/** User messages (3.3): written where an asynchronous operation fails, read and deleted by the resource's project. */
export class MessageRepository {
  async record(
    db: Queryable,
    m: {
      projectId: string;
      requestId: string | null | undefined;
      resourceType: MessageResourceType;
      resourceUuid: string;
      action: MessageAction;
      detail: MessageDetail;
      now: Date;
    },
  ): Promise<string> {
    const id = randomUUID();
    const [actionId] = MESSAGE_ACTIONS[m.action];
    const [detailId] = MESSAGE_DETAILS[m.detail];
    await db.query(
      `INSERT INTO "messages" (id, project_id, request_id, resource_type, resource_uuid, event_id, action_id, detail_id, message_level, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'ERROR', $9, $10)`,
      [
        id,
        m.projectId,
        m.requestId ?? null,
        m.resourceType,
        m.resourceUuid,
        `VOLUME_${m.resourceType}_${actionId}_${detailId}`,
        actionId,
        detailId,
        m.now,
        new Date(m.now.getTime() + MESSAGE_TTL_SECONDS * 1000),
      ],
    );
    return id;
  }

  /** Unexpired, undeleted messages of a project (all projects when null), oldest first. */
  async list(db: Queryable, projectId: string | null, now: Date): Promise<StoredMessage[]> {
    const p = new Params();
    const where = [`deleted = false`, `expires_at > ${p.add(now)}`];
    if (projectId !== null) where.push(`project_id = ${p.add(projectId)}`);
    return rowsOf<Row>(
      await db.query(
        `SELECT * FROM "messages" WHERE ${where.join(' AND ')} ORDER BY created_at, id`,
        p.values,
      ),
    ).map(toMessage);
  }

  async find(db: Queryable, id: string, projectId: string | null, now: Date): Promise<StoredMessage | null> {
    if (!/^[0-9a-fA-F-]{36}$/.test(id)) return null;
    const p = new Params();
    const where = [`id = ${p.add(id.toLowerCase())}::uuid`, `deleted = false`, `expires_at > ${p.add(now)}`];
    if (projectId !== null) where.push(`project_id = ${p.add(projectId)}`);
    const r = rowsOf<Row>(
      await db.query(`SELECT * FROM "messages" WHERE ${where.join(' AND ')}`, p.values),
    )[0];
    return r ? toMessage(r) : null;
  }

  async remove(db: Queryable, id: string): Promise<boolean> {
    return (
      affectedOf(
        await db.query(`UPDATE "messages" SET deleted = true WHERE id = $1::uuid AND deleted = false`, [id]),
      ) > 0
    );
  }
}
