import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  checkPerVolumeSize,
  isMultiattachSpec,
  parseCreateVolume,
  VOLUME_CLONEABLE_STATUSES,
  volumeDetailView,
  volumeQuotaDeltas,
} from '@osc/block-storage-domain';
import {
  BLOCK_STORAGE_SCHEDULER_QUEUE,
  SCHEDULE_VOLUME_COMMAND,
  type ScheduleVolumePayload,
  type VolumeSourceRef,
} from '@osc/contracts';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import {
  BackupRepository,
  QuotaRepository,
  SnapshotRepository,
  VolumeRepository,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { GroupMembershipService } from '../groups/group-membership.service';
import type { ApiRequest } from '../http/api-request';
import { backendOf } from '../jobs/outbox-job';
import { PoolsService } from '../pools/pools.service';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';
import { volumeNotFound, volumeScope } from './volume-lookup';

/**
 * Volume creation (BS-7.7.3, BS-7.7.7): the source (snapshot, volume or backup), type, zone,
 * group membership and quota are checked here; the `creating` row, the quota and the scheduling
 * command are written in one transaction and the scheduler places the volume after the 202.
 */
@Injectable()
export class VolumeCreateService {
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly backups = new BackupRepository();
  private readonly quotas = new QuotaRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly types: VolumeTypesService,
    private readonly groups: GroupMembershipService,
    private readonly livePools: PoolsService,
  ) {}

  async create(
    api: ApiRequest,
    body: unknown,
    member?: { groupId: string; consistencygroup: boolean },
  ): Promise<Record<string, unknown>> {
    api.authorize('volume:create');
    const input = parseCreateVolume(body, api.mv);
    if (input.imageRef !== null)
      throw new NotFoundError('Image', input.imageRef, `Image ${input.imageRef} could not be found.`);
    const scope = volumeScope(api);
    let source: VolumeSourceRef = { kind: 'none' };
    let sourceSize: number | null = null;
    let sourceTypeId: string | null = null;
    let sourceZone: string | null = null;
    if (input.snapshotId !== null) {
      const s = await this.snapshots.findById(this.db, input.snapshotId, scope);
      if (!s)
        throw new NotFoundError(
          'Snapshot',
          input.snapshotId,
          `Snapshot ${input.snapshotId} could not be found.`,
        );
      if (s.status !== 'available')
        throw new InvalidInputError(
          `Invalid snapshot: Originating snapshot status must be one of 'available' values, but it is ${s.status}.`,
        );
      const parent = await this.volumes.findById(this.db, s.volumeId, null);
      source = { kind: 'snapshot', id: s.id, backend: s.host === null ? null : backendOf(s.host) };
      sourceSize = s.size;
      sourceTypeId = s.volumeTypeId ?? parent?.volumeTypeId ?? null;
      sourceZone = parent?.availabilityZone ?? null;
    } else if (input.sourceVolid !== null) {
      const src = await this.volumes.findById(this.db, input.sourceVolid, scope);
      if (!src) throw volumeNotFound(input.sourceVolid);
      if (!VOLUME_CLONEABLE_STATUSES.includes(src.status)) {
        throw new InvalidInputError(
          `Invalid volume: Source volume status must be one of ${VOLUME_CLONEABLE_STATUSES.join(', ')}, but it is ${src.status}.`,
        );
      }
      source = { kind: 'volume', id: src.id, backend: src.host === null ? null : backendOf(src.host) };
      sourceSize = src.size;
      sourceTypeId = src.volumeTypeId;
      sourceZone = src.availabilityZone;
    } else if (input.backupId !== null) {
      // 3.47: the back end restores the backup's bytes into the new volume (BS-7.7.3).
      const b = await this.backups.findById(this.db, input.backupId, scope);
      if (!b)
        throw new NotFoundError('Backup', input.backupId, `Backup ${input.backupId} could not be found.`);
      if (b.status !== 'available')
        throw new InvalidInputError(
          `Invalid volume: Backup status must be available to create a volume from it, but it is ${b.status}.`,
        );
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
          ? ((await this.types.visibleType(api, sourceTypeId).catch(() => null)) ??
            (await this.types.defaultType(api.ctx.projectId)))
          : await this.types.defaultType(api.ctx.projectId);
    // Group membership (group_id 3.13, consistencygroup_id): the group must exist and support the type.
    const membership =
      member ?? (await this.groups.memberFor(api, input.groupId, input.consistencygroupId, type.id));
    const multiattach = isMultiattachSpec(type.extraSpecs);
    const encryption = await this.types.encryptionOf(type.id);
    if (encryption && multiattach)
      throw new InvalidInputError(
        'Invalid input received: multiattach is not supported for encrypted volume types.',
      );

    const typeZones = (type.extraSpecs['RESKEY:availability_zones'] ?? '')
      .split(',')
      .map((z) => z.trim())
      .filter((z) => z.length > 0);
    const zone =
      input.availabilityZone ??
      sourceZone ??
      (typeZones.length > 0 && !typeZones.includes(this.config.defaultAvailabilityZone)
        ? (typeZones[0] ?? this.config.defaultAvailabilityZone)
        : this.config.defaultAvailabilityZone);
    const known = await this.livePools.knownZones();
    if (!known.has(zone) || (typeZones.length > 0 && !typeZones.includes(zone))) {
      throw new InvalidInputError(
        `Invalid input received: Availability zone '${zone.slice(0, 100)}' is invalid.`,
      );
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
        message: {
          id: `schedule-${id}-1`,
          type: SCHEDULE_VOLUME_COMMAND,
          payload: schedule,
          headers: { 'x-request-id': api.ctx.requestId },
        },
        partitionKey: id,
      });
    });
    return { volume: volumeDetailView(api.view, volume, 'create') };
  }
}
