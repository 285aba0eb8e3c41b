import type { Provider, Type } from '@nestjs/common';
import { GroupActionsService } from './group-actions.service';
import { GroupFromSourceService } from './group-from-source.service';
import { GroupLookupService } from './group-lookup.service';
import { GroupMembershipService } from './group-membership.service';
import { GroupSnapshotsService } from './group-snapshots.service';
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
export const groupProviders: Provider[] = [
  TransfersService,
  GroupTypesService,
  GroupLookupService,
  GroupsService,
  GroupMembershipService,
  GroupActionsService,
  GroupFromSourceService,
  GroupSnapshotsService,
];
