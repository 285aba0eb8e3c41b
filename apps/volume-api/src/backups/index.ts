import type { Provider, Type } from '@nestjs/common';
import { BackupCreateService } from './backup-create.service';
import { BackupRecordsService } from './backup-records.service';
import { BackupRestoreService } from './backup-restore.service';
import { BackupsController } from './backups.controller';
import { BackupsService } from './backups.service';

// Controllers and providers of this area, registered in VolumeApiModule: one service per Cinder
// seam (reads, update, delete and admin actions; create; restore; export and import records).
export const backupControllers: Type[] = [BackupsController];
export const backupProviders: Provider[] = [
  BackupsService,
  BackupCreateService,
  BackupRestoreService,
  BackupRecordsService,
];
