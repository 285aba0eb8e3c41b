import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Snapshot manage (`os-snapshot-manage`): while a managed snapshot is `creating`, `manage_source`
 * holds the name of the back-end file it adopts, so a back end restarted mid-manage drives the
 * adoption again instead of copying the volume as for a new snapshot. Null for every other row.
 */
export class AddSnapshotManageSource1764800000000 implements MigrationInterface {
  name = 'AddSnapshotManageSource1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "snapshots" ADD COLUMN IF NOT EXISTS "manage_source" varchar(255)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "snapshots" DROP COLUMN "manage_source"`);
  }
}
