import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `backups.progress`: whole percent of the backup's running create or restore, written with each
 * progress report of the worker (ours, not Cinder's: shown as `os-backup-progress:progress` to
 * clients that ask for it). Null until a job reports.
 */
export class AddBackupProgress1765100000000 implements MigrationInterface {
  name = 'AddBackupProgress1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "backups" ADD COLUMN IF NOT EXISTS "progress" smallint`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "backups" DROP COLUMN IF EXISTS "progress"`);
  }
}
