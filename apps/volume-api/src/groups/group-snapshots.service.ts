import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  accepts,
  cgsnapshotDetailView,
  GROUP_SNAPSHOT_BLOCKING_MEMBER_STATUSES,
  GROUP_SNAPSHOT_MEMBER_STATUSES,
  GROUP_SNAPSHOT_OPERATIONS,
  GROUP_SNAPSHOT_STATUSES,
  GROUP_USABLE_STATUSES,
  groupSnapshotDetailView,
  isJsonObject,
  isMigrating,
  isStatusIn,
  parseCreateGroupSnapshot,
  parseResetStatus,
  refusalOf,
  SNAPSHOT_OPERATIONS,
  snapshotQuotaDeltas,
  supports,
  type GroupSnapshotValue,
  type QuotaDelta,
} from '@osc/block-storage-domain';
import { SNAPSHOT_CREATE_JOB, SNAPSHOT_DELETE_JOB } from '@osc/contracts';
import { InvalidInputError, type InvalidStateError } from '@osc/errors';
import {
  GroupRepository,
  GroupSnapshotRepository,
  QuotaRepository,
  SnapshotRepository,
  type StoredSnapshot,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendJob } from '../jobs/outbox-job';
import {
  GroupLookupService,
  invalidGroup,
  invalidGroupSnapshot,
  type GroupFlavor,
} from './group-lookup.service';

/**
 * Group snapshots (3.14) and their cgsnapshot aliases (BS-7.11.7, BS-7.13): one real snapshot per
 * member volume made by its back end, the group snapshot settling from their outcome; delete takes
 * the member snapshots along; the admin `reset_status` (3.19).
 */
@Injectable()
export class GroupSnapshotsService {
  private readonly groups = new GroupRepository();
  private readonly groupSnapshots = new GroupSnapshotRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly lookup: GroupLookupService,
  ) {}

  async create(api: ApiRequest, flavor: GroupFlavor, body: unknown): Promise<Record<string, unknown>> {
    api.authorize('group:create_group_snapshot');
    const input = parseCreateGroupSnapshot(body, flavor === 'group' ? 'group_snapshot' : 'cgsnapshot');
    const g = await this.lookup.load(api, flavor, input.groupId);
    if (!GROUP_USABLE_STATUSES.includes(g.status))
      throw invalidGroup(
        flavor,
        `Group ${g.id} status must be available or in-use, but current status is: ${g.status}.`,
      );
    const members = await this.groups.members(this.db, g.id);
    for (const m of members) {
      const migrating = isMigrating(m.migrationStatus);
      if (m.host === null || isStatusIn(GROUP_SNAPSHOT_BLOCKING_MEMBER_STATUSES, m.status) || migrating) {
        throw invalidGroup(
          flavor,
          `Volume ${m.id} must be placed on a back end and not be in maintenance, error or migrating to take a group snapshot.`,
        );
      }
      if (!isStatusIn(GROUP_SNAPSHOT_MEMBER_STATUSES, m.status))
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

  async list(api: ApiRequest, flavor: GroupFlavor, detail: boolean): Promise<Record<string, unknown>> {
    api.authorize('group:get_all_group_snapshots');
    const page = this.lookup.page(api);
    const items: GroupSnapshotValue[] = [];
    for (const s of await this.groupSnapshots.list(this.db, this.lookup.listProject(api), page)) {
      const settled = await this.lookup.settleSnapshot(s);
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

  async show(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<Record<string, unknown>> {
    api.authorize('group:get_group_snapshot');
    const s = await this.lookup.loadSnapshot(api, flavor, id);
    return flavor === 'cg'
      ? { cgsnapshot: cgsnapshotDetailView(s) }
      : { group_snapshot: groupSnapshotDetailView(api.mv, s) };
  }

  async remove(api: ApiRequest, flavor: GroupFlavor, id: string): Promise<void> {
    const s = await this.lookup.loadSnapshot(api, flavor, id);
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

  async action(api: ApiRequest, id: string, body: unknown): Promise<void> {
    if (!isJsonObject(body) || Object.keys(body).length !== 1)
      throw new InvalidInputError('Invalid input received: the request body must name exactly one action.');
    const [name, args] = Object.entries(body)[0] as [string, unknown];
    if (name === 'reset_status' && supports(api.mv, 'group-snapshots.reset-status')) {
      const s = await this.lookup.loadSnapshot(api, 'group', id);
      api.authorize('group:reset_group_snapshot_status', s.projectId);
      const status = parseResetStatus(args, GROUP_SNAPSHOT_STATUSES);
      await this.groupSnapshots.compareAndSetStatus(this.db, s.id, [s.status], status, this.clock.now(), {
        pending: false,
      });
      return;
    }
    throw new InvalidInputError(`There is no such action: ${name.slice(0, 100)}`);
  }
}
