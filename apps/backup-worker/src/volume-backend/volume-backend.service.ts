import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { VOLUME_EXTEND_ATTEMPTS } from '@osc/block-storage-domain';
import {
  BACKEND_JOB_NAMES,
  backendJobQueue,
  type BackendJobPayloads,
  type VolumeExtendJob,
} from '@osc/contracts';
import type { Job, JobQueue, Worker } from '@osc/messaging';
import { JOB_QUEUE } from '@osc/platform';
import { productMetrics, timed } from '@osc/telemetry';
import { JobTable } from '../jobs/job-table';
import { CrashRecovery } from './crash-recovery';
import { FileVolumeDriver } from './file-volume-driver';
import { PoolReporter } from './pool-reporter';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from './volume-backend.config';
import { VolumeManage } from './volume-manage';
import { VolumeMigration } from './volume-migration';
import { VolumeOperations } from './volume-operations';

/**
 * The volume back end's manager: starts its parts in order and dispatches the jobs of its queue,
 * one handler per job name (`BackendJobPayloads`), checked when it starts. The bytes are the
 * file volume driver's; lifecycle jobs are `VolumeOperations`, migration `VolumeMigration`,
 * manage `VolumeManage`; capacity reports `PoolReporter`; work a restart interrupted `CrashRecovery`.
 * Every handler checks the row is still in the status the job expects, so redelivered jobs do
 * nothing (BS-8.6.1).
 */
@Injectable()
export class VolumeBackendService implements OnApplicationBootstrap, OnModuleDestroy {
  private worker: Worker | null = null;

  constructor(
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(VOLUME_BACKEND_CONFIG) private readonly config: VolumeBackendConfig,
    private readonly driver: FileVolumeDriver,
    private readonly reporter: PoolReporter,
    private readonly recovery: CrashRecovery,
    private readonly operations: VolumeOperations,
    private readonly migration: VolumeMigration,
    private readonly manage: VolumeManage,
  ) {}

  /** `host@backend` */
  get backend(): string {
    return this.driver.backend;
  }

  /** Builds the job table (a missing handler stops the start), then starts in order. */
  async onApplicationBootstrap(): Promise<void> {
    const table = this.jobTable();
    await this.driver.prepare();
    await this.migration.serveData();
    await this.reporter.start();
    this.worker = await this.jobs.process(backendJobQueue(this.backend), (job) => this.handle(table, job), {
      concurrency: this.config.concurrency,
    });
    await this.recovery.recover();
  }

  async onModuleDestroy(): Promise<void> {
    this.reporter.stopTimer();
    await this.worker?.close();
    await this.reporter.settled();
    await this.migration.stopServing();
  }

  private jobTable(): JobTable<BackendJobPayloads> {
    const ops = this.operations;
    return new JobTable<BackendJobPayloads>('volume back end', BACKEND_JOB_NAMES, {
      'volume.create': (data) => ops.createVolume(data),
      'volume.delete': (data) => ops.deleteVolume(data),
      'volume.extend': (data, job) => this.extendVolume(data, job),
      'volume.revert': (data) => ops.revertVolume(data),
      'volume.migrate': (data) => this.migration.migrateVolume(data),
      'volume.manage': (data) => this.manage.manageVolume(data),
      'volume.unmanage': (data) => this.manage.unmanageVolume(data),
      'snapshot.create': (data) => ops.createSnapshot(data),
      'snapshot.delete': (data) => ops.deleteSnapshot(data),
      'snapshot.manage': (data) => this.manage.manageSnapshot(data),
      'snapshot.unmanage': (data) => this.manage.unmanageSnapshot(data),
    });
  }

  private handle(table: JobTable<BackendJobPayloads>, job: Job): Promise<void> {
    // Per operation (the job name: volume.create, snapshot.delete, ...): count and duration (docs/metrics.md).
    return timed(
      () => table.run(job),
      (seconds, ok) => {
        productMetrics.volumeOperations.labels(job.name, ok ? 'ok' : 'error').inc();
        productMetrics.volumeOperationDuration.labels(job.name).observe(seconds);
      },
    );
  }

  private async extendVolume(data: VolumeExtendJob, job: Job): Promise<void> {
    try {
      return await this.operations.extendVolume(data);
    } catch (err) {
      // Last run: the volume ends in error_extending and its reservation is released rather
      // than left `extending` with reserved quota nobody settles.
      if (job.attempt >= VOLUME_EXTEND_ATTEMPTS)
        await this.operations.failExtend(data.volumeId, `Extending the volume failed: ${String(err)}`);
      throw err;
    }
  }
}
