import { Column, Entity, PrimaryColumn } from 'typeorm';

@Entity({ name: 'services' })
export class ServiceEntity {
  @PrimaryColumn({ type: 'varchar', length: 255 }) binary!: string;
  @PrimaryColumn({ type: 'varchar', length: 255 }) host!: string;
  @Column({ name: 'availability_zone', type: 'varchar', length: 255 }) availabilityZone!: string;
  @Column({ type: 'boolean', default: false }) disabled!: boolean;
  @Column({ name: 'disabled_reason', type: 'varchar', length: 255, nullable: true }) disabledReason!:
    string | null;
  @Column({ type: 'boolean', default: false }) frozen!: boolean;
  @Column({ name: 'report_count', type: 'integer', default: 0 }) reportCount!: number;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true }) updatedAt!: Date | null;
  @Column({ name: 'modified_at', type: 'timestamptz', nullable: true }) modifiedAt!: Date | null;
}

@Entity({ name: 'messages' })
export class MessageEntity {
  @PrimaryColumn({ type: 'uuid' }) id!: string;
  @Column({ name: 'project_id', type: 'varchar', length: 255 }) projectId!: string;
  @Column({ name: 'request_id', type: 'varchar', length: 255, nullable: true }) requestId!: string | null;
  @Column({ name: 'resource_type', type: 'varchar', length: 255, nullable: true }) resourceType!:
    string | null;
  @Column({ name: 'resource_uuid', type: 'varchar', length: 36, nullable: true }) resourceUuid!:
    string | null;
  @Column({ name: 'event_id', type: 'varchar', length: 255 }) eventId!: string;
  @Column({ name: 'action_id', type: 'varchar', length: 10 }) actionId!: string;
  @Column({ name: 'detail_id', type: 'varchar', length: 10 }) detailId!: string;
  @Column({ name: 'message_level', type: 'varchar', length: 255 }) messageLevel!: string;
  @Column({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt!: Date;
  @Column({ type: 'boolean', default: false }) deleted!: boolean;
}
