import type { MigrationInterface, QueryRunner } from 'typeorm';
import { CreateMessageJournal1765000000000 } from '../journal/message-journal.migration';

/** Creates the `outbox` table. SQL that runs the same on PostgreSQL and PGlite. */
export class CreateOutbox1763856000000 implements MigrationInterface {
  name = 'CreateOutbox1763856000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "outbox" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "destination" varchar(8) NOT NULL,
        "queue" varchar(200) NOT NULL,
        "payload" jsonb NOT NULL,
        "partition_key" varchar(255),
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "seq" bigserial NOT NULL,
        CONSTRAINT "PK_outbox" PRIMARY KEY ("id"),
        CONSTRAINT "UQ_outbox_seq" UNIQUE ("seq"),
        CONSTRAINT "CHK_outbox_destination" CHECK ("destination" IN ('bus', 'jobs'))
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "outbox"`);
  }
}

/**
 * Adds `claimable_at`: rows a writer hands off itself (published by its own process right after the
 * commit, {@link OutboxWriter.onHandOff}) are written with a short lease, and relays leave them alone
 * until it passes — before it, a relay woken by another commit claimed such rows while their hand-off
 * was under way and published them a second time. A writer that dies before its hand-off leaves the
 * rows to the relays once the lease has passed. NULL: claimable at once.
 */
export class AddOutboxClaimableAt1765700000000 implements MigrationInterface {
  name = 'AddOutboxClaimableAt1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "outbox" ADD COLUMN "claimable_at" timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "outbox" DROP COLUMN "claimable_at"`);
  }
}

/**
 * Register with the app's migrations (order does not matter: nothing else refers to `outbox` or
 * `message_journal`).
 */
export const messagingMigrations = [
  CreateOutbox1763856000000,
  CreateMessageJournal1765000000000,
  AddOutboxClaimableAt1765700000000,
];
