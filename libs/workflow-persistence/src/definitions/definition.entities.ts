import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Stored workflow definitions (Mistral's `workflow_definitions_v2`). Unique per (project, namespace,
 * name); the parsed spec is kept next to the text so executions and the API never re-parse.
 * `input` (display string) and `interface` (JSON text) are rendered once at write time so that lists
 * serialise rows without touching the spec. Timestamps have whole seconds, as in the reference.
 */
@Entity({ name: 'workflow_definitions' })
@Index('UQ_workflow_definitions_project_namespace_name', ['projectId', 'namespace', 'name'], { unique: true })
export class WorkflowDefinitionEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_workflow_definitions' })
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  namespace!: string;

  @Column({ name: 'project_id', type: 'varchar', length: 255 })
  projectId!: string;

  @Column({ type: 'varchar', length: 8 })
  scope!: 'private' | 'public';

  @Column({ type: 'text' })
  definition!: string;

  @Column({ type: 'varchar', length: 32 })
  checksum!: string;

  @Column({ type: 'jsonb' })
  spec!: unknown;

  @Column({ type: 'text' })
  input!: string;

  @Column({ type: 'text' })
  interface!: string;

  @Column({ type: 'jsonb' })
  tags!: string[];

  @Column({ name: 'is_system', type: 'boolean', default: false })
  isSystem!: boolean;

  @Column({ name: 'workbook_name', type: 'varchar', length: 255, nullable: true })
  workbookName!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true })
  updatedAt!: Date | null;
}

/** Stored workbooks (Mistral's `workbooks_v2`); members are rows of the other two tables. */
@Entity({ name: 'workbooks' })
@Index('UQ_workbooks_project_namespace_name', ['projectId', 'namespace', 'name'], { unique: true })
export class WorkbookEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_workbooks' })
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  namespace!: string;

  @Column({ name: 'project_id', type: 'varchar', length: 255 })
  projectId!: string;

  @Column({ type: 'varchar', length: 8 })
  scope!: 'private' | 'public';

  @Column({ type: 'text' })
  definition!: string;

  @Column({ type: 'jsonb' })
  spec!: unknown;

  @Column({ type: 'jsonb' })
  tags!: string[];

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true })
  updatedAt!: Date | null;
}

/**
 * Action definitions: ad-hoc actions (project rows) and the standard system actions (`is_system`,
 * no project, scope public, synchronised from the domain's list at start-up).
 */
@Entity({ name: 'action_definitions' })
export class ActionDefinitionEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_action_definitions' })
  id!: string;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  namespace!: string;

  @Column({ name: 'project_id', type: 'varchar', length: 255, nullable: true })
  projectId!: string | null;

  @Column({ type: 'varchar', length: 8 })
  scope!: 'private' | 'public';

  @Column({ type: 'text' })
  definition!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text', nullable: true })
  input!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  spec!: unknown;

  @Column({ type: 'jsonb' })
  tags!: string[];

  @Column({ name: 'is_system', type: 'boolean', default: false })
  isSystem!: boolean;

  @Column({ name: 'workbook_name', type: 'varchar', length: 255, nullable: true })
  workbookName!: string | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true })
  updatedAt!: Date | null;
}

export const definitionEntities = [WorkflowDefinitionEntity, WorkbookEntity, ActionDefinitionEntity];
