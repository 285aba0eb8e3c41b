import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tables for workflow definitions, workbooks and action definitions, with an index for every read
 * path: unique (project, namespace, name) for creates and own-project lookups, (name, namespace) for
 * lookups that may hit public rows of other projects, and (created_at, id) / (name, id) for the keyset
 * pages of the default list orders. SQL that runs the same on PostgreSQL and PGlite.
 */
export class CreateDefinitions1763900000000 implements MigrationInterface {
  name = 'CreateDefinitions1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "workflow_definitions" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "namespace" varchar(255) NOT NULL DEFAULT '',
        "project_id" varchar(255) NOT NULL,
        "scope" varchar(8) NOT NULL,
        "definition" text NOT NULL,
        "checksum" varchar(32) NOT NULL,
        "spec" jsonb NOT NULL,
        "input" text NOT NULL,
        "interface" text NOT NULL,
        "tags" jsonb NOT NULL DEFAULT '[]',
        "is_system" boolean NOT NULL DEFAULT false,
        "workbook_name" varchar(255),
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_workflow_definitions" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_workflow_definitions_scope" CHECK ("scope" IN ('private', 'public'))
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_workflow_definitions_project_namespace_name" ON "workflow_definitions" ("project_id", "namespace", "name")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_workflow_definitions_name" ON "workflow_definitions" ("name", "namespace")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_workflow_definitions_created" ON "workflow_definitions" ("created_at", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_workflow_definitions_project_created" ON "workflow_definitions" ("project_id", "created_at", "id")`,
    );

    await queryRunner.query(`
      CREATE TABLE "workbooks" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "namespace" varchar(255) NOT NULL DEFAULT '',
        "project_id" varchar(255) NOT NULL,
        "scope" varchar(8) NOT NULL,
        "definition" text NOT NULL,
        "spec" jsonb NOT NULL,
        "tags" jsonb NOT NULL DEFAULT '[]',
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_workbooks" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_workbooks_scope" CHECK ("scope" IN ('private', 'public'))
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_workbooks_project_namespace_name" ON "workbooks" ("project_id", "namespace", "name")`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_workbooks_name" ON "workbooks" ("name", "namespace")`);
    await queryRunner.query(`CREATE INDEX "IDX_workbooks_created" ON "workbooks" ("created_at", "id")`);

    await queryRunner.query(`
      CREATE TABLE "action_definitions" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "namespace" varchar(255) NOT NULL DEFAULT '',
        "project_id" varchar(255),
        "scope" varchar(8) NOT NULL,
        "definition" text NOT NULL,
        "description" text,
        "input" text,
        "spec" jsonb,
        "tags" jsonb NOT NULL DEFAULT '[]',
        "is_system" boolean NOT NULL DEFAULT false,
        "workbook_name" varchar(255),
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_action_definitions" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_action_definitions_scope" CHECK ("scope" IN ('private', 'public')),
        CONSTRAINT "CHK_action_definitions_owner" CHECK ("is_system" OR "project_id" IS NOT NULL)
      )`);
    // System actions have no project: COALESCE keeps them unique by name too.
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_action_definitions_project_namespace_name" ON "action_definitions" ((COALESCE("project_id", '')), "namespace", "name")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_action_definitions_name" ON "action_definitions" ("name", "id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "action_definitions"`);
    await queryRunner.query(`DROP TABLE "workbooks"`);
    await queryRunner.query(`DROP TABLE "workflow_definitions"`);
  }
}

/**
 * Members of shared workflows (Mistral's `resource_members_v2`): the owner's project shares a private
 * workflow with `member_id`, which accepts or rejects it. One row per (resource, type, member); the
 * rows go with their workflow. The index serves the visibility check of every workflow read (the
 * workflows a project has accepted).
 */
export class CreateResourceMembers1764200000000 implements MigrationInterface {
  name = 'CreateResourceMembers1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "resource_members" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "resource_id" uuid NOT NULL,
        "resource_type" varchar(50) NOT NULL DEFAULT 'workflow',
        "project_id" varchar(255) NOT NULL,
        "member_id" varchar(255) NOT NULL,
        "status" varchar(20) NOT NULL DEFAULT 'pending',
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_resource_members" PRIMARY KEY ("id"),
        CONSTRAINT "UQ_resource_members_resource_member" UNIQUE ("resource_id", "resource_type", "member_id"),
        CONSTRAINT "CHK_resource_members_type" CHECK ("resource_type" IN ('workflow')),
        CONSTRAINT "CHK_resource_members_status" CHECK ("status" IN ('pending', 'accepted', 'rejected')),
        CONSTRAINT "FK_resource_members_workflow" FOREIGN KEY ("resource_id")
          REFERENCES "workflow_definitions" ("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(
      `CREATE INDEX "IDX_resource_members_member" ON "resource_members" ("member_id", "resource_type", "status", "resource_id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "resource_members"`);
  }
}

export const definitionMigrations = [CreateDefinitions1763900000000, CreateResourceMembers1764200000000];
