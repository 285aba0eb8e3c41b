import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What a backup policy's runs did, where its owner looks (GET of the policy): `last_run` is the
 * outcome of the newest firing — the backups it started, and the volumes it did not back up with why,
 * including the ones a worker found unchanged since their previous backup (`skip_unchanged`); the
 * `last_error` pair records the newest failure of the policy's retention (a rebase that could not
 * merge a chain), cleared by the next rebase that succeeds.
 */
export class AddBackupPolicyOutcome1765660000000 implements MigrationInterface {
  name = 'AddBackupPolicyOutcome1765660000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "backup_policies" ADD COLUMN "last_run" jsonb`);
    await q.query(`ALTER TABLE "backup_policies" ADD COLUMN "last_error" text`);
    await q.query(`ALTER TABLE "backup_policies" ADD COLUMN "last_error_at" timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "backup_policies" DROP COLUMN "last_error_at"`);
    await q.query(`ALTER TABLE "backup_policies" DROP COLUMN "last_error"`);
    await q.query(`ALTER TABLE "backup_policies" DROP COLUMN "last_run"`);
  }
}
