import { readdir, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { fileLocationInfo as domainFileLocationInfo, managedIdOf } from '@osc/block-storage-domain';
import {
  BackendFileRepository,
  PoolRepository,
  ServiceRepository,
  VolumeRepository,
} from '@osc/block-storage-persistence';
import { CLOCK, DATA_SOURCE, type Clock } from '@osc/platform';
import { FileVolumeDriver } from './file-volume-driver';
import { filesystemCapacity } from './sparse-file';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from './volume-backend.config';

/**
 * `location_info` of a file back end's pool: `file:<machine>:<absolute directory>` (the layout
 * of `@osc/block-storage-domain`). Another back end on the same machine reads a volume's bytes
 * from that directory when the volume migrates to it, and the API hands out `local` connections
 * to `<directory>/volume-<id>` from it.
 */
export const fileLocationInfo = (directory: string, machine: string = os.hostname()): string =>
  domainFileLocationInfo(machine, path.resolve(directory));

/**
 * What this back end tells the scheduler and the admin APIs: its pool's capacity and capabilities
 * (from the real filesystem, statfs), its heartbeat as a cinder-volume service, and the files in
 * its directory for the manageable lists. Runs at start, every stats interval and after changes.
 */
@Injectable()
export class PoolReporter {
  private readonly log = new Logger('volume-backend');
  private readonly volumes = new VolumeRepository();
  private readonly pools = new PoolRepository();
  private readonly services = new ServiceRepository();
  private readonly files = new BackendFileRepository();
  private timer: NodeJS.Timeout | null = null;
  private reporting: Promise<void> | null = null;
  private reportAgain = false;
  private filesReport: Promise<void> = Promise.resolve();

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(VOLUME_BACKEND_CONFIG) private readonly config: VolumeBackendConfig,
    private readonly driver: FileVolumeDriver,
  ) {}

  /** Reports once now, then every stats interval until {@link stopTimer}. */
  async start(): Promise<void> {
    await this.reportStats();
    await this.reportFiles();
    this.timer = setInterval(() => {
      void this.reportStats().catch((e: unknown) => this.log.warn(`stats report failed: ${String(e)}`));
      void this.reportFiles().catch((e: unknown) => this.log.warn(`file report failed: ${String(e)}`));
    }, this.config.statsIntervalSeconds * 1000);
    this.timer.unref();
  }

  /** Stops the periodic reports (at shutdown, before the worker closes). */
  stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Waits for the reports under way (their failures were logged or are moot at shutdown). */
  async settled(): Promise<void> {
    await this.reporting?.catch(() => undefined);
    await this.filesReport.catch(() => undefined);
  }

  /** After a change of the pool's usage: reports in the background (a failure waits for the next). */
  changed(options: { files?: boolean } = {}): void {
    void this.reportStats().catch(() => undefined);
    if (options.files) void this.reportFiles().catch(() => undefined);
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
        await this.writeStats();
      } while (this.reportAgain);
    })().finally(() => {
      this.reporting = null;
    });
    return this.reporting;
  }

  private async writeStats(): Promise<void> {
    const backend = this.driver.backend;
    const { totalGb, freeGb } = await filesystemCapacity(this.config.directory);
    const provisioned = await this.volumes.provisionedOn(this.db, backend);
    await this.pools.upsert(
      this.db,
      [
        {
          name: this.driver.poolName,
          backend,
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
      host: backend,
      availabilityZone: this.config.availabilityZone,
      now: this.clock.now(),
    });
  }

  /**
   * Records the volume and snapshot files in the directory for the manageable lists: at start, with
   * the periodic stats report and after each manage or unmanage (not after every create or delete,
   * whose files are listed as managed anyway). Reports run one after another.
   */
  reportFiles(): Promise<void> {
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
    await this.db.transaction((em) => this.files.replace(em, this.driver.backend, found, this.clock.now()));
  }
}
