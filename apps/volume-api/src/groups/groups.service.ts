import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  accepts,
  choosePool,
  consistencyGroupDetailView,
  groupDetailView,
  groupSummaryView,
  GROUP_OPERATIONS,
  GROUP_STATUSES,
  isJsonObject,
  isMigrating,
  isTrueish,
  parseCreateGroup,
  queryValue,
  refusalOf,
  VOLUME_OPERATIONS,
  volumeQuotaDeltas,
  type GroupValue,
} from '@osc/block-storage-domain';
import { VOLUME_DELETE_JOB } from '@osc/contracts';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import {
  CG_GROUP_TYPE_ID,
  GroupRepository,
  QuotaRepository,
  VolumeRepository,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendJob } from '../jobs/outbox-job';
import { PoolsService } from '../pools/pools.service';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { GroupTypesService } from './group-types.service';
import {
  GROUP_QUOTA,
  GROUP_QUOTA_RELEASE,
  GroupLookupService,
  invalidGroup,
  type GroupFlavor,
} from './group-lookup.service';

/**
 * The life of a generic group and its consistency-group alias (BS-7.11, BS-8.4): create (placed
 * at once), list, show and delete, with `delete-volumes` taking the member volumes along. Member
 * volumes are real volumes handled by the back ends; a group whose members are being deleted
 * takes its outcome from theirs when next read (GroupLookupService).
 */
@Injectable()
export class GroupsService {
  private readonly groups = new GroupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly lookup: GroupLookupService,
    private readonly volumeTypes: VolumeTypesService,
    private readonly groupTypes: GroupTypesService,
    private readonly livePools: PoolsService,
  ) {}

  /**
   * Creates a group (generic or consistency group) and places it (BS-7.11.2, BS-8.4) with the
   * scheduler's `choosePool`. Cinder's API casts `create_group` to its scheduler; here the choice is
   * made before the 202 because clients read its outcome at once: the consistency-group answer
   * carries `available` or `error`, and a group read right after its creation is `available`.
   */
  async create(api: ApiRequest, flavor: GroupFlavor, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('group:create');
    let groupTypeId: string;
    let typeRefs: string[];
    let name: string | null;
    let description: string | null;
    let zone: string | null;
    if (flavor === 'group') {
      const input = parseCreateGroup(body);
      groupTypeId = (await this.groupTypes.find(input.groupType)).id;
      ({ name, description, availabilityZone: zone } = input);
      typeRefs = input.volumeTypes;
    } else {
      const cg =
        body !== null && typeof body === 'object' && !Array.isArray(body)
          ? (body as Record<string, unknown>)['consistencygroup']
          : undefined;
      if (!isJsonObject(cg))
        throw new InvalidInputError("Missing required element 'consistencygroup' in request body.");
      const input = parseCreateGroup({ group: { ...cg, group_type: CG_GROUP_TYPE_ID } });
      groupTypeId = CG_GROUP_TYPE_ID;
      ({ name, description, availabilityZone: zone } = input);
      typeRefs = input.volumeTypes;
    }
    const types = [];
    for (const ref of typeRefs) types.push(await this.volumeTypes.visibleType(api, ref));
    const typeIds = types.map((t) => t.id);
    const az = zone ?? this.config.defaultAvailabilityZone;
    if (!(await this.livePools.knownZones()).has(az))
      throw new InvalidInputError(
        `Invalid input received: Availability zone '${az.slice(0, 100)}' is invalid.`,
      );
    const now = this.clock.now();
    const group: GroupValue = {
      id: randomUUID(),
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      name,
      description,
      availabilityZone: az,
      host: null,
      status: 'creating',
      pending: false,
      groupTypeId,
      groupSnapshotId: null,
      sourceGroupId: null,
      replicationStatus: 'disabled',
      volumeTypeIds: [...new Set(typeIds)],
      createdAt: now,
    };
    const placement = choosePool(await this.livePools.schedulerView(), {
      kind: 'group',
      availabilityZone: az,
      typeSpecs: types.map((t) => t.extraSpecs),
      capacityWeightMultiplier: this.config.capacityWeightMultiplier,
    });
    const pool = placement.kind === 'placed' ? placement.pool : null;
    await this.db.transaction(async (em) => {
      await this.quotas.apply(em, api.ctx.projectId, GROUP_QUOTA);
      await this.groups.insert(em, group, now);
      await this.groups.transition(
        em,
        group.id,
        pool ? GROUP_OPERATIONS.placed : GROUP_OPERATIONS.placementFailed,
        now,
        { host: pool?.name ?? null },
      );
    });
    if (flavor === 'cg')
      return {
        consistencygroup: consistencyGroupDetailView({ ...group, status: pool ? 'available' : 'error' }),
      };
    return { group: groupSummaryView(group) };
  }

  async list(api: ApiRequest, flavor: GroupFlavor, detail: boolean): Promise<Record<string, unknown>> {
    api.authorize('group:get_all');
    const page = this.lookup.page(api);
    const projectId = this.lookup.listProject(api);
    if (page.marker === null && queryValue(api.query['marker']) !== undefined) {
      const m = queryValue(api.query['marker']) ?? '';
      throw new NotFoundError('Marker', m, `Marker ${m} could not be found.`);
    }
    const items: GroupValue[] = [];
    for (const g of await this.groups.list(this.db, projectId, page)) {
      const s = await this.lookup.settle(g);
      if (s) items.push(s);
    }
    const listVolumes = isTrueish(queryValue(api.query['list_volume']));
    const views: Record<string, unknown>[] = [];
    for (const g of items) {
      if (!detail) views.push(groupSummaryView(g));
      else if (flavor === 'cg') views.push(consistencyGroupDetailView(g));
      else
        views.push(
          groupDetailView(
            api.mv,
            g,
            listVolumes ? (await this.groups.members(this.db, g.id)).map((m) => m.id) : null,
          ),
        );
    }
    return flavor === 'cg' ? { consistencygroups: views } : { groups: views };
  }

  async show(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<Record<string, unknown>> {
    api.authorize('group:get');
    const g = await this.lookup.load(api, flavor, id);
    if (flavor === 'cg') return { consistencygroup: consistencyGroupDetailView(g) };
    const listVolumes = isTrueish(queryValue(api.query['list_volume']));
    return {
      group: groupDetailView(
        api.mv,
        g,
        listVolumes ? (await this.groups.members(this.db, g.id)).map((m) => m.id) : null,
      ),
    };
  }

  /** Delete (BS-7.11.5): with `deleteVolumes` the member volumes go too. */
  async remove(api: ApiRequest, flavor: GroupFlavor, id: string, deleteVolumes: boolean): Promise<void> {
    const g = await this.lookup.load(api, flavor, id);
    api.authorize('group:delete', g.projectId);
    const now = this.clock.now();
    const members = await this.groups.members(this.db, g.id);
    if (g.host === null && members.length === 0) {
      await this.db.transaction(async (em) => {
        if (await this.groups.softDelete(em, g.id, [...GROUP_STATUSES], now))
          await this.quotas.apply(em, g.projectId, GROUP_QUOTA_RELEASE, 'in_use', false);
      });
      return;
    }
    const operation = deleteVolumes ? GROUP_OPERATIONS.deleteWithVolumes : GROUP_OPERATIONS.delete;
    const refusal = refusalOf(operation, { id: g.id, status: g.status });
    if (!deleteVolumes && !accepts(operation, g.status)) throw invalidGroup(flavor, refusal);
    if (await this.groups.hasGroupSnapshots(this.db, g.id))
      throw invalidGroup(flavor, 'Group has existing snapshots.');
    if (!deleteVolumes && members.length > 0) {
      throw invalidGroup(
        flavor,
        `Group ${g.id} still contains volumes. The delete-volumes flag is required to delete it.`,
      );
    }
    for (const m of members) {
      if (m.attached)
        throw invalidGroup(flavor, `Volume ${m.id} in group ${g.id} is attached. Need to detach first.`);
      if (m.snapshotCount > 0)
        throw invalidGroup(flavor, `Volume ${m.id} in group ${g.id} still has dependent snapshots.`);
      if (isMigrating(m.migrationStatus))
        throw invalidGroup(flavor, `Volume ${m.id} in group ${g.id} is migrating.`);
    }
    await this.db.transaction(async (em) => {
      if (members.length === 0) {
        if (!(await this.groups.softDelete(em, g.id, operation.sources, now)))
          throw invalidGroup(flavor, refusal);
        await this.quotas.apply(em, g.projectId, GROUP_QUOTA_RELEASE, 'in_use', false);
        return;
      }
      if (!(await this.groups.transition(em, g.id, operation, now, { pending: true })))
        throw invalidGroup(flavor, refusal);
      for (const m of members) {
        if (m.status === 'deleting') continue;
        if (!(await this.volumes.transition(em, m.id, VOLUME_OPERATIONS.deleteGroupMember, now))) {
          throw invalidGroup(
            flavor,
            `Volume ${m.id} in group ${g.id} is in status ${m.status} and cannot be deleted.`,
          );
        }
        await this.enqueueVolumeDelete(em, m.id, m.host);
      }
    });
  }

  private async enqueueVolumeDelete(em: EntityManager, volumeId: string, host: string | null): Promise<void> {
    if (host === null) {
      const removed = await this.volumes.softDeleteUnplaced(em, volumeId, this.clock.now());
      if (removed?.consumesQuota) {
        await this.quotas.apply(
          em,
          removed.projectId,
          volumeQuotaDeltas(removed.size, removed.volumeTypeName, -1),
          'in_use',
          false,
        );
      }
      return;
    }
    await this.outbox.add(
      em,
      backendJob(host, {
        id: `volume-delete-${volumeId}`,
        name: VOLUME_DELETE_JOB,
        data: { volumeId },
        partitionKey: volumeId,
      }),
    );
  }
}
