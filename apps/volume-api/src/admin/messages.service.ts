import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { formatMicroversion, formatTimestamp, resourceLinks, supports } from '@osc/block-storage-domain';
import { NotFoundError } from '@osc/errors';
import { MessageRepository, type StoredMessage } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';

const messageNotFound = (id: string): NotFoundError =>
  new NotFoundError('Message', id, `Message ${id} could not be found.`);

/** User messages (3.3): the project's record of asynchronous failures; admins see every project's. */
@Injectable()
export class MessagesService {
  private readonly messages = new MessageRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
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

  async list(api: ApiRequest): Promise<Record<string, unknown>> {
    this.gate(api);
    api.authorize('message:get_all');
    const rows = await this.messages.list(this.db, api.isAdmin ? null : api.ctx.projectId, this.clock.now());
    return { messages: rows.map((m) => this.view(api, m)) };
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
