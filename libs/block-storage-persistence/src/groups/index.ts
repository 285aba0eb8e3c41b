import {
  GroupEntity,
  GroupSnapshotEntity,
  GroupTypeEntity,
  GroupTypeSpecEntity,
  GroupVolumeTypeEntity,
  VolumeTransferEntity,
} from './group.entities';
import { CreateGroupsAndTransfers1764400000000 } from './group.migration';

export * from './group.entities';
export * from './group.migration';
export * from './group.repository';

// Volume transfers, consistency groups, generic groups and group types: entities and migrations.
export const groupEntities: (new (...args: never[]) => unknown)[] = [
  VolumeTransferEntity,
  GroupTypeEntity,
  GroupTypeSpecEntity,
  GroupEntity,
  GroupVolumeTypeEntity,
  GroupSnapshotEntity,
];
export const groupMigrations: (new (...args: never[]) => unknown)[] = [CreateGroupsAndTransfers1764400000000];
