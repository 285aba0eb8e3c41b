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
import { poolControllers, poolProviders } from './pools';
import { LimitsController, QuotaSetsController } from './quotas/quotas.controller';
import { QuotasService } from './quotas/quotas.service';
import { SnapshotsController } from './snapshots/snapshots.controller';
import { SnapshotsService } from './snapshots/snapshots.service';
import { typeControllers, typeProviders } from './types';
import { VersionsController } from './versions/versions.controller';
import { VOLUME_API_CONFIG } from './volume-api.tokens';
import { volumeControllers, volumeProviders } from './volumes';

@Module({})
export class VolumeApiModule {
  static forRoot(config: VolumeApiConfig): DynamicModule {
    return {
      module: VolumeApiModule,
      controllers: [
        VersionsController,
        ExtensionsController,
        ...typeControllers,
        ...volumeControllers,
        SnapshotsController,
        QuotaSetsController,
        LimitsController,
        ...poolControllers,
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
        ...typeProviders,
        ...volumeProviders,
        SnapshotsService,
        QuotasService,
        ...poolProviders,
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
