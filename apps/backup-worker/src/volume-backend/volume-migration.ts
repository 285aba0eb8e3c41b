import type { Server } from 'node:http';
import { access, rename } from 'node:fs/promises';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  isMultiattachSpec,
  parseFileLocationInfo,
  placeVolume,
  volumeFileName,
  volumeQuotaDeltas,
} from '@osc/block-storage-domain';
import {
  PoolRepository,
  QuotaRepository,
  Settlements,
  VolumeRepository,
  VolumeTypeRepository,
  type StoredVolumeType,
} from '@osc/block-storage-persistence';
import { MIGRATION_JOB_METADATA_KEY, type VolumeMigrateJob } from '@osc/contracts';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { FileVolumeDriver } from './file-volume-driver';
import { PoolReporter } from './pool-reporter';
import { GIB, removeFile, sparseCopy } from './sparse-file';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from './volume-backend.config';
import { fetchRemoteVolume, removeRemoteVolume, startVolumeDataServer } from './volume-data';

/** `host@backend` of a pool name `host@backend#pool`. */
const backendOfPool = (pool: string): string => pool.split('#')[0] as string;

/** A migration that cannot go on; the volume returns to its previous status with migration_status error. */
class MigrationRefused extends Error {}

/**
 * Volume migration between back ends (`os-migrate_volume`, `os-retype` on demand), run by the
 * destination: the copy from the source (its directory on this machine, or its data endpoint on
 * another) and the move of the row. Also serves this back end's own migrating volumes to
 * destinations on other machines (the data endpoint, when configured).
 */
@Injectable()
export class VolumeMigration {
  private readonly log = new Logger('volume-backend');
  private readonly volumes = new VolumeRepository();
  private readonly quotas = new QuotaRepository();
  private readonly pools = new PoolRepository();
  private readonly types = new VolumeTypeRepository();
  private readonly settlements = new Settlements();
  private dataServer: Server | null = null;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_BACKEND_CONFIG) private readonly config: VolumeBackendConfig,
    private readonly driver: FileVolumeDriver,
    private readonly reporter: PoolReporter,
  ) {}

  /**
   * Starts the data endpoint (when configured): it streams a volume of this back end only while
   * it migrates, and removes a copy on request once the volume has moved away.
   */
  async serveData(): Promise<void> {
    if (!this.config.data) return;
    this.dataServer = await startVolumeDataServer({
      backend: this.driver.backend,
      secret: this.config.data.secret,
      host: this.config.data.host,
      port: this.config.data.port,
      fileOf: (id) => this.driver.volumeFile(id),
      mayServe: async (id) => {
        const v = await this.volumes.findById(this.db, id, null);
        return (
          v !== null &&
          v.host === this.driver.poolName &&
          (v.migrationStatus === 'starting' || v.migrationStatus === 'migrating')
        );
      },
      removeMovedAway: async (id) => {
        const p = (await this.volumes.placementsOf(this.db, [id])).get(id);
        const migrating = p?.migrationStatus === 'starting' || p?.migrationStatus === 'migrating';
        if (!p || migrating || (!p.deleted && this.driver.ownsPool(p.host))) return false;
        await this.driver.removeVolume(id);
        return true;
      },
      now: () => this.clock.now().getTime(),
      warn: (m) => this.log.warn(m),
    });
  }

  /** Stops the data endpoint, closing the streams under way. */
  async stopServing(): Promise<void> {
    const server = this.dataServer;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
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
  async migrateVolume(job: VolumeMigrateJob): Promise<void> {
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
          `The source back end ${job.source} is on another machine and ${this.driver.backend} has no VOLUME_DATA_SECRET to read it with.`,
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
    const file = this.driver.volumeFile(v.id);
    const temp = `${file}.migrating`;
    let source: string | null = null;
    let type: StoredVolumeType | null;
    try {
      if (job.destination !== this.driver.poolName)
        throw new MigrationRefused(
          `The destination pool ${job.destination} is not served by ${this.driver.backend}.`,
        );
      const typeId = job.newTypeId ?? v.volumeTypeId;
      type = await this.types.findAny(this.db, typeId);
      if (!type) throw new MigrationRefused(`Volume type ${typeId} could not be found.`);
      const freshSince = this.clock.now().getTime() - 180 * 1000;
      const here = pools.find(
        (p) => p.name === this.driver.poolName && new Date(p.updatedAt).getTime() >= freshSince,
      );
      if (!here)
        throw new MigrationRefused(
          `The destination pool ${this.driver.poolName} has not reported its capacity.`,
        );
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
    this.reporter.changed();
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
}
