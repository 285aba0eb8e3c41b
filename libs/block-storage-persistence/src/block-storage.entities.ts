import { Column, Entity, PrimaryColumn } from 'typeorm';
import { adminEntities } from './admin';
import { backupEntities } from './backups';
import { groupEntities } from './groups';
import { qosEntities } from './qos';

/**
 * Row shapes of the block-storage tables (see the migration for indexes). Repositories read and
 * write them with SQL tuned per path; mappers turn rows into domain values, so entities never
 * reach the domain or the wire.
 */
@Entity({ name: 'volume_types' })
export class VolumeTypeEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ type: 'varchar', length: 255 }) name!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) description!: string | null;
  @Column({ name: 'is_public', type: 'boolean', default: true }) isPublic!: boolean;
  @Column({ name: 'qos_specs_id', type: 'uuid', nullable: true }) qosSpecsId!: string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'volume_type_extra_specs' })
export class VolumeTypeExtraSpecEntity {
  @PrimaryColumn({ name: 'volume_type_id', type: 'uuid' }) volumeTypeId!: string;
  @PrimaryColumn({ type: 'varchar', length: 255 }) key!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) value!: string | null;
}

@Entity({ name: 'volume_type_projects' })
export class VolumeTypeProjectEntity {
  @PrimaryColumn({ name: 'volume_type_id', type: 'uuid' }) volumeTypeId!: string;
  @PrimaryColumn({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}

@Entity({ name: 'volume_type_encryption' })
export class VolumeTypeEncryptionEntity {
  @PrimaryColumn({ name: 'encryption_id', type: 'uuid' }) encryptionId!: string;
  @Column({ name: 'volume_type_id', type: 'uuid' }) volumeTypeId!: string;
  @Column({ type: 'varchar', length: 255 }) provider!: string;
  @Column({ type: 'varchar', length: 255, nullable: true }) cipher!: string | null;
  @Column({ name: 'key_size', type: 'integer', nullable: true }) keySize!: number | null;
  @Column({ name: 'control_location', type: 'varchar', length: 16 }) controlLocation!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
}

@Entity({ name: 'default_volume_types' })
export class DefaultVolumeTypeEntity {
  @PrimaryColumn({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'volume_type_id', type: 'uuid' }) volumeTypeId!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
}

@Entity({ name: 'volumes' })
export class VolumeEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'user_id', type: 'varchar', length: 255, nullable: true }) userId!: string | null;
  @Column({ name: 'display_name', type: 'varchar', length: 255, nullable: true }) displayName!: string | null;
  @Column({ name: 'display_description', type: 'varchar', length: 255, nullable: true }) displayDescription!:
    string | null;
  @Column({ type: 'integer' }) size!: number;
  @Column({ type: 'varchar', length: 32 }) status!: string;
  @Column({ name: 'attach_status', type: 'varchar', length: 32, default: 'detached' }) attachStatus!: string;
  @Column({ name: 'availability_zone', type: 'varchar', length: 255, nullable: true }) availabilityZone!:
    string | null;
  @Column({ name: 'volume_type_id', type: 'uuid' }) volumeTypeId!: string;
  @Column({ name: 'snapshot_id', type: 'uuid', nullable: true }) snapshotId!: string | null;
  @Column({ name: 'source_volid', type: 'uuid', nullable: true }) sourceVolid!: string | null;
  @Column({ type: 'jsonb', default: {} }) metadata!: Record<string, string>;
  @Column({ name: 'admin_metadata', type: 'jsonb', default: {} }) adminMetadata!: Record<string, string>;
  @Column({ name: 'image_metadata', type: 'jsonb', nullable: true }) imageMetadata!: Record<
    string,
    string
  > | null;
  @Column({ type: 'boolean', default: false }) bootable!: boolean;
  @Column({ type: 'boolean', default: false }) encrypted!: boolean;
  @Column({ name: 'encryption_key_id', type: 'uuid', nullable: true }) encryptionKeyId!: string | null;
  @Column({ type: 'boolean', default: false }) multiattach!: boolean;
  @Column({ type: 'varchar', length: 255, nullable: true }) host!: string | null;
  @Column({ name: 'cluster_name', type: 'varchar', length: 255, nullable: true }) clusterName!: string | null;
  @Column({ name: 'provider_id', type: 'varchar', length: 255, nullable: true }) providerId!: string | null;
  @Column({ name: 'service_uuid', type: 'varchar', length: 36, nullable: true }) serviceUuid!: string | null;
  @Column({ name: 'shared_targets', type: 'boolean', nullable: true }) sharedTargets!: boolean | null;
  @Column({ name: 'migration_status', type: 'varchar', length: 255, nullable: true }) migrationStatus!:
    string | null;
  @Column({ name: 'name_id', type: 'uuid', nullable: true }) nameId!: string | null;
  @Column({ name: 'replication_status', type: 'varchar', length: 255, nullable: true }) replicationStatus!:
    string | null;
  @Column({ name: 'consistencygroup_id', type: 'uuid', nullable: true }) consistencygroupId!: string | null;
  @Column({ name: 'group_id', type: 'uuid', nullable: true }) groupId!: string | null;
  @Column({ name: 'use_quota', type: 'boolean', default: true }) useQuota!: boolean;
  @Column({ name: 'error_reason', type: 'varchar', length: 1024, nullable: true }) errorReason!:
    string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'snapshots' })
export class SnapshotEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'user_id', type: 'varchar', length: 255, nullable: true }) userId!: string | null;
  @Column({ name: 'volume_id', type: 'uuid' }) volumeId!: string;
  @Column({ name: 'volume_type_id', type: 'uuid', nullable: true }) volumeTypeId!: string | null;
  @Column({ name: 'display_name', type: 'varchar', length: 255, nullable: true }) displayName!: string | null;
  @Column({ name: 'display_description', type: 'varchar', length: 255, nullable: true }) displayDescription!:
    string | null;
  @Column({ type: 'integer' }) size!: number;
  @Column({ type: 'varchar', length: 32 }) status!: string;
  @Column({ type: 'varchar', length: 16, nullable: true }) progress!: string | null;
  @Column({ type: 'jsonb', default: {} }) metadata!: Record<string, string>;
  @Column({ name: 'group_snapshot_id', type: 'uuid', nullable: true }) groupSnapshotId!: string | null;
  @Column({ name: 'use_quota', type: 'boolean', default: true }) useQuota!: boolean;
  @Column({ type: 'varchar', length: 255, nullable: true }) host!: string | null;
  @Column({ name: 'error_reason', type: 'varchar', length: 1024, nullable: true }) errorReason!:
    string | null;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}

@Entity({ name: 'quota_limits' })
export class QuotaLimitEntity {
  @PrimaryColumn({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @PrimaryColumn({ type: 'varchar', length: 300 }) resource!: string;
  @Column({ name: 'hard_limit', type: 'integer' }) hardLimit!: number;
}

@Entity({ name: 'quota_class_limits' })
export class QuotaClassLimitEntity {
  @PrimaryColumn({ name: 'class_name', type: 'varchar', length: 255 }) className!: string;
  @PrimaryColumn({ type: 'varchar', length: 300 }) resource!: string;
  @Column({ name: 'hard_limit', type: 'integer' }) hardLimit!: number;
}

@Entity({ name: 'quota_usages' })
export class QuotaUsageEntity {
  @PrimaryColumn({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @PrimaryColumn({ type: 'varchar', length: 300 }) resource!: string;
  @Column({ name: 'in_use', type: 'bigint', default: 0 }) inUse!: string;
  @Column({ type: 'bigint', default: 0 }) reserved!: string;
}

@Entity({ name: 'storage_pools' })
export class StoragePoolEntity {
  @PrimaryColumn({ type: 'varchar', length: 255 }) name!: string;
  @Column({ type: 'varchar', length: 255 }) backend!: string;
  @Column({ name: 'availability_zone', type: 'varchar', length: 255 }) availabilityZone!: string;
  @Column({ type: 'jsonb' }) capabilities!: Record<string, unknown>;
  @Column({ name: 'updated_at', type: 'timestamptz' }) updatedAt!: Date;
}

export const blockStorageEntities = [
  VolumeTypeEntity,
  VolumeTypeExtraSpecEntity,
  VolumeTypeProjectEntity,
  VolumeTypeEncryptionEntity,
  DefaultVolumeTypeEntity,
  VolumeEntity,
  SnapshotEntity,
  QuotaLimitEntity,
  QuotaClassLimitEntity,
  QuotaUsageEntity,
  StoragePoolEntity,
  ...backupEntities,
  ...groupEntities,
  ...adminEntities,
  ...qosEntities,
];
