import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Code sources and dynamic actions (Mistral's `code_sources` and `dynamic_action_definitions`,
 * migration 040).
 *
 * - Both tables are unique per (name, namespace, project_id) as in Mistral; the unique index also
 *   serves the by-name lookups. (project_id, created_at, id) serves the default list order.
 * - A dynamic action references its code source by id with `ON DELETE CASCADE` (Mistral's foreign
 *   key): deleting a code source deletes the actions built on it. `code_source_name` is a copy of the
 *   source's name at the time of the link, as Mistral stores it.
 * SQL that runs the same on PostgreSQL and PGlite.
 */
export class CreateCodeSourcesAndDynamicActions1765100000000 implements MigrationInterface {
  name = 'CreateCodeSourcesAndDynamicActions1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "code_sources" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "namespace" varchar(255) NOT NULL DEFAULT '',
        "content" text NOT NULL,
        "version" integer NOT NULL DEFAULT 1,
        "scope" varchar(8) NOT NULL DEFAULT 'private',
        "project_id" varchar(255) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_code_sources" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_code_sources_scope" CHECK ("scope" IN ('private', 'public'))
      )`);
    await q.query(
      `CREATE UNIQUE INDEX "UQ_code_sources_name_namespace_project" ON "code_sources" ("name", "namespace", "project_id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_code_sources_project_created" ON "code_sources" ("project_id", "created_at", "id")`,
    );
    await q.query(`
      CREATE TABLE "dynamic_action_definitions" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "namespace" varchar(255) NOT NULL DEFAULT '',
        "class_name" varchar(255) NOT NULL,
        "code_source_id" uuid NOT NULL,
        "code_source_name" varchar(255) NOT NULL,
        "scope" varchar(8) NOT NULL DEFAULT 'private',
        "project_id" varchar(255) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_dynamic_action_definitions" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_dynamic_action_definitions_scope" CHECK ("scope" IN ('private', 'public')),
        CONSTRAINT "FK_dynamic_action_definitions_code_source" FOREIGN KEY ("code_source_id")
          REFERENCES "code_sources" ("id") ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE UNIQUE INDEX "UQ_dynamic_action_definitions_name_namespace_project" ON "dynamic_action_definitions" ("name", "namespace", "project_id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_dynamic_action_definitions_project_created" ON "dynamic_action_definitions" ("project_id", "created_at", "id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_dynamic_action_definitions_code_source" ON "dynamic_action_definitions" ("code_source_id")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "dynamic_action_definitions"`);
    await q.query(`DROP TABLE "code_sources"`);
  }
}

export const dynamicActionMigrations = [CreateCodeSourcesAndDynamicActions1765100000000];
