import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The cron_triggers table: unique (project, name) for creates and by-name lookups, Mistral's duplicate
 * rule as a unique expression index, (next_execution_time, id) for the scheduler's due query and its
 * earliest-next probe, and (project, created_at, id) for the default list order. SQL that runs the
 * same on PostgreSQL and PGlite.
 */
export class CreateCronTriggers1764000000000 implements MigrationInterface {
  name = 'CreateCronTriggers1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "cron_triggers" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "scope" varchar(8) NOT NULL DEFAULT 'private',
        "workflow_id" uuid NOT NULL,
        "workflow_name" varchar(255) NOT NULL,
        "workflow_namespace" varchar(255) NOT NULL DEFAULT '',
        "workflow_input" jsonb NOT NULL DEFAULT '{}',
        "workflow_params" jsonb NOT NULL DEFAULT '{}',
        "workflow_input_hash" varchar(64) NOT NULL,
        "workflow_params_hash" varchar(64) NOT NULL,
        "pattern" varchar(255),
        "first_execution_time" timestamptz,
        "next_execution_time" timestamptz NOT NULL,
        "remaining_executions" integer,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_cron_triggers" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_cron_triggers_scope" CHECK ("scope" IN ('private', 'public')),
        CONSTRAINT "CHK_cron_triggers_remaining" CHECK ("remaining_executions" IS NULL OR "remaining_executions" >= 1),
        CONSTRAINT "CHK_cron_triggers_schedule" CHECK ("pattern" IS NOT NULL OR "first_execution_time" IS NOT NULL)
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_cron_triggers_project_name" ON "cron_triggers" ("project_id", "name")`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_cron_triggers_same_schedule" ON "cron_triggers" ("project_id", "workflow_id", "workflow_input_hash",
        "workflow_params_hash", (COALESCE("pattern", '')), (COALESCE("first_execution_time", 'epoch'::timestamptz)),
        (COALESCE("remaining_executions", 0)))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_cron_triggers_next" ON "cron_triggers" ("next_execution_time", "id")`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_cron_triggers_project_created" ON "cron_triggers" ("project_id", "created_at", "id")`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_cron_triggers_workflow" ON "cron_triggers" ("workflow_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "cron_triggers"`);
  }
}

export const cronTriggerMigrations = [CreateCronTriggers1764000000000];
