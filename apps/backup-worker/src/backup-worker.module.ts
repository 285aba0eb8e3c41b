import { type DynamicModule, Module } from '@nestjs/common';
import { BACKUP_CONFIG } from './backups/backup.config';
import { BackupRestorer } from './backups/backup-restorer';
import { BackupCreateProcessor } from './backups/backup-create.processor';
import { BackupDeleteProcessor } from './backups/backup-delete.processor';
import { BackupImportProcessor } from './backups/backup-import.processor';
import { BackupRestoreProcessor } from './backups/backup-restore.processor';
import { BackupService } from './backups/backup.service';
import { BackupRebaseService } from './backup-rebase/backup-rebase.service';
import type { BackupWorkerConfig } from './config';
import { VOLUME_BACKEND_CONFIG } from './volume-backend/volume-backend.config';
import { CrashRecovery } from './volume-backend/crash-recovery';
import { FileVolumeDriver } from './volume-backend/file-volume-driver';
import { PoolReporter } from './volume-backend/pool-reporter';
import { VolumeBackendService } from './volume-backend/volume-backend.service';
import { VolumeManage } from './volume-backend/volume-manage';
import { VolumeMigration } from './volume-backend/volume-migration';
import { VolumeOperations } from './volume-backend/volume-operations';
import { VOLUME_PATHS } from './volume-backend/volume-paths';

/** Runs volume back-end operations and backups. */
@Module({})
export class BackupWorkerModule {
  static forRoot(config: BackupWorkerConfig): DynamicModule {
    return {
      module: BackupWorkerModule,
      providers: [
        { provide: VOLUME_BACKEND_CONFIG, useValue: config.volumeBackend },
        FileVolumeDriver,
        { provide: VOLUME_PATHS, useExisting: FileVolumeDriver },
        PoolReporter,
        VolumeOperations,
        VolumeMigration,
        VolumeManage,
        CrashRecovery,
        VolumeBackendService,
        { provide: BACKUP_CONFIG, useValue: config.backup },
        BackupRestorer,
        BackupCreateProcessor,
        BackupRestoreProcessor,
        BackupDeleteProcessor,
        BackupImportProcessor,
        BackupService,
        BackupRebaseService,
      ],
      exports: [VolumeBackendService],
    };
  }
}
