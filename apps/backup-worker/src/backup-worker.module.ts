import { type DynamicModule, Module } from '@nestjs/common';
import type { BackupWorkerConfig } from './config';
import { VOLUME_BACKEND_CONFIG } from './volume-backend/volume-backend.config';
import { VolumeBackendService } from './volume-backend/volume-backend.service';

/** Runs volume back-end operations and backups. */
@Module({})
export class BackupWorkerModule {
  static forRoot(config: BackupWorkerConfig): DynamicModule {
    return {
      module: BackupWorkerModule,
      providers: [{ provide: VOLUME_BACKEND_CONFIG, useValue: config.volumeBackend }, VolumeBackendService],
      exports: [VolumeBackendService],
    };
  }
}
