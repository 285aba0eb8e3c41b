import type { Provider, Type } from '@nestjs/common';
import { VolumeActionsService } from './volume-actions.service';
import { VolumeAttachFlowService } from './volume-attach-flow.service';
import { VolumeCreateService } from './volume-create.service';
import { VolumeLifecycleService } from './volume-lifecycle.service';
import { VolumeMetadataService } from './volume-metadata.service';
import { VolumeMigrationService } from './volume-migration.service';
import { VolumesController } from './volumes.controller';
import { VolumesService } from './volumes.service';

// Controllers and providers of this area, registered in VolumeApiModule: one service per Cinder
// seam (reads, create, lifecycle, attach flow, migration/retype, metadata) and the action table.
export const volumeControllers: Type[] = [VolumesController];
export const volumeProviders: Provider[] = [
  VolumesService,
  VolumeCreateService,
  VolumeLifecycleService,
  VolumeAttachFlowService,
  VolumeMigrationService,
  VolumeMetadataService,
  VolumeActionsService,
];
