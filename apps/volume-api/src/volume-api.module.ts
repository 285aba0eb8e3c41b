import { type DynamicModule, Module } from '@nestjs/common';
import { adminControllers, adminProviders } from './admin';
import { attachmentControllers, attachmentProviders } from './attachments';
import { backupControllers, backupProviders } from './backups';
import { backupPolicyControllers, backupPolicyProviders } from './backup-policies';
import type { VolumeApiConfig } from './config';
import { groupControllers, groupProviders } from './groups';
import { manageControllers, manageProviders } from './manage';
import { qosControllers, qosProviders } from './qos';
import { ExtensionsController } from './extensions/extensions.controller';
import { AvailabilityZonesController, PoolsService, SchedulerStatsController } from './pools/pools.controller';
import { LimitsController, QuotaSetsController, QuotasService } from './quotas/quotas.controller';
import { SnapshotsController } from './snapshots/snapshots.controller';
import { SnapshotsService } from './snapshots/snapshots.service';
import { DefaultTypesController, VolumeTypesController } from './types/volume-types.controller';
import { VolumeTypesService } from './types/volume-types.service';
import { VersionsController } from './versions/versions.controller';
import { VOLUME_API_CONFIG } from './volume-api.tokens';
import { VolumesController } from './volumes/volumes.controller';
import { VolumesService } from './volumes/volumes.service';

@Module({})
export class VolumeApiModule {
  static forRoot(config: VolumeApiConfig): DynamicModule {
    return {
      module: VolumeApiModule,
      controllers: [
        VersionsController,
        ExtensionsController,
        VolumeTypesController,
        DefaultTypesController,
        VolumesController,
        SnapshotsController,
        QuotaSetsController,
        LimitsController,
        SchedulerStatsController,
        AvailabilityZonesController,
        ...backupControllers,
        ...backupPolicyControllers,
        ...qosControllers,
        ...groupControllers,
        ...adminControllers,
        ...manageControllers,
        ...attachmentControllers,
      ],
      providers: [
        { provide: VOLUME_API_CONFIG, useValue: config },
        VolumeTypesService,
        VolumesService,
        SnapshotsService,
        QuotasService,
        PoolsService,
        ...backupProviders,
        ...backupPolicyProviders,
        ...qosProviders,
        ...groupProviders,
        ...adminProviders,
        ...manageProviders,
        ...attachmentProviders,
      ],
    };
  }
}
