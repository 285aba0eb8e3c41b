import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  formatMicroversion,
  formatTimestamp,
  nextPageLink,
  parsePaging,
  queryValue,
  resourceLinks,
  supports,
} from '@osc/block-storage-domain';
import { NotFoundError } from '@osc/errors';
import { MessageRepository, type StoredMessage } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

const MESSAGE_SORT_KEYS = [
  'id',
  'event_id',
  'message_level',
  'request_id',
  'resource_type',
  'resource_uuid',
  'created_at',
] as const;

const messageNotFound = (id: string): NotFoundError =>
  new NotFoundError('Message', id, `Message ${id} could not be found.`);

/** User messages (3.3): the project's record of asynchronous failures; admins see every project's. */
@Injectable()
export class MessagesService {
  private readonly messages = new MessageRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  private gate(api: ApiRequest): void {
    if (!supports(api.mv, 'messages.api')) {
      throw new NotFoundError(
        'version',
        formatMicroversion(api.mv),
        `API version ${formatMicroversion(api.mv)} is not supported on this method.`,
      );
    }
  }

  private view(api: ApiRequest, m: StoredMessage): Record<string, unknown> {
    const out: Record<string, unknown> = {
      id: m.id,
      event_id: m.eventId,
      user_message: m.userMessage,
      message_level: m.messageLevel,
      created_at: formatTimestamp(m.createdAt),
      guaranteed_until: formatTimestamp(m.expiresAt),
      request_id: m.requestId,
      links: resourceLinks(api.links, 'messages', m.id),
    };
    if (m.resourceType !== null) out['resource_type'] = m.resourceType;
    if (m.resourceUuid !== null) out['resource_uuid'] = m.resourceUuid;
    return out;
  }

  /**
   * From 3.5 the list takes Cinder's filters (exact match on the message fields), `sort`,
   * `limit`, `marker` and `offset`; the default order is newest first. A project holds few
   * unexpired messages, so they are filtered and paged here.
   */
  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('message:get_all');
    let rows = await this.messages.list(this.db, api.isAdmin ? null : api.ctx.projectId, this.clock.now());
    if (!supports(api.mv, 'messages.pagination')) return { messages: rows.map((m) => this.view(api, m)) };
    const paging = parsePaging(api.query, { maxLimit: this.config.maxLimit, sortKeys: MESSAGE_SORT_KEYS });
    const fields: Record<string, (m: StoredMessage) => string | null> = {
      id: (m) => m.id,
      event_id: (m) => m.eventId,
      message_level: (m) => m.messageLevel,
      request_id: (m) => m.requestId,
      resource_type: (m) => m.resourceType,
      resource_uuid: (m) => m.resourceUuid,
      created_at: (m) => m.createdAt.toISOString(),
    };
    for (const [key, get] of Object.entries(fields)) {
      const wanted = queryValue(api.query[key]);
      if (wanted !== undefined && key !== 'created_at') rows = rows.filter((m) => get(m) === wanted);
    }
    const sort = paging.sort.length > 0 ? paging.sort : [{ key: 'created_at', dir: 'desc' as const }];
    const order = [...sort, { key: 'id', dir: 'desc' as const }];
    rows = [...rows].sort((a, b) => {
      for (const { key, dir } of order) {
        const get = fields[key] ?? fields['id'];
        const x = get?.(a) ?? '';
        const y = get?.(b) ?? '';
        if (x !== y) return (x < y ? -1 : 1) * (dir === 'asc' ? 1 : -1);
      }
      return 0;
    });
    if (paging.marker !== null) {
      const at = rows.findIndex((m) => m.id === paging.marker);
      if (at < 0)
        throw new NotFoundError('Marker', paging.marker, `Marker ${paging.marker} could not be found.`);
      rows = rows.slice(at + 1);
    }
    const page = rows.slice(paging.offset, paging.offset + paging.limit);
    const out: Record<string, unknown> = { messages: page.map((m) => this.view(api, m)) };
    const last = page[page.length - 1];
    if (last && page.length === paging.limit && rows.length > paging.offset + paging.limit) {
      out['messages_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    }
    return out;
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    this.gate(api);
    const m = await this.messages.find(this.db, id, api.isAdmin ? null : api.ctx.projectId, this.clock.now());
    if (!m) throw messageNotFound(id);
    api.authorize('message:get', m.projectId);
    return { message: this.view(api, m) };
  }

  async remove(api: ApiRequest, id: string): Promise<void> {
    this.gate(api);
    const m = await this.messages.find(this.db, id, api.isAdmin ? null : api.ctx.projectId, this.clock.now());
    if (!m) throw messageNotFound(id);
    api.authorize('message:delete', m.projectId);
    if (!(await this.messages.remove(this.db, m.id))) throw messageNotFound(id);
  }
}
