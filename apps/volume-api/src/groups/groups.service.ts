import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  cgsnapshotDetailView,
  consistencyGroupDetailView,
  groupDetailView,
  groupSnapshotDetailView,
  groupSummaryView,
  GROUP_SNAPSHOT_STATUSES,
  GROUP_STATUSES,
  isTrueish,
  isUuid,
  parseBoolean,
  parseCreateGroup,
  parseCreateGroupSnapshot,
  parseGroupFromSource,
  parseInteger,
  parseResetStatus,
  parseUpdateGroup,
  poolsForType,
  queryValue,
  settledGroupSnapshotStatus,
  settledGroupStatus,
  snapshotQuotaDeltas,
  supports,
  isJsonObject,
  volumeQuotaDeltas,
  type GroupSnapshotValue,
  type GroupValue,
  type PoolState,
  type QuotaDelta,
  VOLUME_OPERATIONS,
  isMigrating,
  SNAPSHOT_OPERATIONS,
  GROUP_OPERATIONS,
  GROUP_SETTLEMENTS,
  GROUP_SNAPSHOT_OPERATIONS,
  GROUP_SNAPSHOT_SETTLEMENTS,
  refusalOf,
  accepts,
} from '@osc/block-storage-domain';
import { SNAPSHOT_CREATE_JOB, SNAPSHOT_DELETE_JOB, VOLUME_DELETE_JOB } from '@osc/contracts';
import { InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import {
  CG_GROUP_TYPE_ID,
  GroupRepository,
  GroupSnapshotRepository,
  PoolRepository,
  QuotaRepository,
  SnapshotRepository,
  VolumeRepository,
  type SimplePage,
  type StoredSnapshot,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { backendJob, backendOf } from '../jobs/outbox-job';
import type { ApiRequest } from '../http/api-request';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { GroupTypesService } from './group-types.service';

/** Which API a request came through: generic groups (3.13+) or the consistency-group aliases. */
export type GroupFlavor = 'group' | 'cg';

const GROUP_QUOTA: QuotaDelta[] = [{ resource: 'groups', delta: 1 }];
const GROUP_QUOTA_RELEASE: QuotaDelta[] = [{ resource: 'groups', delta: -1 }];

const notFound = (flavor: GroupFlavor, id: string): NotFoundError =>
  flavor === 'group'
    ? new NotFoundError('Group', id, `Group ${id} could not be found.`)
    : new NotFoundError('ConsistencyGroup', id, `ConsistencyGroup ${id} could not be found.`);
const snapshotNotFound = (flavor: GroupFlavor, id: string): NotFoundError =>
  flavor === 'group'
    ? new NotFoundError('GroupSnapshot', id, `GroupSnapshot ${id} could not be found.`)
    : new NotFoundError('CgSnapshot', id, `CgSnapshot ${id} could not be found.`);
const invalidGroup = (flavor: GroupFlavor, reason: string): InvalidStateError =>
  new InvalidStateError(
    flavor === 'group' ? `Invalid group: ${reason}` : `Invalid ConsistencyGroup: ${reason}`,
  );
const invalidGroupSnapshot = (flavor: GroupFlavor, reason: string): InvalidStateError =>
  new InvalidStateError(
    flavor === 'group' ? `Invalid GroupSnapshot: ${reason}` : `Invalid CgSnapshot: ${reason}`,
  );

const REMOVABLE = ['available', 'in-use', 'error', 'error_deleting'];
const ADDABLE = ['available', 'in-use'];

/**
 * Generic groups, group snapshots and their consistency-group aliases (BS-7.11, BS-7.13, BS-8.4).
 * A group is placed when created (a pool able to host every listed type); member volumes and
 * snapshots are real volumes and snapshots handled by the back ends, and a group (snapshot) whose
 * members are still being created or deleted takes its outcome from theirs when next read.
 */
@Injectable()
export class GroupsService {
  private readonly groups = new GroupRepository();
  private readonly groupSnapshots = new GroupSnapshotRepository();
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly pools = new PoolRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly volumeTypes: VolumeTypesService,
    private readonly groupTypes: GroupTypesService,
  ) {}

  gate(
    api: ApiRequest,
    feature: 'groups.api' | 'group-snapshots.api' | 'groups.reset-status' | 'group-snapshots.reset-status',
  ): void {
    if (!supports(api.mv, feature))
      throw new NotFoundError('resource', feature, 'The resource could not be found.');
  }

  private scope(api: ApiRequest): string | null {
    return api.isAdmin ? null : api.ctx.projectId;
  }

  private page(api: ApiRequest): SimplePage {
    const limit = queryValue(api.query['limit']);
    const offset = queryValue(api.query['offset']);
    const marker = queryValue(api.query['marker']) ?? null;
    return {
      limit:
        limit === undefined
          ? this.config.maxLimit
          : Math.min(parseInteger(limit, 'limit', 0), this.config.maxLimit),
      offset: offset === undefined ? 0 : parseInteger(offset, 'offset', 0),
      marker: marker !== null && isUuid(marker) ? marker.toLowerCase() : null,
      desc: false,
    };
  }

  private listProject(api: ApiRequest): string | null {
    return api.isAdmin && isTrueish(queryValue(api.query['all_tenants'])) ? null : api.ctx.projectId;
  }

  // -------------------------------------------------------------------------------------------
  // Settling: outcomes of member work

  /** The group after its members' work settled it; null when its deletion completed. */
  private async settle(g: GroupValue): Promise<GroupValue | null> {
    if (!g.pending) return g;
    const members = await this.groups.members(this.db, g.id);
    const outcome = settledGroupStatus(
      g.status,
      members.map((m) => m.status),
    );
    if (outcome === null) return g;
    const now = this.clock.now();
    if (outcome === 'deleted') {
      await this.db.transaction(async (em) => {
        if (await this.groups.softDelete(em, g.id, ['deleting'], now))
          await this.quotas.apply(em, g.projectId, GROUP_QUOTA_RELEASE, 'in_use', false);
      });
      return null;
    }
    await this.groups.transition(this.db, g.id, GROUP_SETTLEMENTS[outcome], now, { pending: false });
    return { ...g, status: outcome, pending: false };
  }

  private async settleSnapshot(s: GroupSnapshotValue): Promise<GroupSnapshotValue | null> {
    if (!s.pending) return s;
    const members = await this.groupSnapshots.memberSnapshots(this.db, s.id);
    const outcome = settledGroupSnapshotStatus(
      s.status,
      members.map((m) => m.status),
    );
    if (outcome === null) return s;
    const now = this.clock.now();
    if (outcome === 'deleted') {
      await this.groupSnapshots.softDelete(this.db, s.id, now);
      return null;
    }
    await this.groupSnapshots.transition(this.db, s.id, GROUP_SNAPSHOT_SETTLEMENTS[outcome], now, {
      pending: false,
    });
    return { ...s, status: outcome, pending: false };
  }

  async load(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<GroupValue> {
    const g = isUuid(id) ? await this.groups.findById(this.db, id.toLowerCase(), this.scope(api)) : null;
    const settled = g ? await this.settle(g) : null;
    if (!settled) throw notFound(flavor, id);
    return settled;
  }

  private async loadSnapshot(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<GroupSnapshotValue> {
    const s = isUuid(id)
      ? await this.groupSnapshots.findById(this.db, id.toLowerCase(), this.scope(api))
      : null;
    const settled = s ? await this.settleSnapshot(s) : null;
    if (!settled) throw snapshotNotFound(flavor, id);
    return settled;
  }

  // -------------------------------------------------------------------------------------------
  // Groups

  /** The first fresh pool of the zone that every type's extra specs accept (null: none). */
  private async place(
    typeSpecs: readonly Readonly<Record<string, string | null>>[],
    zone: string,
  ): Promise<PoolState | null> {
    const since = new Date(this.clock.now().getTime() - this.config.serviceDownSeconds * 1000);
    let pools: PoolState[] = (await this.pools.listFresh(this.db, since))
      .filter((p) => p.availabilityZone === zone)
      .map((p) => ({
        name: p.name,
        backend: p.backend,
        availabilityZone: p.availabilityZone,
        capabilities: p.capabilities,
      }));
    for (const specs of typeSpecs) pools = poolsForType(pools, specs);
    return pools[0] ?? null;
  }

  private async knownZones(): Promise<Set<string>> {
    const since = new Date(this.clock.now().getTime() - this.config.serviceDownSeconds * 1000);
    const zones = new Set((await this.pools.listFresh(this.db, since)).map((p) => p.availabilityZone));
    zones.add(this.config.defaultAvailabilityZone);
    return zones;
  }

  /** Creates a group (generic or consistency group) and places it (BS-7.11.2, BS-8.4). */
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
    if (!(await this.knownZones()).has(az))
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
    const pool = await this.place(
      types.map((t) => t.extraSpecs),
      az,
    );
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
    const page = this.page(api);
    const projectId = this.listProject(api);
    if (page.marker === null && queryValue(api.query['marker']) !== undefined) {
      const m = queryValue(api.query['marker']) ?? '';
      throw new NotFoundError('Marker', m, `Marker ${m} could not be found.`);
    }
    const items: GroupValue[] = [];
    for (const g of await this.groups.list(this.db, projectId, page)) {
      const s = await this.settle(g);
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
    const g = await this.load(api, flavor, id);
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

  /** Name, description and membership changes (BS-7.11.6). */
  async update(api: ApiRequest, flavor: GroupFlavor, id: string, body: unknown): Promise<void> {
    const input = parseUpdateGroup(
      body,
      flavor === 'group' ? 'group' : 'consistencygroup',
      flavor === 'group' || supports(api.mv, 'consistencygroup.empty-name-update'),
    );
    const g = await this.load(api, flavor, id);
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
        if (!REMOVABLE.includes(m.status)) {
          throw new InvalidStateError(
            `Invalid volume: Cannot remove volume ${vid} from group ${g.id} because volume is in an invalid state: ${m.status}. Valid states are: ${REMOVABLE.join(', ')}.`,
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
        if (!ADDABLE.includes(v.status)) {
          throw new InvalidStateError(
            `Invalid volume: Cannot add volume ${v.id} to group ${g.id} because volume is in an invalid state: ${v.status}. Valid states are: ${ADDABLE.join(', ')}.`,
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

  /** Delete (BS-7.11.5): with `deleteVolumes` the member volumes go too. */
  async remove(api: ApiRequest, flavor: GroupFlavor, id: string, deleteVolumes: boolean): Promise<void> {
    const g = await this.load(api, flavor, id);
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

  async resetStatus(api: ApiRequest, id: string, args: unknown): Promise<void> {
    const g = await this.load(api, 'group', id);
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
        await this.remove(api, 'group', id, dv === undefined ? false : parseBoolean(dv, 'delete-volumes'));
        return;
      }
      case 'reset_status':
        this.gate(api, 'groups.reset-status');
        await this.resetStatus(api, id, args);
        return;
      case 'enable_replication':
      case 'disable_replication':
      case 'failover_replication':
      case 'list_replication_targets': {
        if (!supports(api.mv, 'groups.replication')) break;
        const g = await this.load(api, 'group', id);
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
      const s = await this.loadSnapshot(api, flavor, input.snapshotId);
      if (s.status !== 'available')
        throw invalidGroupSnapshot(
          flavor,
          `Group snapshot ${s.id} status must be available, but it is ${s.status}.`,
        );
      const src = await this.groups.findById(this.db, s.groupId, null);
      if (!src) throw notFound(flavor, s.groupId);
      source = src;
      const snaps = await this.groupSnapshots.memberSnapshots(this.db, s.id);
      plans = snaps.map((m) => ({
        size: m.size,
        typeId: m.volumeTypeId ?? src.volumeTypeIds[0] ?? '',
        ref: { snapshot_id: m.id },
        name: null,
      }));
    } else {
      source = await this.load(api, flavor, input.sourceGroupId ?? '');
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

  // -------------------------------------------------------------------------------------------
  // Group snapshots and cgsnapshots

  async createSnapshot(
    api: ApiRequest,
    flavor: GroupFlavor,
    body: unknown,
  ): Promise<Record<string, unknown>> {
    api.authorize('group:create_group_snapshot');
    const input = parseCreateGroupSnapshot(body, flavor === 'group' ? 'group_snapshot' : 'cgsnapshot');
    const g = await this.load(api, flavor, input.groupId);
    if (!['available', 'in-use'].includes(g.status))
      throw invalidGroup(
        flavor,
        `Group ${g.id} status must be available or in-use, but current status is: ${g.status}.`,
      );
    const members = await this.groups.members(this.db, g.id);
    for (const m of members) {
      const migrating = isMigrating(m.migrationStatus);
      if (m.host === null || ['maintenance', 'error'].includes(m.status) || migrating) {
        throw invalidGroup(
          flavor,
          `Volume ${m.id} must be placed on a back end and not be in maintenance, error or migrating to take a group snapshot.`,
        );
      }
      if (!['available', 'in-use'].includes(m.status))
        throw invalidGroup(
          flavor,
          `Volume ${m.id} status must be available or in-use, but it is ${m.status}.`,
        );
    }
    const now = this.clock.now();
    const gs: GroupSnapshotValue = {
      id: randomUUID(),
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      groupId: g.id,
      groupTypeId: g.groupTypeId,
      name: input.name,
      description: input.description,
      status: members.length === 0 ? 'available' : 'creating',
      pending: members.length > 0,
      createdAt: now,
    };
    await this.db.transaction(async (em) => {
      const deltas: QuotaDelta[] = members.flatMap((m) => snapshotQuotaDeltas(m.size, m.volumeTypeName));
      await this.quotas.apply(em, api.ctx.projectId, deltas);
      await this.groupSnapshots.insert(em, gs, now);
      for (const m of members) {
        const snapshot: StoredSnapshot = {
          id: randomUUID(),
          projectId: api.ctx.projectId,
          userId: api.ctx.userId,
          volumeId: m.id,
          volumeTypeId: m.volumeTypeId,
          name: `snapshot-${gs.id}`,
          description: null,
          size: m.size,
          status: 'creating',
          progress: '0%',
          metadata: {},
          groupSnapshotId: gs.id,
          consumesQuota: true,
          host: m.host,
          createdAt: now,
          updatedAt: null,
        };
        await this.snapshots.insert(em, snapshot);
        await this.groupSnapshots.attachSnapshot(em, snapshot.id, gs.id);
        await this.outbox.add(
          em,
          backendJob(m.host, {
            id: `snapshot-create-${snapshot.id}`,
            name: SNAPSHOT_CREATE_JOB,
            data: { snapshotId: snapshot.id },
            partitionKey: m.id,
          }),
        );
      }
    });
    if (flavor === 'cg') return { cgsnapshot: cgsnapshotDetailView(gs) };
    return { group_snapshot: { id: gs.id, name: gs.name, group_type_id: gs.groupTypeId } };
  }

  async listSnapshots(
    api: ApiRequest,
    flavor: GroupFlavor,
    detail: boolean,
  ): Promise<Record<string, unknown>> {
    api.authorize('group:get_all_group_snapshots');
    const page = this.page(api);
    const items: GroupSnapshotValue[] = [];
    for (const s of await this.groupSnapshots.list(this.db, this.listProject(api), page)) {
      const settled = await this.settleSnapshot(s);
      if (settled) items.push(settled);
    }
    const views = items.map((s) =>
      !detail
        ? { id: s.id, name: s.name }
        : flavor === 'cg'
          ? cgsnapshotDetailView(s)
          : groupSnapshotDetailView(api.mv, s),
    );
    return flavor === 'cg' ? { cgsnapshots: views } : { group_snapshots: views };
  }

  async showSnapshot(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<Record<string, unknown>> {
    api.authorize('group:get_group_snapshot');
    const s = await this.loadSnapshot(api, flavor, id);
    return flavor === 'cg'
      ? { cgsnapshot: cgsnapshotDetailView(s) }
      : { group_snapshot: groupSnapshotDetailView(api.mv, s) };
  }

  async removeSnapshot(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<void> {
    const s = await this.loadSnapshot(api, flavor, id);
    api.authorize('group:delete_group_snapshot', s.projectId);
    const refuse = (): InvalidStateError =>
      invalidGroupSnapshot(
        flavor,
        refusalOf(GROUP_SNAPSHOT_OPERATIONS.delete, { id: s.id, status: s.status }),
      );
    if (
      !accepts(GROUP_SNAPSHOT_OPERATIONS.delete, s.status) ||
      (await this.groups.creatingFrom(this.db, s.id))
    )
      throw refuse();
    const members = await this.groupSnapshots.memberSnapshots(this.db, s.id);
    const now = this.clock.now();
    await this.db.transaction(async (em) => {
      if (members.length === 0) {
        if (!(await this.groupSnapshots.transition(em, s.id, GROUP_SNAPSHOT_OPERATIONS.delete, now)))
          throw refuse();
        await this.groupSnapshots.softDelete(em, s.id, now);
        return;
      }
      if (
        !(await this.groupSnapshots.transition(em, s.id, GROUP_SNAPSHOT_OPERATIONS.delete, now, {
          pending: true,
        }))
      )
        throw refuse();
      for (const m of members) {
        if (m.status === 'deleting') continue;
        if (!(await this.snapshots.transition(em, m.id, SNAPSHOT_OPERATIONS.deleteGroupMember, now)))
          throw refuse();
        await this.outbox.add(
          em,
          backendJob(m.host, {
            id: `snapshot-delete-${m.id}`,
            name: SNAPSHOT_DELETE_JOB,
            data: { snapshotId: m.id },
            partitionKey: m.volumeId,
          }),
        );
      }
    });
  }

  async snapshotAction(api: ApiRequest, id: string, body: unknown): Promise<void> {
    if (!isJsonObject(body) || Object.keys(body).length !== 1)
      throw new InvalidInputError('Invalid input received: the request body must name exactly one action.');
    const [name, args] = Object.entries(body)[0] as [string, unknown];
    if (name === 'reset_status' && supports(api.mv, 'group-snapshots.reset-status')) {
      const s = await this.loadSnapshot(api, 'group', id);
      api.authorize('group:reset_group_snapshot_status', s.projectId);
      const status = parseResetStatus(args, GROUP_SNAPSHOT_STATUSES);
      await this.groupSnapshots.compareAndSetStatus(this.db, s.id, [s.status], status, this.clock.now(), {
        pending: false,
      });
      return;
    }
    throw new InvalidInputError(`There is no such action: ${name.slice(0, 100)}`);
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
    const g = await this.groups.findById(this.db, ref, this.scope(api));
    if (!g) throw notFound(flavor, ref);
    if (!['available', 'in-use'].includes(g.status))
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
