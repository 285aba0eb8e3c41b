import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Row shapes of the transfer and group tables (see CreateGroupsAndTransfers for indexes). */
@Entity({ name: 'volume_transfers' })
export class VolumeTransferEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ name: 'volume_id', type: 'uuid' }) volumeId!: string;
  @Column({ name: 'display_name', type: 'varchar', length: 255, nullable: true }) displayName!: string | null;
  @Column({ type: 'varchar', length: 8 }) salt!: string;
  @Column({ name: 'crypt_hash', type: 'varchar', length: 255 }) cryptHash!: string;
  @Column({ name: 'no_snapshots', type: 'boolean', default: false }) noSnapshots!: boolean;
  @Column({ name: 'source_project_id', type: 'varchar', length: 255 }) sourceProjectId!: string;
  @Column({ name: 'destination_project_id', type: 'varchar', length: 255, nullable: true })
  destinationProjectId!: string | null;
  @Column({ type: 'boolean', default: false }) accepted!: boolean;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'group_types' })
export class GroupTypeEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'varchar', length: 255 }) name!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) description!: string | null;
  @Column({ name: 'is_public', type: 'boolean', default: true }) isPublic!: boolean;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'group_type_specs' })
export class GroupTypeSpecEntity {
  @PrimaryColumn({ name: 'group_type_id', type: 'uuid' }) groupTypeId!: string;
  @PrimaryColumn({ type: 'varchar', length: 255 }) key!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) value!: string | null;
}

@Entity({ name: 'groups' })
export class GroupEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'user_id', type: 'varchar', length: 255, nullable: true }) userId!: string | null;
  @Column({ name: 'display_name', type: 'varchar', length: 255, nullable: true }) displayName!: string | null;
  @Column({ name: 'display_description', type: 'varchar', length: 255, nullable: true }) displayDescription!:
    string | null;
  @Column({ name: 'availability_zone', type: 'varchar', length: 255 }) availabilityZone!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) host!: string | null;
  @Column({ type: 'varchar', length: 32 }) status!: string;
  @Column({ type: 'boolean', default: false }) pending!: boolean;
  @Column({ name: 'group_type_id', type: 'uuid' }) groupTypeId!: string;
  @Column({ name: 'group_snapshot_id', type: 'uuid', nullable: true }) groupSnapshotId!: string | null;
  @Column({ name: 'source_group_id', type: 'uuid', nullable: true }) sourceGroupId!: string | null;
  @Column({ name: 'replication_status', type: 'varchar', length: 255, nullable: true }) replicationStatus!:
    string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'group_volume_types' })
export class GroupVolumeTypeEntity {
  @PrimaryColumn({ name: 'group_id', type: 'uuid' }) groupId!: string;
  @PrimaryColumn({ name: 'volume_type_id', type: 'uuid' }) volumeTypeId!: string;
  @Column({ type: 'integer' }) position!: number;
}

@Entity({ name: 'group_snapshots' })
export class GroupSnapshotEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'user_id', type: 'varchar', length: 255, nullable: true }) userId!: string | null;
  @Column({ name: 'group_id', type: 'uuid' }) groupId!: string;
  @Column({ name: 'group_type_id', type: 'uuid' }) groupTypeId!: string;
  @Column({ name: 'display_name', type: 'varchar', length: 255, nullable: true }) displayName!: string | null;
  @Column({ name: 'display_description', type: 'varchar', length: 255, nullable: true }) displayDescription!:
    string | null;
  @Column({ type: 'varchar', length: 32 }) status!: string;
  @Column({ type: 'boolean', default: false }) pending!: boolean;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}
