import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Services and user messages (spec 7.12, 7.13). A service row is written by the process it
 * describes (a heartbeat: `updated_at`, `report_count`); `disabled`, `disabled_reason` and `frozen`
 * are the operator's (os-services). Messages are what Cinder calls user messages: an asynchronous
 * failure the owner of a resource can read (`GET /messages`, 3.3), kept until `expires_at`.
 */
export class CreateServicesAndMessages1764500000000 implements MigrationInterface {
  name = 'CreateServicesAndMessages1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "services" (
        "binary" varchar(255) NOT NULL,
        "host" varchar(255) NOT NULL,
        "availability_zone" varchar(255) NOT NULL,
        "disabled" boolean NOT NULL DEFAULT false,
        "disabled_reason" varchar(255),
        "frozen" boolean NOT NULL DEFAULT false,
        "report_count" integer NOT NULL DEFAULT 0,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "modified_at" timestamptz,
        CONSTRAINT "PK_services" PRIMARY KEY ("binary", "host")
      )`);
    await q.query(`
      CREATE TABLE "messages" (
        "id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "request_id" varchar(255),
        "resource_type" varchar(255),
        "resource_uuid" varchar(36),
        "event_id" varchar(255) NOT NULL,
        "action_id" varchar(10) NOT NULL,
        "detail_id" varchar(10) NOT NULL,
        "message_level" varchar(255) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "expires_at" timestamptz NOT NULL,
        "deleted" boolean NOT NULL DEFAULT false,
        CONSTRAINT "PK_messages" PRIMARY KEY ("id")
      )`);
    await q.query(
      `CREATE INDEX "IDX_messages_project" ON "messages" ("project_id", "deleted", "created_at", "id")`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "messages"`);
    await q.query(`DROP TABLE "services"`);
  }
}
