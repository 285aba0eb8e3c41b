import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * QoS specs (BS-7.13): a named spec with its consumer, and its key/value items. Names are unique
 * among undeleted specs; deleting soft-deletes the spec and drops its items. Volume types point at
 * a spec through their existing `qos_specs_id` column (indexed here for the associations query).
 */
export class CreateQosSpecs1764650000000 implements MigrationInterface {
  name = 'CreateQosSpecs1764650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "qos_specs" (
        "id" uuid NOT NULL,
        "name" varchar(255) NOT NULL,
        "consumer" varchar(16) NOT NULL,
        "created_at" timestamptz NOT NULL,
        "updated_at" timestamptz,
        "deleted" boolean NOT NULL DEFAULT false,
        "deleted_at" timestamptz,
        CONSTRAINT "PK_qos_specs" PRIMARY KEY ("id")
      )`);
    await q.query(`CREATE UNIQUE INDEX "UQ_qos_specs_name" ON "qos_specs" ("name") WHERE "deleted" = false`);
    await q.query(`CREATE INDEX "IDX_qos_specs_created" ON "qos_specs" ("deleted", "created_at", "id")`);
    await q.query(`
      CREATE TABLE "qos_spec_items" (
        "qos_specs_id" uuid NOT NULL,
        "key" varchar(255) NOT NULL,
        "value" varchar(255),
        CONSTRAINT "PK_qos_spec_items" PRIMARY KEY ("qos_specs_id", "key"),
        CONSTRAINT "FK_qos_spec_items_specs" FOREIGN KEY ("qos_specs_id") REFERENCES "qos_specs" ("id") ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX "IDX_volume_types_qos_specs" ON "volume_types" ("qos_specs_id") WHERE "deleted" = false`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX "IDX_volume_types_qos_specs"`);
    await q.query(`DROP TABLE "qos_spec_items"`);
    await q.query(`DROP TABLE "qos_specs"`);
  }
}
