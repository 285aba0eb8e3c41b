import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  checkPerVolumeSize,
  choosePool,
  isMigrating,
  isMultiattachSpec,
  MIGRATION_OPERATIONS,
  parseMigrateArgs,
  parseRetypeArgs,
  VOLUME_RETYPE_SOURCES,
  volumeQuotaDeltas,
} from '@osc/block-storage-domain';
import {
  MIGRATION_JOB_METADATA_KEY,
  VOLUME_MIGRATE_JOB,
  volumeMigrateJobId,
  type VolumeMigrateJob,
} from '@osc/contracts';
import { InvalidInputError, InvalidStateError, NotFoundError } from '@osc/errors';
import {
  QuotaRepository,
  VolumeRepository,
  VolumeTypeRepository,
  type StoredVolume,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import type { ApiRequest } from '../http/api-request';
import { backendJob, backendOf } from '../jobs/outbox-job';
import { PoolsService } from '../pools/pools.service';
import { VolumeTypesService } from '../types/volume-types.service';
import { VOLUME_API_CONFIG, type VolumeApiConfig } from '../volume-api.tokens';

const isUuidLike = (s: string): boolean =>
  /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(s);

/**
 * Moving a volume (BS-8.1.4, BS-7.7): `os-retype` in place or by migration, `os-migrate_volume`
 * to another back end. The API records the start (MIGRATION_OPERATIONS.start) and the job in
 * one transaction; the destination back end copies and completes or fails it.
 */
@Injectable()
export class VolumeMigrationService {
  private readonly volumes = new VolumeRepository();
  private readonly quotas = new QuotaRepository();
  private readonly typeRows = new VolumeTypeRepository();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_API_CONFIG) private readonly config: VolumeApiConfig,
    private readonly types: VolumeTypesService,
    private readonly livePools: PoolsService,
  ) {}

  /**
   * BS-8.1.4. When the volume's pool satisfies the new type the type changes in place (no data
   * moves), in one transaction: the compare-and-set of Cinder's conditions (available or in-use,
   * not migrating, not in a group, different type) and the per-type quota moved from the old type to
   * the new one (413 when the new type's quota is full). Otherwise the volume must move: with
   * `migration_policy` never (the default) Cinder's scheduler finds no valid host and leaves the
   * volume as it was (202, type unchanged); with on-demand the scheduler's filters and weigher pick
   * another pool for the new type and the volume migrates there (`retyping`, migration_status
   * starting → migrating → success), the type changing when the bytes have moved. No pool fits:
   * 202 and the type stays, as in Cinder. Cinder's API casts the retype to its scheduler; here
   * the API makes the same choice itself with the domain's `choosePool` (the one scheduler-stats
   * places new volumes with), because clients observe its outcome in the response: an in-place
   * retype is visible at once and a volume with snapshots is refused with 400 only when it would move.
   */
  async retype(v: StoredVolume, args: unknown): Promise<void> {
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
    if (targetMultiattach && encryption)
      throw new InvalidInputError(
        'Invalid input received: Retype requested both encryption and multi-attach, which is not supported.',
      );
    const refused = new InvalidStateError(
      'Invalid volume: Retype needs volume to be in available or in-use state, not be part of an active migration or a consistency group, requested type has to be different that the one from the volume, and for in-use volumes front-end qos specs cannot change.',
    );
    if (
      !VOLUME_RETYPE_SOURCES.includes(v.status) ||
      isMigrating(v.migrationStatus) ||
      v.groupId !== null ||
      v.consistencygroupId !== null ||
      v.volumeTypeId === type.id
    )
      throw refused;
    // A change of encryption cannot be done by the back end in place nor by a migration: Cinder's
    // scheduler finds no valid host, puts the volume back in its previous status and records no
    // user message: the type simply stays.
    if ((encryption !== null) !== v.encrypted) return;
    const choice = choosePool(await this.livePools.schedulerView(), {
      kind: 'retype',
      currentPool: v.host,
      size: v.size,
      availabilityZone: v.availabilityZone,
      extraSpecs: type.extraSpecs,
      migrationPolicy,
      capacityWeightMultiplier: this.config.capacityWeightMultiplier,
    });
    // No valid host (policy never, or no other pool fits the type): the type stays, as above.
    if (choice.kind === 'no-valid-backend') return;
    if (choice.kind === 'placed') {
      if ((await this.volumes.snapshotsOf(this.db, v.id)).length > 0)
        throw new InvalidStateError(
          `Invalid volume: Volume ${v.id} must not have snapshots to be retyped with a migration.`,
        );
      const deltas = [
        ...volumeQuotaDeltas(v.size, v.volumeTypeName, -1),
        ...volumeQuotaDeltas(v.size, type.name),
      ].filter((d) => d.resource.includes('_') && d.delta > 0);
      await this.startMigration(
        v,
        choice.pool.name,
        { newTypeId: type.id, holdStatus: 'retyping', deltas },
        refused,
      );
      return;
    }
    await this.db.transaction(async (em) => {
      const moved = [
        ...volumeQuotaDeltas(v.size, v.volumeTypeName, -1),
        ...volumeQuotaDeltas(v.size, type.name),
      ].filter((d) => d.resource.includes('_'));
      await this.quotas.apply(em, v.projectId, moved);
      // Compare-and-set on the status the checks above saw: a concurrent change makes this a refusal.
      const done = await this.volumes.compareAndSetStatus(em, v.id, [v.status], v.status, this.clock.now(), {
        volume_type_id: type.id,
        multiattach: targetMultiattach,
      });
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
  async migrate(api: ApiRequest, v: StoredVolume, args: unknown): Promise<void> {
    const { host, cluster, lockVolume } = parseMigrateArgs(args, api.mv);
    if (!VOLUME_RETYPE_SOURCES.includes(v.status)) {
      throw new InvalidStateError(
        `Invalid volume: Volume ${v.id} status must be available or in-use, but current status is: ${v.status}.`,
      );
    }
    if (isMigrating(v.migrationStatus))
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} is already part of an active migration.`);
    if ((await this.volumes.snapshotsOf(this.db, v.id)).length > 0)
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} must not have snapshots.`);
    if (v.groupId !== null || v.consistencygroupId !== null)
      throw new InvalidStateError(`Invalid volume: Volume ${v.id} must not be part of a group.`);
    // Clusters are not used by this service: a named cluster never has a service.
    // Cinder looks among the enabled cinder-volume services that are up.
    const disabled = await this.livePools.disabledBackends();
    const target =
      host === null
        ? undefined
        : (await this.livePools.fresh()).find(
            (p) => (p.name === host || p.backend === host) && !disabled.has(p.backend),
          );
    if (!target)
      throw new InvalidInputError(`Invalid host: No available service named ${host ?? cluster ?? ''}`);
    if (v.host !== null && target.backend === backendOf(v.host))
      throw new InvalidInputError('Invalid host: Destination host must be different than the current host.');
    const refused = new InvalidStateError(
      `Invalid volume: Volume ${v.id} status must be available or in-use and it must not be part of an active migration.`,
    );
    await this.startMigration(
      v,
      target.name,
      {
        newTypeId: null,
        holdStatus: lockVolume ? 'maintenance' : (v.status as 'available' | 'in-use'),
        deltas: [],
      },
      refused,
    );
  }

  /**
   * Records the start of a migration and its job on the destination back end in one transaction:
   * status → `holdStatus`, migration_status `starting`, the job kept in admin metadata (so the
   * destination can drive it again after a restart) and the per-type quota of a retype reserved.
   */
  private async startMigration(
    v: StoredVolume,
    destination: string,
    opts: {
      newTypeId: string | null;
      holdStatus: VolumeMigrateJob['holdStatus'];
      deltas: ReturnType<typeof volumeQuotaDeltas>;
    },
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
      if (reservationId !== null)
        await this.quotas.reserve(em, {
          id: reservationId,
          projectId: v.projectId,
          volumeId: v.id,
          operation: 'migrate',
          newSize: null,
          deltas: opts.deltas,
          now,
        });
      const started = await this.volumes.transitionMigration(
        em,
        v.id,
        MIGRATION_OPERATIONS.start,
        { from: v.status, to: opts.holdStatus },
        now,
      );
      if (!started) throw refused;
      await this.volumes.setAdminMetadataKey(em, v.id, MIGRATION_JOB_METADATA_KEY, JSON.stringify(job));
      await this.outbox.add(
        em,
        backendJob(destination, {
          id: volumeMigrateJobId(job),
          name: VOLUME_MIGRATE_JOB,
          data: job,
          partitionKey: v.id,
          backoffMs: 500,
        }),
      );
    });
  }
}
