import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Cinder's `volume_attachment` table: one row per attachment of a volume (attachments API 3.27,
 * legacy os-attach), soft-deleted on detach. Live attachments of a volume are read with every
 * volume view, hence the partial index on `volume_id`.
 */
export class CreateVolumeAttachments1765200000000 implements MigrationInterface {
  name = 'CreateVolumeAttachments1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS "volume_attachments" (
        "id" uuid NOT NULL,
        "volume_id" uuid NOT NULL,
        "instance_uuid" varchar(36),
        "attached_host" varchar(255),
        "mountpoint" varchar(255),
        "attach_status" varchar(32) NOT NULL,
        "attach_mode" varchar(4) NOT NULL DEFAULT 'null',
        "attach_time" timestamptz,
        "detach_time" timestamptz,
        "connector" jsonb,
        "connection_info" jsonb,
        "volume_host" varchar(255),
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_volume_attachments" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX IF NOT EXISTS "IDX_volume_attachments_volume" ON "volume_attachments" ("volume_id") WHERE deleted = false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "volume_attachments"`);
  }
}

export const attachmentMigrations = [CreateVolumeAttachments1765200000000];
