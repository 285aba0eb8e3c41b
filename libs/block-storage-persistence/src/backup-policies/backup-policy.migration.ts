import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Backup policies (ours, issue 21 item 3; Cinder has none): a cron schedule that backs up one volume,
 * or every volume of one type in the policy's project, with a retention count and a full backup every
 * N incrementals. `next_run_at` is what the cron-scheduler claims (due rows, `FOR UPDATE SKIP LOCKED`)
 * and advances in the same transaction as the backups it starts, as it does for workflow cron
 * triggers. `backups.backup_policy_id` marks the backups a policy made: retention deletes only those.
 */
export class CreateBackupPolicies1765650000000 implements MigrationInterface {
  name = 'CreateBackupPolicies1765650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "backup_policies" (
        "id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "user_id" varchar(255),
        "name" varchar(255),
        "description" varchar(255),
        "volume_id" uuid,
        "volume_type_id" uuid,
        "schedule" varchar(255) NOT NULL,
        "retention" integer NOT NULL,
        "full_every" integer NOT NULL DEFAULT 0,
        "skip_unchanged" boolean NOT NULL DEFAULT true,
        "enabled" boolean NOT NULL DEFAULT true,
        "next_run_at" timestamptz NOT NULL,
        "last_run_at" timestamptz,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_backup_policies" PRIMARY KEY ("id"),
        CONSTRAINT "CK_backup_policies_target" CHECK (("volume_id" IS NULL) <> ("volume_type_id" IS NULL)),
        CONSTRAINT "CK_backup_policies_retention" CHECK ("retention" >= 1 AND "full_every" >= 0)
      )`);
    await q.query(
      `CREATE INDEX "IDX_backup_policies_due" ON "backup_policies" ("next_run_at") WHERE "enabled" = true`,
    );
    await q.query(
      `CREATE INDEX "IDX_backup_policies_project_list" ON "backup_policies" ("project_id", "created_at", "id")`,
    );
    await q.query(`CREATE INDEX "IDX_backup_policies_list" ON "backup_policies" ("created_at", "id")`);
    await q.query(`ALTER TABLE "backups" ADD COLUMN IF NOT EXISTS "backup_policy_id" uuid`);
    await q.query(
      `CREATE INDEX "IDX_backups_policy" ON "backups" ("backup_policy_id", "volume_id") WHERE "deleted" = false AND "backup_policy_id" IS NOT NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX IF EXISTS "IDX_backups_policy"`);
    await q.query(`ALTER TABLE "backups" DROP COLUMN IF EXISTS "backup_policy_id"`);
    await q.query(`DROP TABLE "backup_policies"`);
  }
}
