import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { access, readdir, rename, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  checkPerVolumeSize,
  invalidReferenceReason,
  managedIdOf,
  isMultiattachSpec,
  migrationRecoveryJob,
  placeVolume,
  snapshotQuotaDeltas,
  VOLUME_EXTEND_ATTEMPTS,
  snapshotRecoveryJob,
  volumeQuotaDeltas,
  volumeRecoveryJob,
  fileLocationInfo as domainFileLocationInfo,
  parseFileLocationInfo,
  volumeFileName,
  VOLUME_OPERATIONS,
  SNAPSHOT_OPERATIONS,
} from '@osc/block-storage-domain';
import {
  BackendFileRepository,
  PoolRepository,
  QuotaRepository,
  ServiceRepository,
  Settlements,
  SnapshotRepository,
  VolumeRepository,
  VolumeTypeRepository,
  type StoredSnapshot,
  type StoredVolume,
  type StoredVolumeType,
} from '@osc/block-storage-persistence';
import {
  BLOCK_STORAGE_SCHEDULER_QUEUE,
  MAX_SCHEDULE_ATTEMPTS,
  SCHEDULE_VOLUME_COMMAND,
  SNAPSHOT_CREATE_JOB,
  SNAPSHOT_DELETE_JOB,
  VOLUME_CREATE_JOB,
  VOLUME_DELETE_JOB,
  VOLUME_EXTEND_JOB,
  VOLUME_REVERT_JOB,
  VOLUME_MIGRATE_JOB,
  VOLUME_MANAGE_JOB,
  VOLUME_UNMANAGE_JOB,
  SNAPSHOT_MANAGE_JOB,
  SNAPSHOT_UNMANAGE_JOB,
  MANAGE_SOURCE_METADATA_KEY,
  MIGRATION_JOB_METADATA_KEY,
  backendJobQueue,
  type SnapshotManageJob,
  type VolumeManageJob,
  type VolumeMigrateJob,
  type SnapshotJob,
  type VolumeCreateJob,
  type VolumeDeleteJob,
  type VolumeExtendJob,
  type VolumeRevertJob,
} from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import { type Job, type JobQueue, OutboxWriter, type Worker } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, JOB_QUEUE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { BackupRestorer } from '../backups/backup-restorer';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from './volume-backend.config';
import { fetchRemoteVolume, removeRemoteVolume, startVolumeDataServer } from './volume-data';
import {
  createSparseFile,
  ensureDir,
  filesystemCapacity,
  GIB,
  growFile,
  removeFile,
  sparseCopy,
} from './sparse-file';
import { productMetrics, timed } from '@osc/telemetry';

/**
 * `location_info` of a file back end's pool: `file:<machine>:<absolute directory>` (the layout
 * of `@osc/block-storage-domain`). Another back end on the same machine reads a volume's bytes
 * from that directory when the volume migrates to it, and the API hands out `local` connections
 * to `<directory>/volume-<id>` from it.
 */
export const fileLocationInfo = (directory: string, machine: string = os.hostname()): string =>
  domainFileLocationInfo(machine, path.resolve(directory));

export { parseFileLocationInfo };

/** `host@backend` of a pool name `host@backend#pool`. */
const backendOfPool = (pool: string): string => pool.split('#')[0] as string;

/** A migration that cannot go on; the volume returns to its previous status with migration_status error. */
class MigrationRefused extends Error {}

/** A manage whose reference cannot be adopted (no such file, not this back end's name, already managed). */
class ManageRefused extends Error {}

/**
 * The default volume back end: each volume is a sparse file `volume-<id>` under a configured
 * directory, each snapshot a sparse copy `snapshot-<id>`. Jobs arrive on this back end's queue;
 * every handler checks the row is still in the status the job expects, so redelivered jobs do
 * nothing (BS-8.6.1). Pool capacity comes from the real filesystem (statfs).
 */
@Injectable()
export class VolumeBackendService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('volume-backend');
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly quotas = new QuotaRepository();
  private readonly pools = new PoolRepository();
  private readonly types = new VolumeTypeRepository();
  private readonly services = new ServiceRepository();
  private readonly files = new BackendFileRepository();
  private readonly settlements = new Settlements();
  private readonly serviceUuid = randomUUID();
  private worker: Worker | null = null;
  private dataServer: Server | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reporting: Promise<void> | null = null;
  private reportAgain = false;
  private filesReport: Promise<void> = Promise.resolve();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_BACKEND_CONFIG) private readonly config: VolumeBackendConfig,
    private readonly restorer: BackupRestorer,
  ) {}

  /** `host@backend` */
  get backend(): string {
    return `${this.config.host}@${this.config.backendName}`;
  }

  /** `host@backend#pool` (one pool named after the back end). */
  get poolName(): string {
    return `${this.backend}#${this.config.backendName}`;
  }

  volumeFile(id: string): string {
    return path.join(this.config.directory, volumeFileName(id));
  }

  snapshotFile(id: string): string {
    return path.join(this.config.directory, `snapshot-${id}`);
  }

  async onApplicationBootstrap(): Promise<void> {
    await ensureDir(this.config.directory);
    if (this.config.data) {
      this.dataServer = await startVolumeDataServer({
        backend: this.backend,
        secret: this.config.data.secret,
        host: this.config.data.host,
        port: this.config.data.port,
        fileOf: (id) => this.volumeFile(id),
        mayServe: async (id) => {
          const v = await this.volumes.findById(this.db, id, null);
          return (
            v !== null &&
            v.host === this.poolName &&
            (v.migrationStatus === 'starting' || v.migrationStatus === 'migrating')
          );
        },
        removeMovedAway: async (id) => {
          const p = (await this.volumes.placementsOf(this.db, [id])).get(id);
          const migrating = p?.migrationStatus === 'starting' || p?.migrationStatus === 'migrating';
          if (!p || migrating || (!p.deleted && (p.host ?? '').startsWith(`${this.backend}#`))) return false;
          await removeFile(this.volumeFile(id));
          return true;
        },
        now: () => this.clock.now().getTime(),
        warn: (m) => this.log.warn(m),
      });
    }
    await this.reportStats();
    await this.reportFiles();
    this.timer = setInterval(() => {
      void this.reportStats().catch((e: unknown) => this.log.warn(`stats report failed: ${String(e)}`));
      void this.reportFiles().catch((e: unknown) => this.log.warn(`file report failed: ${String(e)}`));
    }, this.config.statsIntervalSeconds * 1000);
    this.timer.unref();
    this.worker = await this.jobs.process(backendJobQueue(this.backend), (job) => this.handle(job), {
      concurrency: this.config.concurrency,
    });
    await this.recover();
  }

  /**
   * BS-8.6.2: after a restart, work this back end owns that is stuck in a transitional status is
   * driven again. Job ids match the ones the API and scheduler use, so a job still queued is not
   * doubled; handlers are idempotent anyway. An interrupted extend (its target size is only in the
   * lost job) ends in `error_extending`.
   */
  async recover(): Promise<void> {
    for (const v of await this.volumes.listOnBackend(this.db, this.backend, [
      'creating',
      'deleting',
      'extending',
      'reverting',
      'managing',
      'unmanaging',
    ])) {
      if (v.status === 'creating' && v.host === null) continue;
      const inputs = {
        extendNewSize:
          v.status === 'extending'
            ? ((await this.quotas.reservationsOf(this.db, v.id)).find(
                (r) => r.operation === 'extend' && r.newSize !== null,
              )?.newSize ?? null)
            : null,
        restoringSnapshotId:
          v.status === 'reverting'
            ? ((await this.volumes.snapshotsOf(this.db, v.id)).find((s) => s.status === 'restoring')?.id ??
              null)
            : null,
      };
      const job = volumeRecoveryJob(v, inputs);
      if (job !== null) await this.jobs.add(job.queue, job);
      else if (v.status === 'reverting')
        await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.revertFailed, this.clock.now(), {
          error_reason: 'The revert was interrupted and its snapshot is no longer restoring.',
        });
      else if (v.status === 'extending')
        await this.failExtend(v.id, 'The extend was interrupted by a restart of the volume back end.');
    }
    await this.sweepStrayFiles();
    // Migrations to this back end: their job is kept in the volume's admin metadata.
    for (const v of await this.volumes.listMigratingTo(this.db, this.backend, MIGRATION_JOB_METADATA_KEY)) {
      const job = migrationRecoveryJob(v);
      if (job) await this.jobs.add(job.queue, job);
    }
    for (const s of await this.volumes.snapshotsOnBackend(this.db, this.backend, [
      'creating',
      'deleting',
      'unmanaging',
    ])) {
      const job = snapshotRecoveryJob({ ...s, manageSource: s.manageSource ?? null });
      if (job) await this.jobs.add(job.queue, job);
    }
  }

  /**
   * Removes volume files this back end no longer owns: the source copy of a volume that migrated
   * away (a restart between the migration's commit and the removal) and the partial copy of an
   * interrupted migration to here. A file stays while its volume is on this back end, or while a
   * migration of it is still under way (it is driven again below).
   */
  private async sweepStrayFiles(): Promise<void> {
    const files = new Map<string, string[]>();
    for (const name of await readdir(this.config.directory)) {
      const m = /^volume-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\.migrating)?$/.exec(
        name,
      );
      if (m?.[1]) files.set(m[1], [...(files.get(m[1]) ?? []), name]);
    }
    const placements = await this.volumes.placementsOf(this.db, [...files.keys()]);
    const mine = `${this.backend}#`;
    for (const [id, names] of files) {
      const p = placements.get(id);
      if (!p) continue; // not a volume this service knows: leave the operator's file alone
      const migrating = p.migrationStatus === 'starting' || p.migrationStatus === 'migrating';
      for (const name of names) {
        const partial = name.endsWith('.migrating');
        const stray = partial ? !migrating : !migrating && (p.deleted || !(p.host ?? '').startsWith(mine));
        if (!stray) continue;
        this.log.log(
          `removing ${name}: volume ${id} is ${p.deleted ? 'deleted' : `on ${p.host ?? 'no back end'}`}`,
        );
        await removeFile(path.join(this.config.directory, name)).catch(() => undefined);
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.worker?.close();
    await this.reporting?.catch(() => undefined);
    await this.filesReport.catch(() => undefined);
    const server = this.dataServer;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  /** Reports pool stats now (and on every change), coalescing concurrent requests. */
  reportStats(): Promise<void> {
    if (this.reporting) {
      this.reportAgain = true;
      return this.reporting;
    }
    this.reporting = (async () => {
      do {
        this.reportAgain = false;
        const { totalGb, freeGb } = await filesystemCapacity(this.config.directory);
        const provisioned = await this.volumes.provisionedOn(this.db, this.backend);
        await this.pools.upsert(
          this.db,
          [
            {
              name: this.poolName,
              backend: this.backend,
              availabilityZone: this.config.availabilityZone,
              capabilities: {
                pool_name: this.config.backendName,
                volume_backend_name: this.config.backendName,
                vendor_name: 'Open Source',
                driver_version: '1.0.0',
                storage_protocol: 'file',
                total_capacity_gb: totalGb,
                free_capacity_gb: freeGb,
                allocated_capacity_gb: provisioned,
                provisioned_capacity_gb: provisioned,
                reserved_percentage: this.config.reservedPercentage,
                max_over_subscription_ratio: this.config.maxOverSubscriptionRatio,
                thin_provisioning_support: true,
                thick_provisioning_support: false,
                QoS_support: false,
                multiattach: true,
                online_extend_support: true,
                location_info: fileLocationInfo(this.config.directory, this.config.machine),
                // Where back ends on other machines read this one's migrating volumes (ours).
                ...(this.config.data ? { data_url: this.config.data.url } : {}),
              },
            },
          ],
          this.clock.now(),
        );
        // The stats report is this back end's heartbeat as a cinder-volume service (os-services, os-hosts).
        await this.services.heartbeat(this.db, {
          binary: 'cinder-volume',
          host: this.backend,
          availabilityZone: this.config.availabilityZone,
          now: this.clock.now(),
        });
      } while (this.reportAgain);
    })().finally(() => {
      this.reporting = null;
    });
    return this.reporting;
  }

  async handle(job: Job): Promise<void> {
    // Per operation (the job name: volume.create, snapshot.delete, ...): count and duration (docs/metrics.md).
    return timed(
      () => this.dispatch(job),
      (seconds, ok) => {
        productMetrics.volumeOperations.labels(job.name, ok ? 'ok' : 'error').inc();
        productMetrics.volumeOperationDuration.labels(job.name).observe(seconds);
      },
    );
  }

  private async dispatch(job: Job): Promise<void> {
    switch (job.name) {
      case VOLUME_CREATE_JOB:
        return this.createVolume(job.data as VolumeCreateJob);
      case VOLUME_DELETE_JOB:
        return this.deleteVolume(job.data as VolumeDeleteJob);
      case VOLUME_EXTEND_JOB:
        try {
          return await this.extendVolume(job.data as VolumeExtendJob);
        } catch (err) {
          // Last run: the volume ends in error_extending and its reservation is released rather
          // than left `extending` with reserved quota nobody settles.
          if (job.attempt >= VOLUME_EXTEND_ATTEMPTS)
            await this.failExtend(
              (job.data as VolumeExtendJob).volumeId,
              `Extending the volume failed: ${String(err)}`,
            );
          throw err;
        }
      case SNAPSHOT_CREATE_JOB:
        return this.createSnapshot(job.data as SnapshotJob);
      case SNAPSHOT_DELETE_JOB:
        return this.deleteSnapshot(job.data as SnapshotJob);
      case VOLUME_REVERT_JOB:
        return this.revertVolume(job.data as VolumeRevertJob);
      case VOLUME_MIGRATE_JOB:
        return this.migrateVolume(job.data as VolumeMigrateJob);
      case VOLUME_MANAGE_JOB:
        return this.manageVolume(job.data as VolumeManageJob);
      case VOLUME_UNMANAGE_JOB:
        return this.unmanageVolume(job.data as VolumeDeleteJob);
      case SNAPSHOT_MANAGE_JOB:
        return this.manageSnapshot(job.data as SnapshotManageJob);
      case SNAPSHOT_UNMANAGE_JOB:
        return this.unmanageSnapshot(job.data as SnapshotJob);
      default:
        throw new InvalidInputError(`volume back end has no handler for job ${job.name}`);
    }
  }

  private async createVolume(data: VolumeCreateJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'creating' || v.host !== data.pool) return;
    const file = this.volumeFile(v.id);
    const bytes = v.size * GIB;
    try {
      const source = data.schedule.source;
      if (source.kind === 'volume') await sparseCopy(this.volumeFile(source.id), file, bytes);
      else if (source.kind === 'snapshot') await sparseCopy(this.snapshotFile(source.id), file, bytes);
      else if (source.kind === 'backup') {
        await createSparseFile(file, bytes);
        await this.restorer.restoreIntoNewVolume(source.id, file);
      } else await createSparseFile(file, bytes);
    } catch (err) {
      await removeFile(file).catch(() => undefined);
      await this.failCreate(data, err);
      return;
    }
    const done = await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.created, this.clock.now(), {
      service_uuid: this.serviceUuid,
      shared_targets: false,
      provider_id: null,
    });
    if (!done) {
      // Lost the race: keep the file if another run of this job made the volume available here.
      const now = await this.volumes.findById(this.db, v.id, null);
      if (!now || now.host !== data.pool) await removeFile(file);
    }
    void this.reportStats().catch(() => undefined);
  }

  /** BS-10.5: re-schedule elsewhere while attempts remain, else `error` with the reason. */
  private async failCreate(data: VolumeCreateJob, err: unknown): Promise<void> {
    const reason = err instanceof Error ? err.message : String(err);
    this.log.warn(`creating volume ${data.volumeId} on ${data.pool} failed: ${reason}`);
    const attempt = data.schedule.attempt;
    await this.db.transaction(async (em) => {
      if (attempt < MAX_SCHEDULE_ATTEMPTS) {
        const reset = await this.volumes.transition(
          em,
          data.volumeId,
          VOLUME_OPERATIONS.reschedule,
          this.clock.now(),
          { host: null },
        );
        if (!reset) return;
        const schedule = {
          ...data.schedule,
          attempt: attempt + 1,
          excludedPools: [...data.schedule.excludedPools, data.pool],
        };
        await this.outbox.add(em, {
          destination: 'bus',
          queue: BLOCK_STORAGE_SCHEDULER_QUEUE,
          message: {
            id: `schedule-${data.volumeId}-${attempt + 1}`,
            type: SCHEDULE_VOLUME_COMMAND,
            payload: schedule,
          },
          partitionKey: data.volumeId,
        });
      } else {
        await this.volumes.transition(em, data.volumeId, VOLUME_OPERATIONS.createFailed, this.clock.now(), {
          error_reason: `Volume creation failed after ${attempt} attempts: ${reason}`.slice(0, 1000),
        });
      }
    });
  }

  private async deleteVolume(data: VolumeDeleteJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'deleting') return;
    try {
      for (const s of await this.volumes.snapshotsOf(this.db, v.id)) {
        if (s.status === 'deleting') await this.deleteSnapshot({ snapshotId: s.id });
      }
      await removeFile(this.volumeFile(v.id));
    } catch (err) {
      this.log.warn(`deleting volume ${v.id} failed: ${String(err)}`);
      await this.volumes.transition(this.db, v.id, VOLUME_OPERATIONS.deleteFailed, this.clock.now());
      return;
    }
    await this.db.transaction(async (em) => {
      const removed = await this.volumes.softDelete(em, v.id, ['deleting'], this.clock.now());
      if (removed && removed.consumesQuota) {
        await this.quotas.apply(
          em,
          removed.projectId,
          volumeQuotaDeltas(removed.size, v.volumeTypeName, -1),
          'in_use',
          false,
        );
      }
    });
    void this.reportStats().catch(() => undefined);
  }

  /**
   * Grows the file, then moves the volume out of `extending` and commits its reservation in one
   * transaction. Reservations recorded before reservation rows existed are settled from the sizes.
   */
  private async extendVolume(data: VolumeExtendJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'extending') return;
    try {
      await growFile(this.volumeFile(v.id), data.newSize * GIB);
    } catch (err) {
      this.log.warn(`extending volume ${v.id} failed: ${String(err)}`);
      await this.failExtend(v.id, `Extending the volume failed: ${String(err)}`);
      return;
    }
    const extended = v.attachments.some((a) => a.attachStatus === 'attached')
      ? VOLUME_OPERATIONS.extendedInUse
      : VOLUME_OPERATIONS.extendedAvailable;
    await this.db.transaction(async (em) => {
      if (!(await this.volumes.transition(em, v.id, extended, this.clock.now(), { size: data.newSize })))
        return;
      const reservation = (await this.quotas.reservationsOf(em, v.id)).find(
        (r) => r.operation === 'extend' && r.newSize === data.newSize,
      );
      if (reservation) await this.quotas.settleReservation(em, reservation.id, true);
      else {
        const deltas = volumeQuotaDeltas(data.newSize - v.size, v.volumeTypeName).filter((d) =>
          d.resource.startsWith('gigabytes'),
        );
        await this.quotas.settleReserved(em, v.projectId, deltas, true);
      }
      // Any other reservation of this volume belongs to an extend that can no longer finish.
      await this.quotas.releaseReservationsOf(em, v.id);
    });
    void this.reportStats().catch(() => undefined);
  }

  /** `extending` → `error_extending` with the reason, and the volume's reserved quota released, in one transaction. */
  private async failExtend(volumeId: string, reason: string): Promise<void> {
    await this.db.transaction((em) =>
      this.settlements.failVolumeExtend(em, volumeId, reason, this.clock.now()),
    );
  }

  /**
   * Revert (3.40): the snapshot's bytes are copied beside the volume file and renamed over it, so
   * the volume is never half reverted; then volume `reverting` → available and snapshot
   * `restoring` → available in one transaction. A failed copy leaves the volume in error and the
   * snapshot available, as Cinder does.
   */
  private async revertVolume(data: VolumeRevertJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!v || v.status !== 'reverting' || !s || s.status !== 'restoring') return;
    const temp = `${this.volumeFile(v.id)}.revert`;
    let failure: unknown = null;
    try {
      await sparseCopy(this.snapshotFile(s.id), temp, v.size * GIB);
      await rename(temp, this.volumeFile(v.id));
    } catch (err) {
      failure = err;
      this.log.warn(`reverting volume ${v.id} to snapshot ${s.id} failed: ${String(err)}`);
      await removeFile(temp).catch(() => undefined);
    }
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      await this.volumes.transition(
        em,
        v.id,
        failure === null ? VOLUME_OPERATIONS.reverted : VOLUME_OPERATIONS.revertFailed,
        now,
        failure === null
          ? {}
          : { error_reason: `Reverting to snapshot ${s.id} failed: ${String(failure)}`.slice(0, 1000) },
      );
      await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.reverted, now);
    });
  }

  /**
   * Runs on the destination back end. Checks the destination against the volume's (new) type and
   * size as Cinder's scheduler does, reads the source back end's directory from its pool's
   * `location_info`, copies the bytes beside the destination file and renames it into place, then in
   * one transaction moves the row (host; type, multiattach and the per-type quota for a retype),
   * returns the volume to its previous status with migration_status `success` and forgets the job;
   * only then is the source copy removed. A redelivered job finds the row moved and only finishes
   * the removal. Any refusal or failure ends in migration_status `error`, the volume back where it
   * was, the reservation released.
   */
  private async migrateVolume(job: VolumeMigrateJob): Promise<void> {
    const v = await this.volumes.findById(this.db, job.volumeId, null);
    if (!v) return;
    // One read of the pools: the source's location (however old its report) and this pool's stats.
    const pools = await this.pools.listFresh(
      this.db,
      new Date(this.clock.now().getTime() - 24 * 3600 * 1000),
    );
    const sourceCapabilities = pools.find((p) => p.name === job.source)?.capabilities ?? {};
    const location = parseFileLocationInfo(sourceCapabilities['location_info']);
    // Same machine: the source file is read directly; another machine: through its data endpoint.
    const local = location !== null && location.machine === this.config.machine;
    const sourceDir = (): string => {
      if (!location)
        throw new MigrationRefused(`The source back end ${job.source} reports no file location.`);
      if (!local)
        throw new MigrationRefused(
          `The source back end ${job.source} is on ${location.machine}; its bytes cannot be read from ${this.config.machine}.`,
        );
      return location.directory;
    };
    const remote = (): { url: string; secret: string; timeoutMs: number } => {
      const url = sourceCapabilities['data_url'];
      if (typeof url !== 'string' || url === '')
        throw new MigrationRefused(
          `The source back end ${job.source} is on ${location?.machine ?? 'an unknown machine'} and reports no data endpoint (data_url); its bytes cannot be read from ${this.config.machine}.`,
        );
      if (!this.config.data)
        throw new MigrationRefused(
          `The source back end ${job.source} is on another machine and ${this.backend} has no VOLUME_DATA_SECRET to read it with.`,
        );
      return { url, secret: this.config.data.secret, timeoutMs: this.config.data.timeoutMs };
    };
    if (v.host === job.destination && v.migrationStatus === 'success') {
      // Committed by an earlier run: only the source copy may be left.
      if (local) await removeFile(path.join(sourceDir(), volumeFileName(v.id))).catch(() => undefined);
      else await this.removeRemoteCopy(v.id, job.source, remote);
      return;
    }
    if (
      v.host !== job.source ||
      v.status !== job.holdStatus ||
      !['starting', 'migrating'].includes(v.migrationStatus ?? '')
    )
      return;
    const file = this.volumeFile(v.id);
    const temp = `${file}.migrating`;
    let source: string | null = null;
    let type: StoredVolumeType | null;
    try {
      if (job.destination !== this.poolName)
        throw new MigrationRefused(
          `The destination pool ${job.destination} is not served by ${this.backend}.`,
        );
      const typeId = job.newTypeId ?? v.volumeTypeId;
      type = await this.types.findAny(this.db, typeId);
      if (!type) throw new MigrationRefused(`Volume type ${typeId} could not be found.`);
      const freshSince = this.clock.now().getTime() - 180 * 1000;
      const here = pools.find(
        (p) => p.name === this.poolName && new Date(p.updatedAt).getTime() >= freshSince,
      );
      if (!here)
        throw new MigrationRefused(`The destination pool ${this.poolName} has not reported its capacity.`);
      const placed = placeVolume([here], {
        size: v.size,
        availabilityZone: null,
        extraSpecs: type.extraSpecs,
      });
      if (placed.kind !== 'placed')
        throw new MigrationRefused(`No valid back end: ${Object.values(placed.reasons).join('; ')}`);
      const from = local ? null : remote();
      if (local) {
        source = path.join(sourceDir(), volumeFileName(v.id));
        await access(source);
      }
      if (
        !(await this.volumes.compareAndSetMigration(
          this.db,
          v.id,
          [job.holdStatus],
          ['starting', 'migrating'],
          job.holdStatus,
          this.clock.now(),
          { migration_status: 'migrating' },
        ))
      )
        return;
      if (source !== null) await sparseCopy(source, temp, v.size * GIB);
      else if (from) {
        const size = await fetchRemoteVolume({
          baseUrl: from.url,
          backend: backendOfPool(job.source),
          volumeId: v.id,
          secret: from.secret,
          dest: temp,
          bytes: v.size * GIB,
          now: this.clock.now().getTime(),
          timeoutMs: from.timeoutMs,
        });
        if (size > v.size * GIB)
          throw new MigrationRefused(
            `The source copy of volume ${v.id} is ${size} bytes, more than its ${v.size} GiB.`,
          );
      }
      await rename(temp, file);
    } catch (err) {
      await removeFile(temp).catch(() => undefined);
      this.log.warn(
        `migrating volume ${v.id} from ${job.source} to ${job.destination} failed: ${String(err)}`,
      );
      // Refused or failed alike: the volume goes back to where it was (a retry would find it no
      // longer migrating); only a failure to record that makes the job run again.
      await this.failMigration(v.id, job);
      return;
    }
    const newType = job.newTypeId === null ? null : type;
    const done = await this.db.transaction(async (em) => {
      const set: Record<string, unknown> = { host: job.destination, migration_status: 'success' };
      if (newType) {
        set['volume_type_id'] = newType.id;
        set['multiattach'] = isMultiattachSpec(newType.extraSpecs);
      }
      if (
        !(await this.volumes.compareAndSetMigration(
          em,
          v.id,
          [job.holdStatus],
          ['migrating'],
          job.previousStatus,
          this.clock.now(),
          set,
        ))
      )
        return false;
      await this.volumes.setAdminMetadataKey(em, v.id, MIGRATION_JOB_METADATA_KEY, null);
      if (newType && job.reservationId !== null) {
        await this.quotas.settleReservation(em, job.reservationId, true);
        const old = volumeQuotaDeltas(v.size, v.volumeTypeName, -1).filter((d) => d.resource.includes('_'));
        await this.quotas.apply(em, v.projectId, old, 'in_use', false);
      }
      return true;
    });
    if (!done) {
      // The volume changed under the copy (reset or deleted): the copy here is not its data.
      await removeFile(file).catch(() => undefined);
      return;
    }
    if (source !== null)
      await removeFile(source).catch((e: unknown) =>
        this.log.warn(`removing the source copy of migrated volume ${v.id} failed: ${String(e)}`),
      );
    else await this.removeRemoteCopy(v.id, job.source, remote);
    void this.reportStats().catch(() => undefined);
  }

  /**
   * Asks a source back end on another machine to remove its copy of a volume that moved here. A
   * failure only logs: the source's stray-file sweep removes the copy at its next start.
   */
  private async removeRemoteCopy(
    volumeId: string,
    sourcePool: string,
    remote: () => { url: string; secret: string; timeoutMs: number },
  ): Promise<void> {
    try {
      const from = remote();
      await removeRemoteVolume({
        baseUrl: from.url,
        backend: backendOfPool(sourcePool),
        volumeId,
        secret: from.secret,
        now: this.clock.now().getTime(),
        timeoutMs: 30_000,
      });
    } catch (e) {
      this.log.warn(
        `removing the source copy of migrated volume ${volumeId} on ${sourcePool} failed: ${String(e)}`,
      );
    }
  }

  private async failMigration(volumeId: string, job: VolumeMigrateJob): Promise<void> {
    await this.db.transaction((em) => this.settlements.failMigration(em, volumeId, job, this.clock.now()));
  }

  private async createSnapshot(data: SnapshotJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    // A managed snapshot adopts a file instead (manageSnapshot).
    if (!s || s.status !== 'creating' || (s.manageSource ?? null) !== null) return;
    try {
      await sparseCopy(this.volumeFile(s.volumeId), this.snapshotFile(s.id), s.size * GIB);
    } catch (err) {
      this.log.warn(`creating snapshot ${s.id} failed: ${String(err)}`);
      await removeFile(this.snapshotFile(s.id)).catch(() => undefined);
      await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.createFailed, this.clock.now(), {
        error_reason: String(err).slice(0, 1000),
      });
      return;
    }
    if (
      !(await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.created, this.clock.now(), {
        progress: '100%',
      }))
    ) {
      await removeFile(this.snapshotFile(s.id));
    }
  }

  private async deleteSnapshot(data: SnapshotJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!s || s.status !== 'deleting') return;
    try {
      await removeFile(this.snapshotFile(s.id));
    } catch (err) {
      this.log.warn(`deleting snapshot ${s.id} failed: ${String(err)}`);
      await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.deleteFailed, this.clock.now());
      return;
    }
    const typeName =
      s.volumeTypeId === null ? null : ((await this.types.findAny(this.db, s.volumeTypeId))?.name ?? null);
    await this.db.transaction(async (em) => {
      const removed = await this.snapshots.softDelete(em, s.id, ['deleting'], this.clock.now());
      if (removed && removed.consumesQuota)
        await this.quotas.apply(
          em,
          removed.projectId,
          snapshotQuotaDeltas(removed.size, typeName, -1),
          'in_use',
          false,
        );
    });
  }

  // ---- manage / unmanage ----

  /**
   * Records the volume and snapshot files in the directory for the manageable lists: at start, with
   * the periodic stats report and after each manage or unmanage (not after every create or delete,
   * whose files are listed as managed anyway). Reports run one after another.
   */
  private reportFiles(): Promise<void> {
    const next = this.filesReport.catch(() => undefined).then(() => this.writeFilesReport());
    this.filesReport = next;
    return next;
  }

  private async writeFilesReport(): Promise<void> {
    const found: { name: string; bytes: number }[] = [];
    for (const name of await readdir(this.config.directory)) {
      if (managedIdOf(name, 'volume') === null && managedIdOf(name, 'snapshot') === null) continue;
      const st = await stat(path.join(this.config.directory, name)).catch(() => null);
      if (st?.isFile()) found.push({ name, bytes: st.size });
    }
    await this.db.transaction((em) => this.files.replace(em, this.backend, found, this.clock.now()));
  }

  /**
   * Checks that `source` names a `<kind>-<uuid>` file in this back end's directory that no live
   * volume (snapshot) owns, and returns its size in GiB (rounded up, at least 1) and its path. When
   * the file is gone but `target` exists, an earlier run already renamed it (a restart between the
   * rename and the commit): the size comes from `target` and there is nothing left to rename.
   */
  private async adoptable(
    kind: 'volume' | 'snapshot',
    source: string,
    target: string,
  ): Promise<{ size: number; from: string | null }> {
    if (source === '')
      throw new ManageRefused(
        invalidReferenceReason(kind, '{}', 'the reference must name the file with source-name or source-id'),
      );
    const owner = managedIdOf(source, kind);
    if (owner === null || source !== `${kind}-${owner}`) {
      throw new ManageRefused(
        invalidReferenceReason(
          kind,
          source,
          `the files of back end ${this.backend} are named ${kind}-<uuid>`,
        ),
      );
    }
    const from = path.join(this.config.directory, source);
    const found = await stat(from).catch(() => null);
    if (found === null) {
      const adopted = await stat(target).catch(() => null);
      if (adopted?.isFile()) return { size: Math.max(1, Math.ceil(adopted.size / GIB)), from: null };
      throw new ManageRefused(
        invalidReferenceReason(kind, source, `no such file on back end ${this.backend}`),
      );
    }
    if (!found.isFile()) throw new ManageRefused(invalidReferenceReason(kind, source, 'not a regular file'));
    const live =
      kind === 'volume'
        ? await this.volumes.findById(this.db, owner, null)
        : await this.snapshots.findById(this.db, owner, null);
    if (live)
      throw new ManageRefused(
        invalidReferenceReason(kind, source, `it is already managed as ${kind} ${owner}`),
      );
    return { size: Math.max(1, Math.ceil(found.size / GIB)), from };
  }

  /**
   * Adopts the file of a `managing` volume: in one transaction the gigabytes of the size found are
   * charged (the count was charged by the API), the volume becomes available with that size and
   * the file is renamed to `volume-<id>` (a failed rename rolls the rest back). A bad reference or
   * a quota that does not fit ends in `error_managing`, the file untouched.
   */
  private async manageVolume(data: VolumeManageJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'managing' || !(v.host ?? '').startsWith(`${this.backend}#`)) return;
    const target = this.volumeFile(v.id);
    try {
      const { size, from } = await this.adoptable('volume', data.source, target);
      await this.db.transaction(async (em) => {
        const now = this.clock.now();
        checkPerVolumeSize(size, await this.quotas.limits(em, v.projectId));
        await this.quotas.apply(
          em,
          v.projectId,
          volumeQuotaDeltas(size, v.volumeTypeName).filter((d) => d.resource.startsWith('gigabytes')),
        );
        if (
          !(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.managed, now, {
            size,
            service_uuid: this.serviceUuid,
          }))
        ) {
          throw new ManageRefused('the volume is no longer managing');
        }
        await this.volumes.setAdminMetadataKey(em, v.id, MANAGE_SOURCE_METADATA_KEY, null);
        if (from !== null) await rename(from, target);
      });
    } catch (err) {
      this.log.warn(`managing ${data.source || '(no reference)'} as volume ${v.id} failed: ${String(err)}`);
      await this.failVolumeManage(v, err instanceof Error ? err.message : String(err));
      return;
    }
    void this.reportStats().catch(() => undefined);
    void this.reportFiles().catch(() => undefined);
  }

  /** `managing` → `error_managing` with the reason; the volume gives back its count and consumes no quota (Cinder). */
  private async failVolumeManage(v: StoredVolume, reason: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const now = this.clock.now();
      if (
        !(await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.manageFailed, now, {
          error_reason: reason.slice(0, 1000),
          use_quota: false,
        }))
      )
        return;
      await this.volumes.setAdminMetadataKey(em, v.id, MANAGE_SOURCE_METADATA_KEY, null);
      if (v.consumesQuota)
        await this.quotas.apply(
          em,
          v.projectId,
          volumeQuotaDeltas(v.size, v.volumeTypeName, -1),
          'in_use',
          false,
        );
    });
  }

  /** `unmanaging` → the row is removed (marked unmanaged) and its quota released; the file stays. */
  private async unmanageVolume(data: VolumeDeleteJob): Promise<void> {
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'unmanaging') return;
    await this.db.transaction(async (em) => {
      const removed = await this.volumes.softDeleteUnmanaged(em, v.id, this.clock.now());
      if (removed && removed.consumesQuota)
        await this.quotas.apply(
          em,
          removed.projectId,
          volumeQuotaDeltas(removed.size, v.volumeTypeName, -1),
          'in_use',
          false,
        );
    });
    void this.reportStats().catch(() => undefined);
    void this.reportFiles().catch(() => undefined);
  }

  /**
   * Adopts the file of a managed snapshot (`creating` with a manage source): the API charged the
   * volume's size; the gigabytes are corrected to the file's size, the snapshot becomes available
   * and the file is renamed to `snapshot-<id>`, in one transaction. Failure → `error`.
   */
  private async manageSnapshot(data: SnapshotManageJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (
      !s ||
      s.status !== 'creating' ||
      (s.manageSource ?? null) === null ||
      !(s.host ?? '').startsWith(`${this.backend}#`)
    )
      return;
    const target = this.snapshotFile(s.id);
    const typeName =
      s.volumeTypeId === null ? null : ((await this.types.findAny(this.db, s.volumeTypeId))?.name ?? null);
    try {
      const { size, from } = await this.adoptable('snapshot', data.source, target);
      await this.db.transaction(async (em) => {
        const now = this.clock.now();
        if (s.consumesQuota && size !== s.size) {
          await this.quotas.apply(
            em,
            s.projectId,
            snapshotQuotaDeltas(size - s.size, typeName).filter((d) => d.resource.startsWith('gigabytes')),
          );
        }
        if (
          !(await this.snapshots.transition(em, s.id, SNAPSHOT_OPERATIONS.created, now, {
            size,
            progress: '100%',
            manage_source: null,
          }))
        ) {
          throw new ManageRefused('the snapshot is no longer creating');
        }
        if (from !== null) await rename(from, target);
      });
    } catch (err) {
      this.log.warn(`managing ${data.source || '(no reference)'} as snapshot ${s.id} failed: ${String(err)}`);
      await this.failSnapshotManage(s, err instanceof Error ? err.message : String(err));
      return;
    }
    void this.reportStats().catch(() => undefined);
    void this.reportFiles().catch(() => undefined);
  }

  /** `creating` → `error` with the reason; the snapshot keeps the quota charged for it until it is deleted. */
  private async failSnapshotManage(s: StoredSnapshot, reason: string): Promise<void> {
    await this.snapshots.transition(this.db, s.id, SNAPSHOT_OPERATIONS.createFailed, this.clock.now(), {
      error_reason: reason.slice(0, 1000),
      manage_source: null,
    });
  }

  /** `unmanaging` → the row is removed and its quota released; the file stays. */
  private async unmanageSnapshot(data: SnapshotJob): Promise<void> {
    const s = await this.snapshots.findById(this.db, data.snapshotId, null);
    if (!s || s.status !== 'unmanaging') return;
    const typeName =
      s.volumeTypeId === null ? null : ((await this.types.findAny(this.db, s.volumeTypeId))?.name ?? null);
    await this.db.transaction(async (em) => {
      const removed = await this.snapshots.softDelete(em, s.id, ['unmanaging'], this.clock.now());
      if (removed && removed.consumesQuota)
        await this.quotas.apply(
          em,
          removed.projectId,
          snapshotQuotaDeltas(removed.size, typeName, -1),
          'in_use',
          false,
        );
    });
    void this.reportStats().catch(() => undefined);
    void this.reportFiles().catch(() => undefined);
  }
}
