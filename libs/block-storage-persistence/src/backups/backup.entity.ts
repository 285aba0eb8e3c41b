import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Row shape of `backups` (see the migration for indexes; BackupRepository reads and writes it with SQL). */
@Entity({ name: 'backups' })
export class BackupEntity {
  @PrimaryColumn('uuid') id!: string;
  @Column({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'user_id', type: 'varchar', length: 255, nullable: true }) userId!: string | null;
  @Column({ name: 'volume_id', type: 'uuid' }) volumeId!: string;
  @Column({ name: 'snapshot_id', type: 'uuid', nullable: true }) snapshotId!: string | null;
  @Column({ name: 'parent_id', type: 'uuid', nullable: true }) parentId!: string | null;
  @Column({ name: 'display_name', type: 'varchar', length: 255, nullable: true }) displayName!: string | null;
  @Column({ name: 'display_description', type: 'varchar', length: 255, nullable: true }) displayDescription!:
    string | null;
  @Column({ type: 'varchar', length: 32 }) status!: string;
  @Column({ name: 'fail_reason', type: 'varchar', length: 1024, nullable: true }) failReason!: string | null;
  @Column({ type: 'integer' }) size!: number;
  @Column({ name: 'object_count', type: 'integer', default: 0 }) objectCount!: number;
  @Column({ name: 'availability_zone', type: 'varchar', length: 255, nullable: true }) availabilityZone!:
    string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) container!: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) host!: string | null;
  @Column({ type: 'varchar', length: 255, nullable: true }) service!: string | null;
  @Column({ name: 'service_metadata', type: 'varchar', length: 255, nullable: true }) serviceMetadata!:
    string | null;
  @Column({ name: 'num_dependent_backups', type: 'integer', default: 0 }) numDependentBackups!: number;
  @Column({ type: 'jsonb', default: {} }) metadata!: Record<string, string>;
  @Column({ name: 'encryption_key_id', type: 'uuid', nullable: true }) encryptionKeyId!: string | null;
  @Column({ name: 'restore_volume_id', type: 'uuid', nullable: true }) restoreVolumeId!: string | null;
  @Column({ name: 'volume_previous_status', type: 'varchar', length: 32, nullable: true })
  volumePreviousStatus!: string | null;
  @Column({ name: 'import_record', type: 'jsonb', nullable: true }) importRecord!: Record<
    string,
    unknown
  > | null;
  /** Whole percent of the running create or restore (ours; null until a job reports). */
  @Column({ type: 'smallint', nullable: true }) progress!: number | null;
  @Column({ name: 'data_timestamp', type: 'timestamptz' }) dataTimestamp!: Date;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true }) deletedAt!: Date | null;
}
