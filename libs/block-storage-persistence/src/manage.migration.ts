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

/**
 * The files each back end holds, as it last reported them with its stats (`GET
 * /manageable_volumes`, `/manageable_snapshots`): the API lists what a back end could manage
 * without reaching into its directory.
 */
export class CreateBackendFiles1764800000001 implements MigrationInterface {
  name = 'CreateBackendFiles1764800000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS "backend_files" (
        "backend" varchar(255) NOT NULL,
        "name" varchar(255) NOT NULL,
        "bytes" bigint NOT NULL,
        "reported_at" timestamptz NOT NULL,
        CONSTRAINT "PK_backend_files" PRIMARY KEY ("backend", "name")
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "backend_files"`);
  }
}

export const manageMigrations = [AddSnapshotManageSource1764800000000, CreateBackendFiles1764800000001];
