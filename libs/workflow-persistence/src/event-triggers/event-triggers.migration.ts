import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event_triggers table (Mistral's `event_triggers_v2`): Mistral's duplicate rule (exchange, topic,
 * event, workflow, project) as a unique index, (exchange, topic, event) for the listener's lookup of
 * the triggers a notification fires, (workflow_id) for the workflow-delete guard and (project,
 * created_at, id) for the default list order. `event_trigger_notifications` remembers the message id
 * of every notification already turned into executions, so a redelivered notification (a listener
 * that died before its ack, several replicas) starts nothing twice. SQL that runs the same on
 * PostgreSQL and PGlite.
 */
export class CreateEventTriggers1764310000000 implements MigrationInterface {
  name = 'CreateEventTriggers1764310000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "event_triggers" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" varchar(200) NOT NULL DEFAULT '',
        "project_id" varchar(255) NOT NULL,
        "scope" varchar(8) NOT NULL DEFAULT 'private',
        "workflow_id" uuid NOT NULL,
        "workflow_input" jsonb NOT NULL DEFAULT '{}',
        "workflow_params" jsonb NOT NULL DEFAULT '{}',
        "exchange" varchar(80) NOT NULL,
        "topic" varchar(80) NOT NULL,
        "event" varchar(80) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        CONSTRAINT "PK_event_triggers" PRIMARY KEY ("id"),
        CONSTRAINT "CHK_event_triggers_scope" CHECK ("scope" IN ('private', 'public'))
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "UQ_event_triggers_same_event" ON "event_triggers" ("exchange", "topic", "event", "workflow_id", "project_id")`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_event_triggers_workflow" ON "event_triggers" ("workflow_id")`);
    await queryRunner.query(
      `CREATE INDEX "IDX_event_triggers_project_created" ON "event_triggers" ("project_id", "created_at", "id")`,
    );
    await queryRunner.query(`
      CREATE TABLE "event_trigger_notifications" (
        "message_id" varchar(255) NOT NULL,
        "received_at" timestamptz NOT NULL,
        CONSTRAINT "PK_event_trigger_notifications" PRIMARY KEY ("message_id")
      )`);
    await queryRunner.query(
      `CREATE INDEX "IDX_event_trigger_notifications_received" ON "event_trigger_notifications" ("received_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "event_trigger_notifications"`);
    await queryRunner.query(`DROP TABLE "event_triggers"`);
  }
}

export const eventTriggerMigrations = [CreateEventTriggers1764310000000];
