import { createHash, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  admitFilters,
  checkPerVolumeSize,
  formatMicroversion,
  compileVolumeFilters,
  isTrueish,
  nextPageLink,
  parseActionBody,
  parseBoolean,
  parseBooleanFilter,
  parseCreateVolume,
  parseExtendArgs,
  parseMetaItemBody,
  parseMetadataBody,
  parsePaging,
  parseUpdateVolume,
  parseMigrateArgs,
  parseRetypeArgs,
  parseRevertArgs,
  placeVolume,
  poolsForType,
  isMigrating,
  MIGRATION_OPERATIONS,
  refusalOf,
  VOLUME_OPERATIONS,
  isMultiattachSpec,
  queryValue,
  VOLUME_RETYPE_SOURCES,
  SORT_ALIASES,
  supports,
  VOLUME_CLONEABLE_STATUSES,
  VOLUME_RESETTABLE_STATUSES,
  VOLUME_SORT_KEYS,
  VOLUME_EXTEND_ATTEMPTS,
  volumeDetailPlan,
  volumeDetailView,
  volumeQuotaDeltas,
  volumeSummaryView,
  type VolumeStatus,
  SNAPSHOT_OPERATIONS,
} from '@osc/block-storage-domain';
import {
  BLOCK_STORAGE_SCHEDULER_QUEUE,
  SCHEDULE_VOLUME_COMMAND,
  VOLUME_DELETE_JOB,
  VOLUME_EXTEND_JOB,
  VOLUME_REVERT_JOB,
  VOLUME_MIGRATE_JOB,
  VOLUME_UNMANAGE_JOB,
  MIGRATION_JOB_METADATA_KEY,
  volumeUnmanageJobId,
  backendJobQueue,
  volumeMigrateJobId,
  type ScheduleVolumePayload,
  type VolumeMigrateJob,
  type VolumeSourceRef,
} from '@osc/contracts';
import { ConflictError, InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import {
  AttachmentRepository,
  QuotaRepository,
  SnapshotRepository,
  VolumeRepository,
  VolumeTypeRepository,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { BackupRepository } from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { AttachmentsService } from '../attachments/attachments.service';
import { GroupsService } from '../groups/groups.service';
import { PoolsService } from '../pools/pools.controller';
import type { ApiRequest } from '../http/api-request';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

export const volumeNotFound = (id: string): NotFoundError => new NotFoundError('Volume', id, `Volume ${id} could not be found.`);

/** `host@backend#pool` → `host@backend`. */
export const backendOf = (host: string): string => host.split('#', 1)[0] ?? host;

/** Volume actions this service implements (BS-1.4: anything else is "no such action"). */
export const VOLUME_ACTIONS = [
  'os-extend',
  'os-reset_status',
  'os-force_delete',
  'os-set_bootable',
  'os-update_readonly_flag',
  'os-reserve',
  'os-unreserve',
  'os-begin_detaching',
  'os-roll_detaching',
  'os-detach',
  'os-attach',
  'os-initialize_connection',
  'os-terminate_connection',
  'os-force_detach',
  'os-retype',
  'os-migrate_volume',
  'os-unmanage',
  'revert',
] as const;

/**
 * The volume lifecycle of spec 7.7: creation records `creating` and the scheduling command in one
 * transaction (BS-7.7.7), deletion and extension move the status by compare-and-set and hand the
 * work to the back end that owns the volume.
 */
@Injectable()
export class VolumesService {
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly typeRows = new VolumeTypeRepository();
  private readonly attachmentRows = new AttachmentRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly types: VolumeTypesService,
    private readonly groups: GroupsService,
    private readonly livePools: PoolsService,
    private readonly attach: AttachmentsService,
  ) {}

  private scope(api: ApiRequest): string | null {
    return api.isAdmin ? null : api.ctx.projectId;
  }

  async load(api: ApiRequest, id: string): Promise<StoredVolume> {
    const v = await this.volumes.findById(this.db, id, this.scope(api));
    if (!v) throw volumeNotFound(id);
    return v;
  }

  async create(api: ApiRequest, body: unknown, member?: { groupId: string; consistencygroup: boolean }): Promise<Record<string, unknown>> {
    api.authorize('volume:create');
    const input = parseCreateVolume(body, api.mv);
    if (input.imageRef !== null) throw new NotFoundError('Image', input.imageRef, `Image ${input.imageRef} could not be found.`);
    const scope = this.scope(api);
    let source: VolumeSourceRef = { kind: 'none' };
    let sourceSize: number | null = null;
    let sourceTypeId: string | null = null;
    let sourceZone: string | null = null;
    if (input.snapshotId !== null) {
      const s = await this.snapshots.findById(this.db, input.snapshotId, scope);
      if (!s) throw new NotFoundError('Snapshot', input.snapshotId, `Snapshot ${input.snapshotId} could not be found.`);
      if (s.status !== 'available') throw new InvalidInputError(`Invalid snapshot: Originating snapshot status must be one of 'available' values, but it is ${s.status}.`);
      const parent = await this.volumes.findById(this.db, s.volumeId, null);
      source = { kind: 'snapshot', id: s.id, backend: s.host === null ? null : backendOf(s.host) };
      sourceSize = s.size;
      sourceTypeId = s.volumeTypeId ?? parent?.volumeTypeId ?? null;
      sourceZone = parent?.availabilityZone ?? null;
    } else if (input.sourceVolid !== null) {
      const src = await this.volumes.findById(this.db, input.sourceVolid, scope);
      if (!src) throw volumeNotFound(input.sourceVolid);
      if (!VOLUME_CLONEABLE_STATUSES.includes(src.status)) {
        throw new InvalidInputError(`Invalid volume: Source volume status must be one of ${VOLUME_CLONEABLE_STATUSES.join(', ')}, but it is ${src.status}.`);
      }
      source = { kind: 'volume', id: src.id, backend: src.host === null ? null : backendOf(src.host) };
      sourceSize = src.size;
      sourceTypeId = src.volumeTypeId;
      sourceZone = src.availabilityZone;
    } else if (input.backupId !== null) {
      // 3.47: the back end restores the backup's bytes into the new volume (BS-7.7.3).
      const b = await new BackupRepository().findById(this.db, input.backupId, scope);
      if (!b) throw new NotFoundError('Backup', input.backupId, `Backup ${input.backupId} could not be found.`);
      if (b.status !== 'available') throw new InvalidInputError(`Invalid volume: Backup status must be available to create a volume from it, but it is ${b.status}.`);
      source = { kind: 'backup', id: b.id, backend: b.host };
      sourceSize = b.size;
    }
    const size = input.size ?? sourceSize ?? 0;
    if (sourceSize !== null && size < sourceSize) {
      throw new InvalidInputError(
        `Invalid input received: Volume size ${size}GB cannot be smaller than the ${source.kind === 'snapshot' ? 'snapshot' : 'source volume'} size ${sourceSize}GB.`,
      );
    }
    const type =
      input.volumeType !== null
        ? await this.types.visibleType(api, input.volumeType)
        : sourceTypeId !== null
          ? ((await this.types.visibleType(api, sourceTypeId).catch(() => null)) ?? (await this.types.defaultType(api.ctx.projectId)))
          : await this.types.defaultType(api.ctx.projectId);
    // Group membership (group_id 3.13, consistencygroup_id): the group must exist and support the type.
    const membership = member ?? (await this.groups.memberFor(api, input.groupId, input.consistencygroupId, type.id));
    const multiattach = isMultiattachSpec(type.extraSpecs);
    const encryption = await this.types.encryptionOf(type.id);
    if (encryption && multiattach) throw new InvalidInputError('Invalid input received: multiattach is not supported for encrypted volume types.');

    const typeZones = (type.extraSpecs['RESKEY:availability_zones'] ?? '')
      .split(',')
      .map((z) => z.trim())
      .filter((z) => z.length > 0);
    const zone = input.availabilityZone ?? sourceZone ?? (typeZones.length > 0 && !typeZones.includes(this.config.defaultAvailabilityZone) ? (typeZones[0] ?? this.config.defaultAvailabilityZone) : this.config.defaultAvailabilityZone);
    const known = await this.livePools.knownZones();
    if (!known.has(zone) || (typeZones.length > 0 && !typeZones.includes(zone))) {
      throw new InvalidInputError(`Invalid input received: Availability zone '${zone.slice(0, 100)}' is invalid.`);
    }

    const limits = await this.quotas.limits(this.db, api.ctx.projectId);
    checkPerVolumeSize(size, limits);
    const now = this.clock.now();
    const id = randomUUID();
    const volume: StoredVolume = {
      id,
      projectId: api.ctx.projectId,
      userId: api.ctx.userId,
      name: input.name,
      description: input.description,
      size,
      status: 'creating',
      availabilityZone: zone,
      volumeTypeId: type.id,
      volumeTypeName: type.name,
      snapshotId: input.snapshotId,
      sourceVolid: input.sourceVolid,
      metadata: input.metadata,
      // A hidden admin key: a back end restarted mid-create restores the backup again (BS-8.6.2).
      adminMetadata: source.kind === 'backup' ? { restore_source_backup_id: source.id } : {},
      imageMetadata: null,
      bootable: false,
      encrypted: encryption !== null,
      encryptionKeyId: encryption !== null ? randomUUID() : null,
      multiattach,
      host: null,
      clusterName: null,
      providerId: null,
      serviceUuid: null,
      sharedTargets: false,
      migrationStatus: null,
      nameId: null,
      replicationStatus: 'disabled',
      consistencygroupId: membership?.consistencygroup ? membership.groupId : null,
      groupId: membership?.groupId ?? null,
      consumesQuota: true,
      attachments: [],
      attachStatus: 'detached',
      createdAt: now,
      updatedAt: null,
      errorReason: null,
      deleted: false,
    };
    const schedule: ScheduleVolumePayload = {
      volumeId: id,
      size,
      availabilityZone: zone,
      extraSpecs: type.extraSpecs,
      source,
      excludedPools: [],
      attempt: 1,
      requestId: api.ctx.requestId,
    };
    await this.db.transaction(async (em) => {
      await this.quotas.apply(em, api.ctx.projectId, volumeQuotaDeltas(size, type.name));
      await this.volumes.insert(em, volume);
      await this.outbox.add(em, {
        destination: 'bus',
        queue: BLOCK_STORAGE_SCHEDULER_QUEUE,
        message: { id: `schedule-${id}-1`, type: SCHEDULE_VOLUME_COMMAND, payload: schedule, headers: { 'x-request-id': api.ctx.requestId } },
        partitionKey: id,
      });
    });
    return { volume: volumeDetailView(api.view, volume, 'create') };
  }

  /**
   * The detail list as JSON text, rendered by the database (volumeDetailPlan): the same body as
   * `list(api, true)` without parsing and re-serialising ~130 KB pages.
   */
  async detailJson(api: ApiRequest): Promise<string> {
    const q = this.listQuery(api);
    const projectId = await this.checkedListProject(api, q);
    const page = await this.volumes.listDetailJson(this.db, { projectId, hideMigrationTargets: !api.isAdmin }, q.filters, q.paging, q.withCount, volumeDetailPlan(api.view));
    let out = `{"volumes":[${page.items}]`;
    if (page.lastId !== null && page.size === q.paging.limit) out += `,"volumes_links":${JSON.stringify([nextPageLink(api.links, api.collectionPath, api.query, page.lastId)])}`;
    if (page.count !== null) out += `,"count":${page.count}`;
    return `${out}}`;
  }

  private listQuery(api: ApiRequest) {
    api.authorize('volume:get_all');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const admitted = admitFilters('volume', api.query, { mv: api.mv, isAdmin: api.isAdmin });
    if (!allTenants) delete admitted['project_id'];
    const filters = compileVolumeFilters(admitted, api.mv);
    const paging = parsePaging(api.query, { maxLimit: this.config.maxLimit, sortKeys: VOLUME_SORT_KEYS, sortAliases: SORT_ALIASES });
    const withCountRaw = queryValue(api.query['with_count']);
    const withCount = supports(api.mv, 'list.with-count') && withCountRaw !== undefined && parseBooleanFilter('with_count', withCountRaw, api.mv);
    return { allTenants, filters, paging, withCount };
  }

  private async checkedListProject(api: ApiRequest, q: { allTenants: boolean; paging: { marker: string | null } }): Promise<string | null> {
    const projectId = q.allTenants ? null : api.ctx.projectId;
    if (q.paging.marker !== null && !(await this.volumes.findById(this.db, q.paging.marker, projectId))) {
      throw new NotFoundError('Marker', q.paging.marker, `Marker ${q.paging.marker} could not be found.`);
    }
    return projectId;
  }

  async list(api: ApiRequest, detail: boolean): Promise<Record<string, unknown>> {
    api.authorize('volume:get_all');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const admitted = admitFilters('volume', api.query, { mv: api.mv, isAdmin: api.isAdmin });
    if (!allTenants) delete admitted['project_id'];
    const filters = compileVolumeFilters(admitted, api.mv);
    const paging = parsePaging(api.query, { maxLimit: this.config.maxLimit, sortKeys: VOLUME_SORT_KEYS, sortAliases: SORT_ALIASES });
    const withCountRaw = queryValue(api.query['with_count']);
    const withCount = supports(api.mv, 'list.with-count') && withCountRaw !== undefined && parseBooleanFilter('with_count', withCountRaw, api.mv);
    const projectId = allTenants ? null : api.ctx.projectId;
    if (paging.marker !== null && !(await this.volumes.findById(this.db, paging.marker, projectId))) {
      throw new NotFoundError('Marker', paging.marker, `Marker ${paging.marker} could not be found.`);
    }
    const page = await this.volumes.list(this.db, { projectId, hideMigrationTargets: !api.isAdmin }, filters, paging, withCount);
    const out: Record<string, unknown> = {
      volumes: page.items.map((v) => (detail ? volumeDetailView(api.view, v, 'list') : volumeSummaryView(api.view, v))),
    };
    const last = page.items[page.items.length - 1];
    if (last && page.items.length === paging.limit) out['volumes_links'] = [nextPageLink(api.links, api.collectionPath, api.query, last.id)];
    if (page.count !== null) out['count'] = page.count;
    return out;
  }

  async summary(api: ApiRequest): Promise<Record<string, unknown>> {
    if (!supports(api.mv, 'volume.summary')) throw new NotFoundError('resource', 'summary', 'The resource could not be found.');
    api.authorize('volume:get_all');
    const allTenants = api.isAdmin && isTrueish(queryValue(api.query['all_tenants']));
    const s = await this.volumes.summary(this.db, allTenants ? null : api.ctx.projectId);
    const out: Record<string, unknown> = { total_count: s.totalCount, total_size: s.totalSize };
    if (supports(api.mv, 'volume.summary-metadata')) out['metadata'] = s.metadata;
    return { 'volume-summary': out };
  }

  async show(api: ApiRequest, id: string): Promise<Record<string, unknown>> {
    api.authorize('volume:get');
    return { volume: volumeDetailView(api.view, await this.load(api, id), 'show') };
  }

  async update(api: ApiRequest, id: string, body: unknown): Promise<Record<string, unknown>> {
    const input = parseUpdateVolume(body, api.mv);
    const v = await this.load(api, id);
    api.authorize('volume:update', v.projectId);
    if (v.status === 'maintenance') throw new InvalidInputError(`Invalid volume: Volume ${id} is in maintenance.`);
    const set: Record<string, unknown> = {};
    if (input.name !== undefined) set['display_name'] = input.name;
    if (input.description !== undefined) set['display_description'] = input.description;
    if (input.metadata !== undefined) set['metadata'] = input.metadata;
    await this.volumes.update(this.db, id, set, this.clock.now());
    return { volume: volumeDetailView(api.view, await this.load(api, id), 'update') };
  }

  async remove(api: ApiRequest, id: string): Promise<void> {
    const force = queryValue(api.query['force']);
    const forced = supports(api.mv, 'volume.force-delete-param') && force !== undefined && parseBoolean(force, 'force');
    const cascade = queryValue(api.query['cascade']);
    const cascaded = cascade !== undefined && parseBoolean(cascade, 'cascade');
    const v = await this.load(api, id);
    api.authorize(forced ? 'volume:force_delete' : 'volume:delete', v.projectId);
    await this.deleteVolume(v, { force: forced, cascade: cascaded });
  }

  /** BS-7.7.12 / BS-8.1.2. `force` skips only the status condition. */
  private async deleteVolume(v: StoredVolume, opts: { force: boolean; cascade: boolean }): Promise<void> {
    const now = this.clock.now();
    if (v.host === null) {
      const done = await this.db.transaction(async (em) => {
        const removed = await this.volumes.softDeleteUnplaced(em, v.id, now);
        if (!removed) return false;
        if (removed.consumesQuota) await this.quotas.apply(em, removed.projectId, volumeQuotaDeltas(removed.size, removed.volumeTypeName ?? v.volumeTypeName, -1), 'in_use', false);
        return true;
      });
      if (done) return;
      v = (await this.volumes.findById(this.db, v.id, null)) ?? v;
      if (v.host === null) return;
    }
    const operation = opts.force ? VOLUME_OPERATIONS.forceDelete : VOLUME_OPERATIONS.delete;
    const refuse = (): InvalidStateError => new InvalidStateError(refusalOf(operation, { id: v.id, status: v.status }));
    if (v.attachStatus === 'attached' || isMigrating(v.migrationStatus) || v.groupId !== null || v.consistencygroupId !== null) throw refuse();
    const snaps = await this.volumes.snapshotsOf(this.db, v.id);
    if (snaps.length > 0 && !opts.cascade) throw refuse();
    if (opts.cascade && snaps.some((s) => !(SNAPSHOT_OPERATIONS.deleteWithVolume.sources as readonly string[]).includes(s.status))) {
      throw new InvalidStateError('Invalid volume: Snapshots of the volume must be available, error or deleting to delete it with cascade.');
    }
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, operation, now))) throw refuse();
      for (const s of snaps) await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.deleteWithVolume, now);
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: backendJobQueue(backendOf(v.host ?? '')),
        job: { id: `volume-delete-${v.id}`, name: VOLUME_DELETE_JOB, data: { volumeId: v.id }, attempts: 3, backoff: { type: 'exponential', delayMs: 200 } },
        partitionKey: v.id,
      });
    });
  }

  /**
   * `os-unmanage` (admin): Cinder's delete conditions (status available, error, error_restoring,
   * error_extending or error_managing; not attached, migrating, in a group or with snapshots) and
   * no encryption; → `unmanaging`, and the owning back end removes the row and releases the quota
   * while the file stays where it is. A volume no back end ever received has nothing to keep: it
   * is removed as by a delete.
   */
  private async unmanage(v: StoredVolume): Promise<void> {
    if (v.host === null) return this.deleteVolume(v, { force: false, cascade: false });
    if (v.encryptionKeyId !== null) throw new InvalidInputError('Invalid volume: Unmanaging encrypted volumes is not supported.');
    const refuse = (): InvalidStateError => new InvalidStateError(refusalOf(VOLUME_OPERATIONS.unmanage, { id: v.id, status: v.status }));
    if (v.attachStatus === 'attached' || isMigrating(v.migrationStatus) || v.groupId !== null || v.consistencygroupId !== null) throw refuse();
    if ((await this.volumes.countActiveSnapshots(this.db, v.id)) > 0) throw refuse();
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.unmanage, this.clock.now()))) throw refuse();
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: backendJobQueue(backendOf(v.host ?? '')),
        job: { id: volumeUnmanageJobId(v.id), name: VOLUME_UNMANAGE_JOB, data: { volumeId: v.id }, attempts: 3, backoff: { type: 'exponential', delayMs: 200 } },
        partitionKey: v.id,
      });
    });
  }

  async action(api: ApiRequest, id: string, body: unknown): Promise<{ status: number; body?: unknown }> {
    const { action, args } = parseActionBody(body, VOLUME_ACTIONS);
    const v = await this.load(api, id);
    switch (action) {
      case 'os-extend':
        api.authorize('volume:extend', v.projectId);
        await this.extend(api, v, args);
        return { status: 202 };
      case 'os-reset_status':
        api.authorize('volume_extension:volume_admin_actions:reset_status', v.projectId);
        await this.resetStatus(v, args);
        return { status: 202 };
      case 'os-force_delete':
        api.authorize('volume_extension:volume_admin_actions:force_delete', v.projectId);
        await this.deleteVolume(v, { force: true, cascade: false });
        return { status: 202 };
      case 'os-set_bootable': {
        api.authorize('volume:update', v.projectId);
        const a = expectArgs(args, 'os-set_bootable');
        if (!('bootable' in a)) throw new InvalidInputError("Invalid input for field/attribute os-set_bootable. Value: {}. 'bootable' is a required property");
        await this.volumes.update(this.db, v.id, { bootable: parseBoolean(a['bootable'], 'bootable') }, this.clock.now());
        return { status: 200 };
      }
      case 'os-update_readonly_flag': {
        api.authorize('volume:update', v.projectId);
        const a = expectArgs(args, 'os-update_readonly_flag');
        if (!('readonly' in a)) throw new InvalidInputError("Invalid input for field/attribute os-update_readonly_flag. Value: {}. 'readonly' is a required property");
        const readonly = parseBoolean(a['readonly'], 'readonly');
        await this.volumes.update(this.db, v.id, { admin_metadata: { ...v.adminMetadata, readonly: readonly ? 'True' : 'False' } }, this.clock.now());
        return { status: 202 };
      }
      case 'os-reserve':
        api.authorize('volume_extension:volume_actions:reserve', v.projectId);
        await this.reserve(v);
        return { status: 202 };
      case 'os-unreserve':
        api.authorize('volume_extension:volume_actions:unreserve', v.projectId);
        await this.volumes.transition(this.db, v.id, v.attachments.length > 0 ? VOLUME_OPERATIONS.unreserveToInUse : VOLUME_OPERATIONS.unreserveToAvailable, this.clock.now());
        return { status: 202 };
      case 'os-begin_detaching':
        api.authorize('volume_extension:volume_actions:begin_detaching', v.projectId);
        await this.beginDetaching(v);
        return { status: 202 };
      case 'os-roll_detaching':
        api.authorize('volume_extension:volume_actions:roll_detaching', v.projectId);
        await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.rollDetaching, this.clock.now());
        return { status: 202 };
      case 'os-detach':
        api.authorize('volume_extension:volume_actions:detach', v.projectId);
        await this.attach.detach(api, v, args);
        return { status: 202 };
      case 'os-attach':
        await this.attach.attach(api, v, args);
        return { status: 202 };
      case 'os-initialize_connection':
        return { status: 200, body: await this.attach.initializeConnection(api, v, args) };
      case 'os-terminate_connection':
        await this.attach.terminateConnection(api, v, args);
        return { status: 202 };
      case 'os-force_detach':
        await this.attach.forceDetach(api, v, args);
        return { status: 202 };
      case 'os-retype':
        api.authorize('volume:retype', v.projectId);
        await this.retype(v, args);
        return { status: 202 };
      case 'os-migrate_volume':
        api.authorize('volume_extension:volume_admin_actions:migrate_volume', v.projectId);
        await this.migrate(api, v, args);
        return { status: 202 };
      case 'os-unmanage':
        api.authorize('volume_extension:volume_unmanage', v.projectId);
        await this.unmanage(v);
        return { status: 202 };
      case 'revert':
        if (!supports(api.mv, 'volume.revert')) {
          throw new NotFoundError('version', formatMicroversion(api.mv), `API version ${formatMicroversion(api.mv)} is not supported on this method.`);
        }
        api.authorize('volume:revert_to_snapshot', v.projectId);
        await this.revert(v, args);
        return { status: 202 };
      default:
        throw new InvalidInputError(`There is no such action: ${action}`);
    }
  }

  /** Cinder: available (or in-use for multiattach) → attaching; anything else is 400. */
  private async reserve(v: StoredVolume): Promise<void> {
    const operation = v.multiattach ? VOLUME_OPERATIONS.reserveMultiattach : VOLUME_OPERATIONS.reserve;
    if (!(await this.volumes.transition(this.db, v.id, operation, this.clock.now()))) {
      const now = (await this.volumes.findById(this.db, v.id, null))?.status ?? v.status;
      throw new InvalidStateError(refusalOf(operation, { id: v.id, status: now }));
    }
  }

  private async beginDetaching(v: StoredVolume): Promise<void> {
    const refused = new InvalidStateError(refusalOf(VOLUME_OPERATIONS.beginDetaching, { id: v.id, status: v.status }));
    if (v.attachStatus !== 'attached' || isMigrating(v.migrationStatus)) throw refused;
    if (!(await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.beginDetaching, this.clock.now()))) throw refused;
  }

  /**
   * BS-8.1.4. When the volume's pool satisfies the new type the type changes in place (no data
   * moves), in one transaction: the compare-and-set of Cinder's conditions (available or in-use,
   * not migrating, not in a group, different type) and the per-type quota moved from the old type to
   * the new one (413 when the new type's quota is full). Otherwise the volume must move: with
   * `migration_policy` never (the default) Cinder's scheduler finds no valid host and leaves the
   * volume as it was (202, type unchanged); with on-demand the scheduler's filters and weigher pick
   * another pool for the new type and the volume migrates there (`retyping`, migration_status
   * starting → migrating → success), the type changing when the bytes have moved. No pool fits:
   * 202 and the type stays, as in Cinder.
   */
  private async retype(v: StoredVolume, args: unknown): Promise<void> {
    const { newType, migrationPolicy } = parseRetypeArgs(args);
    // Cinder looks the type up elevated (private types too): unknown → 404.
    const type = await this.typeRows.findAny(this.db, newType);
    if (!type) {
      throw isUuidLike(newType)
        ? new NotFoundError('VolumeType', newType, `Volume type ${newType} could not be found.`)
        : new NotFoundError('VolumeType', newType, `Volume type with name ${newType} could not be found.`);
    }
    const limits = await this.quotas.limits(this.db, v.projectId);
    checkPerVolumeSize(v.size, limits);
    const targetMultiattach = isMultiattachSpec(type.extraSpecs);
    if (targetMultiattach !== v.multiattach && v.status !== 'available') {
      throw new InvalidInputError(
        `Invalid input received: Invalid volume_type passed, retypes affecting multiattach are only allowed on available volumes, the specified volume however currently has a status of: ${v.status}.`,
      );
    }
    const encryption = await this.types.encryptionOf(type.id);
    if (targetMultiattach && encryption) throw new InvalidInputError('Invalid input received: Retype requested both encryption and multi-attach, which is not supported.');
    const refused = new InvalidStateError(
      'Invalid volume: Retype needs volume to be in available or in-use state, not be part of an active migration or a consistency group, requested type has to be different that the one from the volume, and for in-use volumes front-end qos specs cannot change.',
    );
    if (!VOLUME_RETYPE_SOURCES.includes(v.status) || isMigrating(v.migrationStatus) || v.groupId !== null || v.consistencygroupId !== null || v.volumeTypeId === type.id) throw refused;
    const sameEncryption = (encryption !== null) === v.encrypted;
    const pools = await this.livePools.fresh();
    const pool = pools.find((p) => p.name === v.host);
    const fitsInPlace = sameEncryption && pool !== undefined && poolsForType([pool], type.extraSpecs).length > 0;
    if (!fitsInPlace) {
      // Cinder's scheduler finds no valid host (policy never, or no other pool fits the type), puts
      // the volume back in its previous status and records no user message: the type simply stays.
      if (migrationPolicy !== 'on-demand' || !sameEncryption) return;
      const disabled = await this.livePools.disabledBackends();
      const candidates = pools.filter((p) => !disabled.has(p.backend));
      const placed = placeVolume(candidates, { size: v.size, availabilityZone: v.availabilityZone, extraSpecs: type.extraSpecs, excludedPools: v.host === null ? [] : [v.host] });
      if (placed.kind !== 'placed') return;
      if ((await this.volumes.snapshotsOf(this.db, v.id)).length > 0) throw new InvalidStateError(`Invalid volume: Volume ${v.id} must not have snapshots to be retyped with a migration.`);
      const deltas = [...volumeQuotaDeltas(v.size, v.volumeTypeName, -1), ...volumeQuotaDeltas(v.size, type.name)].filter((d) => d.resource.includes('_') && d.delta > 0);
      await this.startMigration(v, placed.pool.name, { newTypeId: type.id, holdStatus: 'retyping', deltas }, refused);
      return;
    }
    await this.db.transaction(async (em) => {
      const moved = [...volumeQuotaDeltas(v.size, v.volumeTypeName, -1), ...volumeQuotaDeltas(v.size, type.name)].filter((d) => d.resource.includes('_'));
      await this.quotas.apply(em, v.projectId, moved);
      // Compare-and-set on the status the checks above saw: a concurrent change makes this a refusal.
      const done = await this.volumes.compareAndSetStatus(em, v.id, [v.status], v.status, this.clock.now(), { volume_type_id: type.id, multiattach: targetMultiattach });
      if (!done) throw refused;
    });
  }

  /**
   * `os-migrate_volume` (admin): Cinder's API checks — available or in-use, not migrating, no
   * snapshots, not in a group, a destination back end that is up and not the current one — then
   * migration_status `starting` (status `maintenance` with lock_volume) and the migration job on the
   * destination back end, in one transaction. Whether the destination satisfies the volume's type
   * and has room is decided there, as Cinder's scheduler does after the 202: if not, the migration
   * ends in migration_status `error`. Without a compute service there is no attached copy to move,
   * so force_host_copy changes nothing: every migration here copies the bytes.
   */
  private async migrate(api: ApiRequest, v: StoredVolume, args: unknown): Promise<void> {
    const { host, cluster, lockVolume } = parseMigrateArgs(args, api.mv);
    if (!VOLUME_RETYPE_SOURCES.includes(v.status)) {
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} status must be available or in-use, but current status is: ${v.status}.`);
    }
    if (isMigrating(v.migrationStatus)) throw new InvalidStateError(`Invalid volume: Volume ${v.id} is already part of an active migration.`);
    if ((await this.volumes.snapshotsOf(this.db, v.id)).length > 0) throw new InvalidStateError(`Invalid volume: Volume ${v.id} must not have snapshots.`);
    if (v.groupId !== null || v.consistencygroupId !== null) throw new InvalidStateError(`Invalid volume: Volume ${v.id} must not be part of a group.`);
    // Clusters are not used by this service: a named cluster never has a service.
    // Cinder looks among the enabled cinder-volume services that are up.
    const disabled = await this.livePools.disabledBackends();
    const target = host === null ? undefined : (await this.livePools.fresh()).find((p) => (p.name === host || p.backend === host) && !disabled.has(p.backend));
    if (!target) throw new InvalidInputError(`Invalid host: No available service named ${host ?? cluster ?? ''}`);
    if (v.host !== null && target.backend === backendOf(v.host)) throw new InvalidInputError('Invalid host: Destination host must be different than the current host.');
    const refused = new InvalidStateError(`Invalid volume: Volume ${v.id} status must be available or in-use and it must not be part of an active migration.`);
    await this.startMigration(v, target.name, { newTypeId: null, holdStatus: lockVolume ? 'maintenance' : (v.status as 'available' | 'in-use'), deltas: [] }, refused);
  }

  /**
   * Records the start of a migration and its job on the destination back end in one transaction:
   * status → `holdStatus`, migration_status `starting`, the job kept in admin metadata (so the
   * destination can drive it again after a restart) and the per-type quota of a retype reserved.
   */
  private async startMigration(
    v: StoredVolume,
    destination: string,
    opts: { newTypeId: string | null; holdStatus: VolumeMigrateJob['holdStatus']; deltas: ReturnType<typeof volumeQuotaDeltas> },
    refused: Error,
  ): Promise<void> {
    const now = this.clock.now();
    const reservationId = opts.deltas.length > 0 ? randomUUID() : null;
    const job: VolumeMigrateJob = {
      volumeId: v.id,
      source: v.host ?? '',
      destination,
      newTypeId: opts.newTypeId,
      reservationId,
      holdStatus: opts.holdStatus,
      previousStatus: v.status as 'available' | 'in-use',
      startedAt: now.getTime(),
    };
    await this.db.transaction(async (em) => {
      if (reservationId !== null) await this.quotas.reserve(em, { id: reservationId, projectId: v.projectId, volumeId: v.id, operation: 'migrate', newSize: null, deltas: opts.deltas, now });
      const started = await this.volumes.transitionMigration(em, v.id, MIGRATION_OPERATIONS.start, { from: v.status, to: opts.holdStatus }, now);
      if (!started) throw refused;
      await this.volumes.setAdminMetadataKey(em, v.id, MIGRATION_JOB_METADATA_KEY, JSON.stringify(job));
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: backendJobQueue(backendOf(destination)),
        job: { id: volumeMigrateJobId(job), name: VOLUME_MIGRATE_JOB, data: job, attempts: 3, backoff: { type: 'exponential', delayMs: 500 } },
        partitionKey: v.id,
      });
    });
  }


  /**
   * BS-8.1.10 (3.40): the snapshot must be the volume's latest and of the volume's size (400);
   * volume available → reverting and snapshot available → restoring (else 409), then the back end
   * copies the snapshot's bytes over the volume and returns both to available.
   */
  private async revert(v: StoredVolume, args: unknown): Promise<void> {
    const { snapshotId } = parseRevertArgs(args);
    const snaps = await this.volumes.snapshotsOf(this.db, v.id);
    const time = (t: string | Date): number => new Date(t).getTime();
    const latest = [...snaps].sort((a, b) => time(b.createdAt) - time(a.createdAt) || (b.id < a.id ? -1 : 1))[0];
    if (!latest) throw new InvalidInputError(`Volume ${v.id} doesn't have any snapshots.`);
    if (snapshotId === null || snapshotId !== latest.id) throw new InvalidInputError(`Specified snapshot ${snapshotId ?? 'None'} is None or not the latest one of volume ${v.id}.`);
    if (v.size !== latest.size) {
      throw new InvalidInputError(`Can't revert volume ${v.id} to its latest snapshot ${latest.id}. The volume size must be equal to the snapshot size.`);
    }
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      if (!(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.revert, now))) {
        throw new ConflictError(refusalOf(VOLUME_OPERATIONS.revert, { id: v.id, status: v.status, snapshot: latest.id }));
      }
      if (!(await this.snapshots.transition(em, latest.id, SNAPSHOT_OPERATIONS.revert, now))) {
        throw new ConflictError(refusalOf(SNAPSHOT_OPERATIONS.revert, { id: latest.id, status: latest.status, volume: v.id }));
      }
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: backendJobQueue(backendOf(v.host ?? '')),
        job: { id: `volume-revert-${v.id}-${latest.id}-${now.getTime()}`, name: VOLUME_REVERT_JOB, data: { volumeId: v.id, snapshotId: latest.id }, attempts: 3, backoff: { type: 'exponential', delayMs: 200 } },
        partitionKey: v.id,
      });
    });
  }

  /** BS-7.7.14 / BS-8.1.3: quota for the increase is reserved now and committed by the back end. */
  private async extend(api: ApiRequest, v: StoredVolume, args: unknown): Promise<void> {
    const { newSize } = parseExtendArgs(args);
    const operation = supports(api.mv, 'volume.extend-in-use') ? VOLUME_OPERATIONS.extendInUse : VOLUME_OPERATIONS.extend;
    if (!(operation.sources as readonly VolumeStatus[]).includes(v.status)) {
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} status must be ${operation.sources.join(' or ')} to extend, currently ${v.status}.`);
    }
    // The bytes being copied to another back end must not change under the copy.
    if (isMigrating(v.migrationStatus)) throw new InvalidStateError(`Invalid volume: Volume ${v.id} is part of an active migration and cannot be extended.`);
    if (newSize <= v.size) {
      throw new InvalidInputError(`Invalid input received: New size for extend must be greater than current size. (current: ${v.size}, extended: ${newSize}).`);
    }
    checkPerVolumeSize(newSize, await this.quotas.limits(this.db, v.projectId));
    const delta = newSize - v.size;
    const deltas = volumeQuotaDeltas(delta, v.volumeTypeName).filter((d) => d.resource.startsWith('gigabytes'));
    await this.db.transaction(async (em: EntityManager) => {
      // The reservation is a row (with the target size) so the back end, its recovery after a
      // restart, or a final job failure commits or releases exactly these units once.
      await this.quotas.reserve(em, { id: randomUUID(), projectId: v.projectId, volumeId: v.id, operation: 'extend', newSize, deltas, now: this.clock.now() });
      if (!(await this.volumes.transition(em, v.id, operation, this.clock.now()))) {
        throw new InvalidStateError(refusalOf(operation, { id: v.id, status: v.status }));
      }
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: backendJobQueue(backendOf(v.host ?? '')),
        job: { id: `volume-extend-${v.id}-${newSize}`, name: VOLUME_EXTEND_JOB, data: { volumeId: v.id, newSize }, attempts: VOLUME_EXTEND_ATTEMPTS, backoff: { type: 'exponential', delayMs: 200 } },
        partitionKey: v.id,
      });
    });
  }

  /** BS-8.1.11 (admin): deleting, error_deleting and detaching cannot be set (BS-13.4). */
  private async resetStatus(v: StoredVolume, args: unknown): Promise<void> {
    const a = expectArgs(args, 'os-reset_status');
    const status = a['status'];
    if (status === undefined && a['attach_status'] === undefined && a['migration_status'] === undefined) {
      throw new InvalidInputError('Invalid input received: Must specify status, attach_status or migration_status.');
    }
    const set: Record<string, unknown> = {};
    if (status !== undefined) {
      if (typeof status !== 'string' || !(VOLUME_RESETTABLE_STATUSES as readonly string[]).includes(status)) {
        throw new InvalidInputError(`Invalid input received: status must be one of ${VOLUME_RESETTABLE_STATUSES.join(', ')}.`);
      }
      if (status === 'in-use' && v.attachments.length === 0) throw new InvalidInputError('Invalid input received: a volume without attachments cannot be in-use.');
      set['status'] = status;
    }
    if (a['attach_status'] !== undefined) {
      if (a['attach_status'] !== 'attached' && a['attach_status'] !== 'detached') throw new InvalidInputError('Invalid input received: attach_status must be attached or detached.');
      set['attach_status'] = a['attach_status'];
    }
    if (a['migration_status'] !== undefined) {
      const ms = a['migration_status'];
      if (!['migrating', 'error', 'success', 'completing', 'none', 'starting'].includes(String(ms))) throw new InvalidInputError('Invalid input received: invalid migration_status.');
      set['migration_status'] = ms === 'none' ? null : ms;
    }
    await this.db.transaction(async (em) => {
      await this.volumes.update(em, v.id, set, this.clock.now());
      // Cinder's `_clean_volume_attachment`: attach_status detached removes every attachment.
      if (set['attach_status'] === 'detached') await this.attachmentRows.softDeleteOfVolume(em, v.id, this.clock.now());
      // Resetting a volume out of `extending` abandons the extend: its reserved quota goes back.
      if (v.status === 'extending' && set['status'] !== undefined && set['status'] !== 'extending') await this.quotas.releaseReservationsOf(em, v.id);
    });
  }

  // ---- metadata (BS-7.7.13) ----

  async getMetadata(api: ApiRequest, id: string): Promise<{ body: Record<string, unknown>; etag: string }> {
    const v = await this.load(api, id);
    api.authorize('volume:get_volume_metadata', v.projectId);
    return { body: { metadata: { ...v.metadata } }, etag: metadataEtag(v.metadata) };
  }

  /**
   * POST (merge) or PUT (replace) of the whole metadata, each one UPDATE. `ifMatch` (the ETags of
   * an If-Match header, from 3.15) is checked against the metadata read here and that same
   * metadata is required by the UPDATE, so a change in between refuses the write too; null means
   * 412 Precondition Failed (checked before the body, as Cinder does).
   */
  async writeMetadata(api: ApiRequest, id: string, body: unknown, replace: boolean, ifMatch: readonly string[] | null = null): Promise<Record<string, unknown> | null> {
    let expected: Record<string, string> | null = null;
    if (ifMatch !== null) {
      const v = await this.load(api, id);
      api.authorize('volume:get_volume_metadata', v.projectId);
      if (!ifMatch.includes(metadataEtag(v.metadata)) && !ifMatch.includes('*')) return null;
      expected = ifMatch.includes('*') ? null : v.metadata;
    }
    const meta = parseMetadataBody(body);
    const v = await this.load(api, id);
    api.authorize(replace ? 'volume:update_volume_metadata' : 'volume:create_volume_metadata', v.projectId);
    const now = this.clock.now();
    const next = replace ? await this.volumes.metadata.replace(this.db, v.id, meta, now, expected) : await this.volumes.metadata.merge(this.db, v.id, meta, now);
    if (next === null) {
      if (expected !== null) return null;
      throw volumeNotFound(id);
    }
    return { metadata: next };
  }

  async showMetadataItem(api: ApiRequest, id: string, key: string): Promise<Record<string, unknown>> {
    const v = await this.load(api, id);
    api.authorize('volume:get_volume_metadata', v.projectId);
    if (!(key in v.metadata)) throw new NotFoundError('Metadata', key, `Metadata item was not found for volume ${id} and key ${key}.`);
    return { meta: { [key]: v.metadata[key] } };
  }

  async updateMetadataItem(api: ApiRequest, id: string, key: string, body: unknown): Promise<Record<string, unknown>> {
    const pair = parseMetaItemBody(key, body);
    const v = await this.load(api, id);
    api.authorize('volume:update_volume_metadata', v.projectId);
    if ((await this.volumes.metadata.merge(this.db, v.id, { [key]: pair.value }, this.clock.now())) === null) throw volumeNotFound(id);
    return { meta: { [key]: pair.value } };
  }

  async deleteMetadataItem(api: ApiRequest, id: string, key: string): Promise<void> {
    const v = await this.load(api, id);
    api.authorize('volume:delete_volume_metadata', v.projectId);
    if (!(await this.volumes.metadata.deleteKey(this.db, v.id, key, this.clock.now()))) {
      throw new NotFoundError('Metadata', key, `Metadata item was not found for volume ${id} and key ${key}.`);
    }
  }
}

/** Cinder's metadata ETag (3.15): the MD5 of the `{"metadata": …}` body. */
const metadataEtag = (metadata: Readonly<Record<string, string>>): string => createHash('md5').update(JSON.stringify({ metadata: { ...metadata } })).digest('hex');

const isUuidLike = (s: string): boolean => /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s);

function expectArgs(args: unknown, action: string): Record<string, unknown> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw new InvalidInputError(`Invalid input for field/attribute ${action}. Value: ${JSON.stringify(args) ?? 'None'}. not of type 'object'`);
  }
  return args as Record<string, unknown>;
}
