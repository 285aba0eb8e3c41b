import type { MigrationInterface, QueryRunner } from 'typeorm';
import { adminMigrations } from './admin';
import { backupMigrations } from './backups';
import { backupPolicyMigrations } from './backup-policies';
import { groupMigrations } from './groups';
import { attachmentMigrations } from './attachments';
import { manageMigrations } from './manage.migration';
import { qosMigrations } from './qos';
import { reconcileMigrations } from './reconcile/reconcile.migration';

/**
 * The block-storage schema: volume types (with extra specs, access grants, encryption and
 * per-project defaults), volumes, snapshots, quotas and the pools back ends report. Soft-deleted
 * rows keep `deleted = true`; every list path has an index on (project_id, deleted, created_at, id)
 * (BS-5.12). SQL that runs the same on PostgreSQL and PGlite.
 */
export class CreateBlockStorage1763950000000 implements MigrationInterface {
  name = 'CreateBlockStorage1763950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "volume_types" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(255) NOT NULL,
        "description" varchar(255),
        "is_public" boolean NOT NULL DEFAULT true,
        "qos_specs_id" uuid,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_volume_types" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE UNIQUE INDEX "UQ_volume_types_name" ON "volume_types" ("name") WHERE "deleted" = false`,
    );
    await q.query(
      `CREATE INDEX "IDX_volume_types_created" ON "volume_types" ("deleted", "created_at", "id")`,
    );
    await q.query(`
      CREATE TABLE "volume_type_extra_specs" (
        "volume_type_id" uuid NOT NULL,
        "key" varchar(255) NOT NULL,
        "value" varchar(255),
        CONSTRAINT "PK_volume_type_extra_specs" PRIMARY KEY ("volume_type_id", "key"),
        CONSTRAINT "FK_volume_type_extra_specs_type" FOREIGN KEY ("volume_type_id") REFERENCES "volume_types" ("id") ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE "volume_type_projects" (
        "volume_type_id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "created_at" timestamptz NOT NULL,
        CONSTRAINT "PK_volume_type_projects" PRIMARY KEY ("volume_type_id", "project_id"),
        CONSTRAINT "FK_volume_type_projects_type" FOREIGN KEY ("volume_type_id") REFERENCES "volume_types" ("id") ON DELETE CASCADE
      )`);
    await q.query(`CREATE INDEX "IDX_volume_type_projects_project" ON "volume_type_projects" ("project_id")`);
    await q.query(`
      CREATE TABLE "volume_type_encryption" (
        "encryption_id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "volume_type_id" uuid NOT NULL,
        "provider" varchar(255) NOT NULL,
        "cipher" varchar(255),
        "key_size" integer,
        "control_location" varchar(16) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_volume_type_encryption" PRIMARY KEY ("encryption_id"),
        CONSTRAINT "UQ_volume_type_encryption_type" UNIQUE ("volume_type_id"),
        CONSTRAINT "FK_volume_type_encryption_type" FOREIGN KEY ("volume_type_id") REFERENCES "volume_types" ("id") ON DELETE CASCADE
      )`);
    await q.query(`
      CREATE TABLE "default_volume_types" (
        "project_id" varchar(255) NOT NULL,
        "volume_type_id" uuid NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_default_volume_types" PRIMARY KEY ("project_id"),
        CONSTRAINT "FK_default_volume_types_type" FOREIGN KEY ("volume_type_id") REFERENCES "volume_types" ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_default_volume_types_type" ON "default_volume_types" ("volume_type_id")`,
    );
    await q.query(`
      CREATE TABLE "volumes" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "project_id" varchar(255) NOT NULL,
        "user_id" varchar(255),
        "display_name" varchar(255),
        "display_description" varchar(255),
        "size" integer NOT NULL,
        "status" varchar(32) NOT NULL,
        "attach_status" varchar(32) NOT NULL DEFAULT 'detached',
        "availability_zone" varchar(255),
        "volume_type_id" uuid NOT NULL,
        "snapshot_id" uuid,
        "source_volid" uuid,
        "metadata" jsonb NOT NULL DEFAULT '{}',
        "admin_metadata" jsonb NOT NULL DEFAULT '{}',
        "image_metadata" jsonb,
        "bootable" boolean NOT NULL DEFAULT false,
        "encrypted" boolean NOT NULL DEFAULT false,
        "encryption_key_id" uuid,
        "multiattach" boolean NOT NULL DEFAULT false,
        "host" varchar(255),
        "cluster_name" varchar(255),
        "provider_id" varchar(255),
        "service_uuid" varchar(36),
        "shared_targets" boolean,
        "migration_status" varchar(255),
        "name_id" uuid,
        "replication_status" varchar(255),
        "consistencygroup_id" uuid,
        "group_id" uuid,
        "use_quota" boolean NOT NULL DEFAULT true,
        "error_reason" varchar(1024),
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_volumes" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_volumes_project_created" ON "volumes" ("project_id", "deleted", "created_at", "id")`,
    );
    await q.query(`CREATE INDEX "IDX_volumes_created" ON "volumes" ("deleted", "created_at", "id")`);
    await q.query(`CREATE INDEX "IDX_volumes_type" ON "volumes" ("volume_type_id") WHERE "deleted" = false`);
    await q.query(`
      CREATE TABLE "snapshots" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "project_id" varchar(255) NOT NULL,
        "user_id" varchar(255),
        "volume_id" uuid NOT NULL,
        "volume_type_id" uuid,
        "display_name" varchar(255),
        "display_description" varchar(255),
        "size" integer NOT NULL,
        "status" varchar(32) NOT NULL,
        "progress" varchar(16),
        "metadata" jsonb NOT NULL DEFAULT '{}',
        "group_snapshot_id" uuid,
        "use_quota" boolean NOT NULL DEFAULT true,
        "host" varchar(255),
        "error_reason" varchar(1024),
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_snapshots" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_snapshots_project_created" ON "snapshots" ("project_id", "deleted", "created_at", "id")`,
    );
    await q.query(`CREATE INDEX "IDX_snapshots_created" ON "snapshots" ("deleted", "created_at", "id")`);
    await q.query(`CREATE INDEX "IDX_snapshots_volume" ON "snapshots" ("volume_id") WHERE "deleted" = false`);
    await q.query(`
      CREATE TABLE "quota_limits" (
        "project_id" varchar(255) NOT NULL,
        "resource" varchar(300) NOT NULL,
        "hard_limit" integer NOT NULL,
        CONSTRAINT "PK_quota_limits" PRIMARY KEY ("project_id", "resource")
      )`);
    await q.query(`
      CREATE TABLE "quota_class_limits" (
        "class_name" varchar(255) NOT NULL,
        "resource" varchar(300) NOT NULL,
        "hard_limit" integer NOT NULL,
        CONSTRAINT "PK_quota_class_limits" PRIMARY KEY ("class_name", "resource")
      )`);
    await q.query(`
      CREATE TABLE "quota_usages" (
        "project_id" varchar(255) NOT NULL,
        "resource" varchar(300) NOT NULL,
        "in_use" bigint NOT NULL DEFAULT 0,
        "reserved" bigint NOT NULL DEFAULT 0,
        CONSTRAINT "PK_quota_usages" PRIMARY KEY ("project_id", "resource")
      )`);
    await q.query(`
      CREATE TABLE "storage_pools" (
        "name" varchar(255) NOT NULL,
        "backend" varchar(255) NOT NULL,
        "availability_zone" varchar(255) NOT NULL,
        "capabilities" jsonb NOT NULL,
        "updated_at" timestamptz NOT NULL,
        CONSTRAINT "PK_storage_pools" PRIMARY KEY ("name")
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'storage_pools',
      'quota_usages',
      'quota_class_limits',
      'quota_limits',
      'snapshots',
      'volumes',
      'default_volume_types',
      'volume_type_encryption',
      'volume_type_projects',
      'volume_type_extra_specs',
      'volume_types',
    ]) {
      await q.query(`DROP TABLE "${t}"`);
    }
  }
}

/**
 * Quota reservations as rows (BS-8.1.3): units moved to `quota_usages.reserved` by an operation
 * that a back end finishes later (extend) are recorded with the operation's target, so a worker
 * failure or restart can commit or release exactly those units, once.
 */
export class AddQuotaReservations1764000000000 implements MigrationInterface {
  name = 'AddQuotaReservations1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "quota_reservations" (
        "id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "volume_id" uuid NOT NULL,
        "operation" varchar(32) NOT NULL,
        "new_size" integer,
        "deltas" jsonb NOT NULL,
        "created_at" timestamptz NOT NULL,
        CONSTRAINT "PK_quota_reservations" PRIMARY KEY ("id")
      )`);
    await q.query(`CREATE INDEX "IDX_quota_reservations_volume" ON "quota_reservations" ("volume_id")`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "quota_reservations"`);
  }
}

export const blockStorageMigrations = [
  CreateBlockStorage1763950000000,
  AddQuotaReservations1764000000000,
  ...backupMigrations,
  ...groupMigrations,
  ...adminMigrations,
  ...qosMigrations,
  ...manageMigrations,
  ...reconcileMigrations,
  ...attachmentMigrations,
  ...backupPolicyMigrations,
];
