import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The environments table (Mistral's `environments_v2`): Mistral's unique (name, project_id) as a
 * unique index, which also serves the by-name lookups (an own environment or a public one); (scope,
 * name) for the lookup of public ones from other projects, and (project, created_at, id) for the
 * default list order. `variables` is nullable as in Mistral (an environment created without any).
 * SQL that runs the same on PostgreSQL and PGlite.
 */
export class CreateEnvironments1764420000000 implements MigrationInterface {
  name = 'CreateEnvironments1764420000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "environments" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(200) NOT NULL,
        "description" text,
        "variables" jsonb,
        "scope" varchar(8) NOT NULL DEFAULT 'private',
        "project_id" varchar(255) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_environments" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_environments_scope" CHECK ("scope" IN ('private', 'public'))
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_environments_name_project" ON "environments" ("name", "project_id")`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_environments_scope_name" ON "environments" ("scope", "name")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_environments_project_created" ON "environments" ("project_id", "created_at", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "environments"`);
  }
}

export const environmentMigrations = [CreateEnvironments1764420000000];
