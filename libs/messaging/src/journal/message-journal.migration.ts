import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Creates `message_journal`: the messages and jobs held by embedded mode's in-process bus and
 * queue, so that a restart (even kill -9) finds what was published but not yet finished. Unused
 * in distributed mode, where RabbitMQ and Redis keep them. SQL that runs the same on PostgreSQL
 * and PGlite.
 */
export class CreateMessageJournal1765000000000 implements MigrationInterface {
  name = 'CreateMessageJournal1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "message_journal" (
        "id" uuid NOT NULL,
        "kind" varchar(4) NOT NULL,
        "queue" varchar(200) NOT NULL,
        "body" text NOT NULL,
        "meta" jsonb NOT NULL,
        "deliveries" integer NOT NULL DEFAULT 0,
        "ready_at" bigint,
        "seq" bigserial NOT NULL,
        CONSTRAINT "PK_message_journal" PRIMARY KEY ("id"),
        CONSTRAINT "UQ_message_journal_seq" UNIQUE ("seq"),
        CONSTRAINT "CHK_message_journal_kind" CHECK ("kind" IN ('bus', 'jobs'))
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "message_journal"`);
  }
}
