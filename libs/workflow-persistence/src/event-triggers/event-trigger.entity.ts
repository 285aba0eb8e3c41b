import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Stored event triggers (Mistral's `event_triggers_v2`): start `workflow_id` with its input and params
 * whenever a notification `event` arrives on (`exchange`, `topic`). Unique per (exchange, topic, event,
 * workflow, project) as in Mistral.
 */
@Entity({ name: 'event_triggers' })
@Index('UQ_event_triggers_same_event', ['exchange', 'topic', 'event', 'workflowId', 'projectId'], {
  unique: true,
})
export class EventTriggerEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_event_triggers' })
  id!: string;

  @Column({ type: 'varchar', length: 200, default: '' })
  name!: string;

  @Column({ name: 'project_id', type: 'varchar', length: 255 })
  projectId!: string;

  @Column({ type: 'varchar', length: 8, default: 'private' })
  scope!: 'private' | 'public';

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId!: string;

  @Column({ name: 'workflow_input', type: 'jsonb' })
  workflowInput!: Record<string, unknown>;

  @Column({ name: 'workflow_params', type: 'jsonb' })
  workflowParams!: Record<string, unknown>;

  @Column({ type: 'varchar', length: 80 })
  exchange!: string;

  @Column({ type: 'varchar', length: 80 })
  topic!: string;

  @Column({ type: 'varchar', length: 80 })
  event!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true })
  updatedAt!: Date | null;
}

/** Message ids of notifications already handled (exactly-once firing across listener replicas). */
@Entity({ name: 'event_trigger_notifications' })
export class EventTriggerNotificationEntity {
  @PrimaryColumn({
    name: 'message_id',
    type: 'varchar',
    length: 255,
    primaryKeyConstraintName: 'PK_event_trigger_notifications',
  })
  messageId!: string;

  @Column({ name: 'received_at', type: 'timestamptz' })
  receivedAt!: Date;
}

export const eventTriggerEntities = [EventTriggerEntity, EventTriggerNotificationEntity];
