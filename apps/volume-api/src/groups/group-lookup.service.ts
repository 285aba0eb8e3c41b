import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  GROUP_OPERATIONS,
  GROUP_SETTLEMENTS,
  GROUP_SNAPSHOT_SETTLEMENTS,
  isTrueish,
  isUuid,
  parseInteger,
  queryValue,
  settledGroupSnapshotStatus,
  settledGroupStatus,
  supports,
  type GroupSnapshotValue,
  type GroupValue,
  type QuotaDelta,
} from '@osc/block-storage-domain';
import { InvalidStateError, NotFoundError } from '@osc/errors';
import {
  GroupRepository,
  GroupSnapshotRepository,
  QuotaRepository,
  type SimplePage,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

/** Which API a request came through: generic groups (3.13+) or the consistency-group aliases. */
export type GroupFlavor = 'group' | 'cg';

export const GROUP_QUOTA: QuotaDelta[] = [{ resource: 'groups', delta: 1 }];
export const GROUP_QUOTA_RELEASE: QuotaDelta[] = [{ resource: 'groups', delta: -1 }];

export const groupNotFound = (flavor: GroupFlavor, id: string): NotFoundError =>
  flavor === 'group'
    ? new NotFoundError('Group', id, `Group ${id} could not be found.`)
    : new NotFoundError('ConsistencyGroup', id, `ConsistencyGroup ${id} could not be found.`);
const snapshotNotFound = (flavor: GroupFlavor, id: string): NotFoundError =>
  flavor === 'group'
    ? new NotFoundError('GroupSnapshot', id, `GroupSnapshot ${id} could not be found.`)
    : new NotFoundError('CgSnapshot', id, `CgSnapshot ${id} could not be found.`);
export const invalidGroup = (flavor: GroupFlavor, reason: string): InvalidStateError =>
  new InvalidStateError(
    flavor === 'group' ? `Invalid group: ${reason}` : `Invalid ConsistencyGroup: ${reason}`,
  );
export const invalidGroupSnapshot = (flavor: GroupFlavor, reason: string): InvalidStateError =>
  new InvalidStateError(
    flavor === 'group' ? `Invalid GroupSnapshot: ${reason}` : `Invalid CgSnapshot: ${reason}`,
  );

/**
 * Reading groups and group snapshots (BS-7.11, BS-7.13): the microversion gates, the request's
 * scope and page, and the settling of a group (snapshot) whose members are still being created or
 * deleted: it takes its outcome from theirs when next read, as every read goes through here.
 */
@Injectable()
export class GroupLookupService {
  private readonly groups = new GroupRepository();
  private readonly groupSnapshots = new GroupSnapshotRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
  ) {}

  gate(
    api: ApiRequest,
    feature: 'groups.api' | 'group-snapshots.api' | 'groups.reset-status' | 'group-snapshots.reset-status',
  ): void {
    if (!supports(api.mv, feature))
      throw new NotFoundError('resource', feature, 'The resource could not be found.');
  }

  /** The project a lookup is confined to: none for an admin. */
  scope(api: ApiRequest): string | null {
    return api.isAdmin ? null : api.ctx.projectId;
  }

  page(api: ApiRequest): SimplePage {
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

  /** The project a list shows: every project for an admin asking `all_tenants`. */
  listProject(api: ApiRequest): string | null {
    return api.isAdmin && isTrueish(queryValue(api.query['all_tenants'])) ? null : api.ctx.projectId;
  }

  /** The group after its members' work settled it; null when its deletion completed. */
  async settle(g: GroupValue): Promise<GroupValue | null> {
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
        if (await this.groups.softDelete(em, g.id, [GROUP_OPERATIONS.delete.target], now))
          await this.quotas.apply(em, g.projectId, GROUP_QUOTA_RELEASE, 'in_use', false);
      });
      return null;
    }
    await this.groups.transition(this.db, g.id, GROUP_SETTLEMENTS[outcome], now, { pending: false });
    return { ...g, status: outcome, pending: false };
  }

  /** The group snapshot after its member snapshots settled it; null when its deletion completed. */
  async settleSnapshot(s: GroupSnapshotValue): Promise<GroupSnapshotValue | null> {
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

  /** A visible group, settled; 404 in the flavor's words otherwise. */
  async load(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<GroupValue> {
    const g = isUuid(id) ? await this.groups.findById(this.db, id.toLowerCase(), this.scope(api)) : null;
    const settled = g ? await this.settle(g) : null;
    if (!settled) throw groupNotFound(flavor, id);
    return settled;
  }

  /** A visible group snapshot, settled; 404 in the flavor's words otherwise. */
  async loadSnapshot(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<GroupSnapshotValue> {
    const s = isUuid(id)
      ? await this.groupSnapshots.findById(this.db, id.toLowerCase(), this.scope(api))
      : null;
    const settled = s ? await this.settleSnapshot(s) : null;
    if (!settled) throw snapshotNotFound(flavor, id);
    return settled;
  }
}
