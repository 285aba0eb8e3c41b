import type { Provider, Type } from '@nestjs/common';
import { SnapshotManageController, VolumeManageController } from './manage.controllers';
import { ManageService } from './manage.service';

// Controllers and providers of manage (os-volume-manage, os-snapshot-manage), registered in VolumeApiModule.
export const manageControllers: Type[] = [VolumeManageController, SnapshotManageController];
export const manageProviders: Provider[] = [ManageService];
