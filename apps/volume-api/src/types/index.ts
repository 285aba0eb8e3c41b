import type { Provider, Type } from '@nestjs/common';
import { DefaultTypesService } from './default-types.service';
import { VolumeTypeAccessService } from './volume-type-access.service';
import { VolumeTypeEncryptionService } from './volume-type-encryption.service';
import { VolumeTypeSpecsService } from './volume-type-specs.service';
import { DefaultTypesController, VolumeTypesController } from './volume-types.controller';
import { VolumeTypesService } from './volume-types.service';

// Controllers and providers of this area, registered in VolumeApiModule: one service per Cinder
// seam (types, extra specs, encryption, access, per-project default types).
export const typeControllers: Type[] = [VolumeTypesController, DefaultTypesController];
export const typeProviders: Provider[] = [
  VolumeTypesService,
  VolumeTypeSpecsService,
  VolumeTypeEncryptionService,
  VolumeTypeAccessService,
  DefaultTypesService,
];
