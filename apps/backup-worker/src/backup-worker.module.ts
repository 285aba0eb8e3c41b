import { type DynamicModule, Module } from '@nestjs/common';
import { BACKUP_CONFIG } from './backups/backup.config';
import { BackupRestorer } from './backups/backup-restorer';
import { BackupService } from './backups/backup.service';
import { BackupRebaseService } from './backup-rebase/backup-rebase.service';
import type { BackupWorkerConfig } from './config';
import { VOLUME_BACKEND_CONFIG } from './volume-backend/volume-backend.config';
import { VolumeBackendService } from './volume-backend/volume-backend.service';

/** Runs volume back-end operations and backups. */
@Module({})
export class BackupWorkerModule {
  static forRoot(config: BackupWorkerConfig): DynamicModule {
    return {
      module: BackupWorkerModule,
      providers: [
        { provide: VOLUME_BACKEND_CONFIG, useValue: config.volumeBackend },
        VolumeBackendService,
        { provide: BACKUP_CONFIG, useValue: config.backup },
        BackupRestorer,
        BackupService,
        BackupRebaseService,
      ],
      exports: [VolumeBackendService],
    };
  }
}
