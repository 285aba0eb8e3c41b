import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Stored cron triggers (Mistral's `cron_triggers_v2`). Unique per (name, project). The scheduler's due
 * query walks `IDX_cron_triggers_next` (next_execution_time, id); one trigger row is the unit of
 * locking between scheduler replicas and API deletes. Hashes of input and params keep Mistral's second
 * uniqueness rule (same workflow, input, params, pattern, first time and count) indexable.
 */
@Entity({ name: 'cron_triggers' })
@Index('UQ_cron_triggers_project_name', ['projectId', 'name'], { unique: true })
@Index('IDX_cron_triggers_next', ['nextExecutionTime', 'id'])
export class CronTriggerEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_cron_triggers' })
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ name: 'project_id', type: 'varchar', length: 255 })
  projectId!: string;

  @Column({ type: 'varchar', length: 8, default: 'private' })
  scope!: 'private' | 'public';

  @Column({ name: 'workflow_id', type: 'uuid' })
  workflowId!: string;

  @Column({ name: 'workflow_name', type: 'varchar', length: 255 })
  workflowName!: string;

  @Column({ name: 'workflow_namespace', type: 'varchar', length: 255, default: '' })
  workflowNamespace!: string;

  @Column({ name: 'workflow_input', type: 'jsonb' })
  workflowInput!: Record<string, unknown>;

  @Column({ name: 'workflow_params', type: 'jsonb' })
  workflowParams!: Record<string, unknown>;

  @Column({ name: 'workflow_input_hash', type: 'varchar', length: 64 })
  workflowInputHash!: string;

  @Column({ name: 'workflow_params_hash', type: 'varchar', length: 64 })
  workflowParamsHash!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  pattern!: string | null;

  @Column({ name: 'first_execution_time', type: 'timestamptz', nullable: true })
  firstExecutionTime!: Date | null;

  @Column({ name: 'next_execution_time', type: 'timestamptz' })
  nextExecutionTime!: Date;

  @Column({ name: 'remaining_executions', type: 'integer', nullable: true })
  remainingExecutions!: number | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true })
  updatedAt!: Date | null;
}

export const cronTriggerEntities = [CronTriggerEntity];
