import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  GROUP_OPERATIONS,
  groupSummaryView,
  parseGroupFromSource,
  type GroupValue,
} from '@osc/block-storage-domain';
import {
  CG_GROUP_TYPE_ID,
  GroupRepository,
  GroupSnapshotRepository,
  QuotaRepository,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import {
  GROUP_QUOTA,
  GroupLookupService,
  groupNotFound,
  invalidGroup,
  invalidGroupSnapshot,
  type GroupFlavor,
} from './group-lookup.service';

/**
 * `create-from-src` (3.14) and `consistencygroups/create_from_src` (BS-7.11.4, BS-7.13): a new group
 * on the source's back end whose members are new volumes cloned from the source group's volumes or
 * created from the group snapshot's snapshots; the group settles from their outcome.
 */
@Injectable()
export class GroupFromSourceService {
  private readonly groups = new GroupRepository();
  private readonly groupSnapshots = new GroupSnapshotRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly lookup: GroupLookupService,
  ) {}

  /** Group (or CG) from a group snapshot or another group (BS-7.11.4, BS-7.13): real volumes from real sources. */
  async createFromSource(
    api: ApiRequest,
    flavor: GroupFlavor,
    body: unknown,
    createVolume: (
      api: ApiRequest,
      body: unknown,
      member: { groupId: string; consistencygroup: boolean },
    ) => Promise<unknown>,
  ): Promise<Record<string, unknown>> {
    api.authorize('group:create');
    const input = parseGroupFromSource(
      body,
      flavor === 'group' ? 'create-from-src' : 'consistencygroup-from-src',
    );
    let source: GroupValue;
    let plans: {
      size: number;
      typeId: string;
      ref: { snapshot_id: string } | { source_volid: string };
      name: string | null;
    }[];
    if (input.snapshotId !== null) {
      const s = await this.lookup.loadSnapshot(api, flavor, input.snapshotId);
      if (s.status !== 'available')
        throw invalidGroupSnapshot(
          flavor,
          `Group snapshot ${s.id} status must be available, but it is ${s.status}.`,
        );
      const src = await this.groups.findById(this.db, s.groupId, null);
      if (!src) throw groupNotFound(flavor, s.groupId);
      source = src;
      const snaps = await this.groupSnapshots.memberSnapshots(this.db, s.id);
      plans = snaps.map((m) => ({
        size: m.size,
        typeId: m.volumeTypeId ?? src.volumeTypeIds[0] ?? '',
        ref: { snapshot_id: m.id },
        name: null,
      }));
    } else {
      source = await this.lookup.load(api, flavor, input.sourceGroupId ?? '');
      if (source.status !== 'available')
        throw invalidGroup(
          flavor,
          `Source group ${source.id} status must be available, but current status is: ${source.status}.`,
        );
      plans = (await this.groups.members(this.db, source.id)).map((m) => ({
        size: m.size,
        typeId: m.volumeTypeId,
        ref: { source_volid: m.id },
        name: null,
      }));
    }
    const now = this.clock.now();
    const group: GroupValue = {
      id: randomUUID(),
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      name: input.name,
      description: input.description,
      availabilityZone: source.availabilityZone,
      host: source.host,
      status: 'creating',
      pending: plans.length > 0,
      groupTypeId: source.groupTypeId,
      groupSnapshotId: input.snapshotId,
      sourceGroupId: input.sourceGroupId,
      replicationStatus: 'disabled',
      volumeTypeIds: source.volumeTypeIds,
      createdAt: now,
    };
    await this.db.transaction(async (em) => {
      await this.quotas.apply(em, api.ctx.projectId, GROUP_QUOTA);
      await this.groups.insert(em, group, now);
      if (plans.length === 0) await this.groups.transition(em, group.id, GROUP_OPERATIONS.created, now);
    });
    try {
      for (const p of plans) {
        await createVolume(
          api,
          { volume: { size: p.size, volume_type: p.typeId, name: p.name, ...p.ref } },
          { groupId: group.id, consistencygroup: group.groupTypeId === CG_GROUP_TYPE_ID },
        );
      }
    } catch (e) {
      await this.groups.transition(this.db, group.id, GROUP_OPERATIONS.createFailed, this.clock.now(), {
        pending: false,
      });
      throw e;
    }
    return flavor === 'cg'
      ? { consistencygroup: groupSummaryView(group) }
      : { group: groupSummaryView(group) };
  }
}
