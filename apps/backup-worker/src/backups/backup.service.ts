import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { BackupRepository, Settlements } from '@osc/block-storage-persistence';
import {
  BACKUP_DELETE_JOB,
  BACKUP_IMPORT_JOB,
  BACKUP_JOB_NAMES,
  backupJobQueue,
  type BackupJobPayloads,
} from '@osc/contracts';
import { type JobQueue, type Worker } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, JOB_QUEUE, type Clock } from '@osc/platform';
import { ensureDir } from '../volume-backend/sparse-file';
import { VOLUME_PATHS, type VolumePaths } from '../volume-backend/volume-paths';
import { JobTable } from '../jobs/job-table';
import { BackupCreateProcessor } from './backup-create.processor';
import { BackupDeleteProcessor } from './backup-delete.processor';
import { BackupImportProcessor } from './backup-import.processor';
import { BackupRestoreProcessor } from './backup-restore.processor';
import { BACKUP_CONFIG, type BackupConfig } from './backup.config';

/**
 * Backup jobs of one back end (spec 7.9, 8.3, 11): create, restore, delete and import, on the
 * backup queue of the back end whose volume files this worker holds, one processor each. Every
 * processor first checks the row is still in the status the job expects, so a redelivered job
 * does nothing; outcomes are written in one transaction (status, quota settlement, source status)
 * before the job is acked. On start, work interrupted by a restart is failed or resumed (BS-8.3.6).
 */
@Injectable()
export class BackupService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly backups = new BackupRepository();
  private readonly settlements = new Settlements();
  private worker: Worker | null = null;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(BACKUP_CONFIG) private readonly config: BackupConfig,
    @Inject(VOLUME_PATHS) private readonly paths: VolumePaths,
    private readonly creates: BackupCreateProcessor,
    private readonly restores: BackupRestoreProcessor,
    private readonly deletes: BackupDeleteProcessor,
    private readonly imports: BackupImportProcessor,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.store.driver === 'posix') await ensureDir(this.config.store.directory);
    const table = this.jobTable();
    await this.recover();
    this.worker = await this.jobs.process(backupJobQueue(this.paths.backend), (job) => table.run(job), {
      concurrency: this.config.concurrency,
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
  }

  /**
   * BS-8.3.6: a backup left `creating` by a restart fails (its source returns to its previous
   * status, its quota stays counted until it is deleted); an import or a delete is driven again; a
   * restore ends with the backup `available` and the target volume `error_restoring`.
   */
  async recover(): Promise<void> {
    const queue = backupJobQueue(this.paths.backend);
    for (const b of await this.backups.listOnHost(this.db, this.paths.backend, [
      'creating',
      'restoring',
      'deleting',
    ])) {
      if (b.status === 'creating' && b.importRecord !== null) {
        await this.jobs.add(queue, {
          id: `backup-import-recover-${b.id}`,
          name: BACKUP_IMPORT_JOB,
          data: { backupId: b.id },
        });
      } else if (b.status === 'creating') {
        await this.creates.fail(b, 'The backup was interrupted by a restart of the backup service.');
      } else if (b.status === 'deleting') {
        await this.jobs.add(queue, {
          id: `backup-delete-${b.id}`,
          name: BACKUP_DELETE_JOB,
          data: { backupId: b.id },
        });
      } else {
        await this.db.transaction((em) =>
          this.settlements.endBackupRestore(
            em,
            b,
            'The restore was interrupted by a restart of the backup service.',
            this.clock.now(),
          ),
        );
      }
    }
  }

  /** One handler per backup job name (`BackupJobPayloads`); a missing one stops the start. */
  private jobTable(): JobTable<BackupJobPayloads> {
    return new JobTable<BackupJobPayloads>('backup service', BACKUP_JOB_NAMES, {
      'backup.create': (data) => this.creates.create(data),
      'backup.restore': (data) => this.restores.restore(data),
      'backup.delete': (data) => this.deletes.remove(data),
      'backup.import': (data) => this.imports.import(data),
    });
  }
}
