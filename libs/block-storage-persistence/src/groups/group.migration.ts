import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Id of the built-in group type consistency groups are stored under (BS-7.11.1). */
export const CG_GROUP_TYPE_ID = '5d6e2a7c-6b0e-4c39-9d0a-1f3c6c2a7e51';
export const CG_GROUP_TYPE_NAME = 'default_cgsnapshot_type';

/**
 * Volume transfers (BS-7.10), group types with their specs, generic groups (consistency groups
 * are groups of the built-in type `default_cgsnapshot_type`), the volume types a group supports,
 * and group snapshots (cgsnapshots). Soft-deleted rows keep `deleted = true`; every list path has
 * an index on (project_id, deleted, created_at, id).
 */
export class CreateGroupsAndTransfers1764400000000 implements MigrationInterface {
  name = 'CreateGroupsAndTransfers1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "volume_transfers" (
        "id" uuid NOT NULL,
        "volume_id" uuid NOT NULL,
        "display_name" varchar(255),
        "salt" varchar(8) NOT NULL,
        "crypt_hash" varchar(255) NOT NULL,
        "no_snapshots" boolean NOT NULL DEFAULT false,
        "source_project_id" varchar(255) NOT NULL,
        "destination_project_id" varchar(255),
        "accepted" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_volume_transfers" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_volume_transfers_project" ON "volume_transfers" ("source_project_id", "deleted", "created_at", "id")`,
    );
    await q.query(
      `CREATE UNIQUE INDEX "UQ_volume_transfers_volume" ON "volume_transfers" ("volume_id") WHERE "deleted" = false`,
    );
    await q.query(`
      CREATE TABLE "group_types" (
        "id" uuid NOT NULL,
        "name" varchar(255) NOT NULL,
        "description" varchar(255),
        "is_public" boolean NOT NULL DEFAULT true,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_group_types" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE UNIQUE INDEX "UQ_group_types_name" ON "group_types" ("name") WHERE "deleted" = false`,
    );
    await q.query(`
      CREATE TABLE "group_type_specs" (
        "group_type_id" uuid NOT NULL,
        "key" varchar(255) NOT NULL,
        "value" varchar(255),
        CONSTRAINT "PK_group_type_specs" PRIMARY KEY ("group_type_id", "key"),
        CONSTRAINT "FK_group_type_specs_type" FOREIGN KEY ("group_type_id") REFERENCES "group_types" ("id") ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE "groups" (
        "id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "user_id" varchar(255),
        "display_name" varchar(255),
        "display_description" varchar(255),
        "availability_zone" varchar(255) NOT NULL,
        "host" varchar(255),
        "status" varchar(32) NOT NULL,
        "pending" boolean NOT NULL DEFAULT false,
        "group_type_id" uuid NOT NULL,
        "group_snapshot_id" uuid,
        "source_group_id" uuid,
        "replication_status" varchar(255),
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_groups" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_groups_project_created" ON "groups" ("project_id", "deleted", "created_at", "id")`,
    );
    await q.query(`CREATE INDEX "IDX_groups_type" ON "groups" ("group_type_id") WHERE "deleted" = false`);
    await q.query(`
      CREATE TABLE "group_volume_types" (
        "group_id" uuid NOT NULL,
        "volume_type_id" uuid NOT NULL,
        "position" integer NOT NULL,
        CONSTRAINT "PK_group_volume_types" PRIMARY KEY ("group_id", "volume_type_id"),
        CONSTRAINT "FK_group_volume_types_group" FOREIGN KEY ("group_id") REFERENCES "groups" ("id") ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX "IDX_group_volume_types_type" ON "group_volume_types" ("volume_type_id")`);
    await q.query(`
      CREATE TABLE "group_snapshots" (
        "id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "user_id" varchar(255),
        "group_id" uuid NOT NULL,
        "group_type_id" uuid NOT NULL,
        "display_name" varchar(255),
        "display_description" varchar(255),
        "status" varchar(32) NOT NULL,
        "pending" boolean NOT NULL DEFAULT false,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_group_snapshots" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_group_snapshots_project_created" ON "group_snapshots" ("project_id", "deleted", "created_at", "id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_group_snapshots_group" ON "group_snapshots" ("group_id") WHERE "deleted" = false`,
    );
    await q.query(`CREATE INDEX "IDX_volumes_group" ON "volumes" ("group_id") WHERE "deleted" = false`);
    await q.query(
      `CREATE INDEX "IDX_snapshots_group_snapshot" ON "snapshots" ("group_snapshot_id") WHERE "deleted" = false`,
    );
    await q.query(
      `INSERT INTO "group_types" ("id", "name", "description", "is_public", "created_at") VALUES ($1, $2, 'Default group type for migrating cgsnapshot', true, now())`,
      [CG_GROUP_TYPE_ID, CG_GROUP_TYPE_NAME],
    );
    await q.query(
      `INSERT INTO "group_type_specs" ("group_type_id", "key", "value") VALUES ($1, 'consistent_group_snapshot_enabled', '<is> True')`,
      [CG_GROUP_TYPE_ID],
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_snapshots_group_snapshot"`);
    await q.query(`DROP INDEX "IDX_volumes_group"`);
    for (const t of [
      'group_snapshots',
      'group_volume_types',
      'groups',
      'group_type_specs',
      'group_types',
      'volume_transfers',
    ]) {
      await q.query(`DROP TABLE "${t}"`);
    }
  }
}
