import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  GROUP_ADDABLE_MEMBER_STATUSES,
  GROUP_OPERATIONS,
  GROUP_REMOVABLE_MEMBER_STATUSES,
  GROUP_USABLE_STATUSES,
  isStatusIn,
  isUuid,
  parseUpdateGroup,
  refusalOf,
  supports,
} from '@osc/block-storage-domain';
import { InvalidInputError, InvalidStateError } from '@osc/errors';
import { CG_GROUP_TYPE_ID, GroupRepository, VolumeRepository } from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendOf } from '../jobs/outbox-job';
import { GroupLookupService, groupNotFound, invalidGroup, type GroupFlavor } from './group-lookup.service';

/**
 * Which volumes belong to a group (BS-7.11.6, BS-7.7): a group update renames it and adds or
 * removes existing volumes (held in `updating` meanwhile), and a volume created with `group_id` or
 * `consistencygroup_id` joins the group when the group is usable and supports its type.
 */
@Injectable()
export class GroupMembershipService {
  private readonly groups = new GroupRepository();
  private readonly volumes = new VolumeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly lookup: GroupLookupService,
  ) {}

  /** Name, description and membership changes (BS-7.11.6). */
  async update(api: ApiRequest, flavor: GroupFlavor, id: string, body: unknown): Promise<void> {
    const input = parseUpdateGroup(
      body,
      flavor === 'group' ? 'group' : 'consistencygroup',
      flavor === 'group' || supports(api.mv, 'consistencygroup.empty-name-update'),
    );
    const g = await this.lookup.load(api, flavor, id);
    api.authorize('group:update', g.projectId);
    const now = this.clock.now();
    const membership = input.addVolumes.length > 0 || input.removeVolumes.length > 0;
    const members = await this.groups.members(this.db, g.id);
    const memberIds = new Set(members.map((m) => m.id));
    if (membership) {
      if (g.status !== 'available')
        throw invalidGroup(
          flavor,
          `Group ${g.id} status must be available to change its volumes, but current status is: ${g.status}.`,
        );
      for (const vid of input.removeVolumes) {
        const m = members.find((x) => x.id === vid);
        if (!m)
          throw new InvalidStateError(
            `Invalid volume: Cannot remove volume ${vid} from group ${g.id} because it is not in the group.`,
          );
        if (!isStatusIn(GROUP_REMOVABLE_MEMBER_STATUSES, m.status)) {
          throw new InvalidStateError(
            `Invalid volume: Cannot remove volume ${vid} from group ${g.id} because volume is in an invalid state: ${m.status}. Valid states are: ${GROUP_REMOVABLE_MEMBER_STATUSES.join(', ')}.`,
          );
        }
      }
      for (const vid of input.addVolumes) {
        const v = isUuid(vid) ? await this.volumes.findById(this.db, vid, g.projectId) : null;
        if (!v)
          throw new InvalidStateError(
            `Invalid volume: Cannot add volume ${vid} to group ${g.id} because volume cannot be found.`,
          );
        if (memberIds.has(v.id)) continue;
        if (v.groupId !== null || v.consistencygroupId !== null)
          throw new InvalidStateError(
            `Invalid volume: Cannot add volume ${v.id} to group ${g.id} because it is already in group ${v.groupId ?? v.consistencygroupId}.`,
          );
        if (!g.volumeTypeIds.includes(v.volumeTypeId))
          throw new InvalidStateError(
            `Invalid volume: Cannot add volume ${v.id} to group ${g.id} because volume type ${v.volumeTypeId} is not supported by the group.`,
          );
        if (!GROUP_ADDABLE_MEMBER_STATUSES.includes(v.status)) {
          throw new InvalidStateError(
            `Invalid volume: Cannot add volume ${v.id} to group ${g.id} because volume is in an invalid state: ${v.status}. Valid states are: ${GROUP_ADDABLE_MEMBER_STATUSES.join(', ')}.`,
          );
        }
        if (v.host === null || (g.host !== null && backendOf(v.host) !== backendOf(g.host))) {
          throw new InvalidStateError(
            `Invalid volume: Cannot add volume ${v.id} to group ${g.id} because it is not on the group's back end.`,
          );
        }
      }
    }
    await this.db.transaction(async (em) => {
      const set: Record<string, unknown> = {};
      if (input.name !== undefined) set['display_name'] = input.name;
      if (input.description !== undefined) set['display_description'] = input.description;
      if (membership) {
        if (!(await this.groups.transition(em, g.id, GROUP_OPERATIONS.beginUpdate, now)))
          throw invalidGroup(flavor, refusalOf(GROUP_OPERATIONS.beginUpdate, { id: g.id, status: g.status }));
        await this.groups.setMembership(em, input.removeVolumes, null, false, now);
        await this.groups.setMembership(
          em,
          input.addVolumes.filter((v) => !memberIds.has(v)),
          g.id,
          g.groupTypeId === CG_GROUP_TYPE_ID,
          now,
        );
        await this.groups.transition(em, g.id, GROUP_OPERATIONS.endUpdate, now, set);
      } else if (Object.keys(set).length > 0) {
        await this.groups.update(em, g.id, set, now);
      }
    });
  }

  /** Membership of a volume being created with `group_id` / `consistencygroup_id` (BS-7.7). */
  async memberFor(
    api: ApiRequest,
    groupId: string | null,
    consistencygroupId: string | null,
    volumeTypeId: string,
  ): Promise<{ groupId: string; consistencygroup: boolean } | null> {
    const ref = groupId ?? consistencygroupId;
    if (ref === null) return null;
    const flavor: GroupFlavor = groupId !== null ? 'group' : 'cg';
    const g = await this.groups.findById(this.db, ref, this.lookup.scope(api));
    if (!g) throw groupNotFound(flavor, ref);
    if (!GROUP_USABLE_STATUSES.includes(g.status))
      throw invalidGroup(
        flavor,
        `Group ${g.id} status must be available or in-use to create a volume in it, but current status is: ${g.status}.`,
      );
    if (!g.volumeTypeIds.includes(volumeTypeId)) {
      throw new InvalidInputError(
        `Invalid input received: Invalid volume_type provided: ${volumeTypeId}. The group ${g.id} does not support this volume type.`,
      );
    }
    return { groupId: g.id, consistencygroup: g.groupTypeId === CG_GROUP_TYPE_ID };
  }
}
