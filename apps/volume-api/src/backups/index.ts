import type { Provider, Type } from '@nestjs/common';
import { BackupsController } from './backups.controller';
import { BackupsService } from './backups.service';

// Controllers and providers of this area, registered in VolumeApiModule.
export const backupControllers: Type[] = [BackupsController];
export const backupProviders: Provider[] = [BackupsService];
