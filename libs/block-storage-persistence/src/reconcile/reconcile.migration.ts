import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the block-storage reconciler did to a row: how often it resumed it in its current status
 * and when last, so a resumed job gets the whole bound to show progress and a job that keeps
 * getting lost ends the row instead of being queued forever.
 */
export class CreateReconcileMarks1765000000000 implements MigrationInterface {
  name = 'CreateReconcileMarks1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE IF NOT EXISTS "reconcile_marks" (
        "resource" varchar(32) NOT NULL,
        "resource_id" uuid NOT NULL,
        "status" varchar(64) NOT NULL,
        "resumes" integer NOT NULL DEFAULT 0,
        "resumed_at" timestamptz NOT NULL,
        CONSTRAINT "PK_reconcile_marks" PRIMARY KEY ("resource", "resource_id")
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "reconcile_marks"`);
  }
}

export const reconcileMigrations = [CreateReconcileMarks1765000000000];
