import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * Stored environments (Mistral's `environments_v2`): named sets of variables an execution or a cron
 * trigger names in `params.env`. Unique per (name, project) as in Mistral; `scope: public` makes one
 * readable (and usable by name) from every project.
 */
@Entity({ name: 'environments' })
@Index('UQ_environments_name_project', ['name', 'projectId'], { unique: true })
export class EnvironmentEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'PK_environments' })
  id!: string;

  @Column({ type: 'varchar', length: 200 })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  variables!: Record<string, unknown> | null;

  @Column({ type: 'varchar', length: 8, default: 'private' })
  scope!: 'private' | 'public';

  @Column({ name: 'project_id', type: 'varchar', length: 255 })
  projectId!: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', nullable: true })
  updatedAt!: Date | null;
}

export const environmentEntities = [EnvironmentEntity];
