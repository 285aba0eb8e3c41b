import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Backups (spec 7.9, 8.3). `volume_previous_status` is the status the source volume (or snapshot)
 * returns to when the backup ends; `import_record` holds the decoded export record until the
 * importing worker has copied it. List paths use (project_id, deleted, created_at, id) (BS-5.12).
 */
export class CreateBackups1764300000000 implements MigrationInterface {
  name = 'CreateBackups1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "backups" (
        "id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "user_id" varchar(255),
        "volume_id" uuid NOT NULL,
        "snapshot_id" uuid,
        "parent_id" uuid,
        "display_name" varchar(255),
        "display_description" varchar(255),
        "status" varchar(32) NOT NULL,
        "fail_reason" varchar(1024),
        "size" integer NOT NULL,
        "object_count" integer NOT NULL DEFAULT 0,
        "availability_zone" varchar(255),
        "container" varchar(255),
        "host" varchar(255),
        "service" varchar(255),
        "service_metadata" varchar(255),
        "num_dependent_backups" integer NOT NULL DEFAULT 0,
        "metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "encryption_key_id" uuid,
        "restore_volume_id" uuid,
        "volume_previous_status" varchar(32),
        "import_record" jsonb,
        "data_timestamp" timestamptz NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_backups" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_backups_project_list" ON "backups" ("project_id", "deleted", "created_at", "id")`,
    );
    await q.query(`CREATE INDEX "IDX_backups_list" ON "backups" ("deleted", "created_at", "id")`);
    await q.query(`CREATE INDEX "IDX_backups_volume" ON "backups" ("volume_id") WHERE "deleted" = false`);
    await q.query(
      `CREATE INDEX "IDX_backups_host_status" ON "backups" ("host", "status") WHERE "deleted" = false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "backups"`);
  }
}
