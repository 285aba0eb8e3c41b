import type { Provider, Type } from '@nestjs/common';
import { GroupTypesService } from './group-types.service';
import {
  CgsnapshotsController,
  ConsistencyGroupsController,
  GroupSnapshotsController,
  GroupsController,
  GroupTypesController,
} from './groups.controller';
import { GroupsService } from './groups.service';
import { LegacyTransfersController, TransfersController } from './transfers.controller';
import { TransfersService } from './transfers.service';

// Controllers and providers of this area, registered in VolumeApiModule.
export const groupControllers: Type[] = [
  LegacyTransfersController,
  TransfersController,
  GroupTypesController,
  GroupsController,
  GroupSnapshotsController,
  ConsistencyGroupsController,
  CgsnapshotsController,
];
export const groupProviders: Provider[] = [TransfersService, GroupTypesService, GroupsService];
