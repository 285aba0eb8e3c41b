import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  GROUP_STATUSES,
  isJsonObject,
  parseBoolean,
  parseResetStatus,
  supports,
} from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import { GroupRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { GroupLookupService, invalidGroup } from './group-lookup.service';
import { GroupsService } from './groups.service';

/**
 * `POST /groups/{id}/action` (BS-7.13): delete, the admin `reset_status` (3.20) and the group
 * replication actions (3.38), refused for every group since no back end here replicates (Cinder's
 * answer for a group that is not replication-enabled).
 */
@Injectable()
export class GroupActionsService {
  private readonly groups = new GroupRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly lookup: GroupLookupService,
    private readonly lifecycle: GroupsService,
  ) {}

  /** `reset_status` (3.20, admin): any group status, the pending member work forgotten. */
  async resetStatus(api: ApiRequest, id: string, args: unknown): Promise<void> {
    const g = await this.lookup.load(api, 'group', id);
    api.authorize('group:reset_status', g.projectId);
    const status = parseResetStatus(args, GROUP_STATUSES);
    await this.groups.update(this.db, g.id, { status, pending: false }, this.clock.now());
  }

  /** `POST /groups/{id}/action` (BS-7.13). */
  async action(api: ApiRequest, id: string, body: unknown): Promise<void> {
    if (!isJsonObject(body) || Object.keys(body).length !== 1)
      throw new InvalidInputError('Invalid input received: the request body must name exactly one action.');
    const [name, args] = Object.entries(body)[0] as [string, unknown];
    switch (name) {
      case 'delete': {
        const a = args === null || args === undefined ? {} : args;
        if (!isJsonObject(a))
          throw new InvalidInputError("Invalid input received: 'delete' must be an object.");
        const dv = a['delete-volumes'];
        await this.lifecycle.remove(
          api,
          'group',
          id,
          dv === undefined ? false : parseBoolean(dv, 'delete-volumes'),
        );
        return;
      }
      case 'reset_status':
        this.lookup.gate(api, 'groups.reset-status');
        await this.resetStatus(api, id, args);
        return;
      case 'enable_replication':
      case 'disable_replication':
      case 'failover_replication':
      case 'list_replication_targets': {
        if (!supports(api.mv, 'groups.replication')) break;
        const g = await this.lookup.load(api, 'group', id);
        api.authorize(`group:${name}`, g.projectId);
        throw invalidGroup(
          'group',
          `Group ${g.id} is not replication-enabled: its group type has no group_replication_enabled spec.`,
        );
      }
      default:
        break;
    }
    throw new InvalidInputError(`There is no such action: ${name.slice(0, 100)}`);
  }
}
