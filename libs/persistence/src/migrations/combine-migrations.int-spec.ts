import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { closeDataSource, createDataSource } from '../data-source/data-source.factory';
import { createTestDataSource, ENGINE_KINDS } from '../testing/test-data-source';
import { combineMigrations } from './combine-migrations';

// Two "libs" each export their list; the second one's table references the first one's.
class CreateParent1700000000010 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE mig_parent (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), name text NOT NULL)',
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE mig_parent');
  }
}
class AddParentIndex1700000000030 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE UNIQUE INDEX mig_parent_name ON mig_parent (name)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX mig_parent_name');
  }
}
class CreateChild1700000000020 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query(
      'CREATE TABLE mig_child (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), parent_id uuid NOT NULL REFERENCES mig_parent (id))',
    );
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE mig_child');
  }
}
const parentLibMigrations = [CreateParent1700000000010, AddParentIndex1700000000030];
const childLibMigrations = [CreateChild1700000000020];

describe.each(ENGINE_KINDS)('combined migrations on %s', (kind) => {
  it('applies the lists of several libs in timestamp order and can undo the last one', async () => {
    const t = await createTestDataSource(kind, {
      migrations: combineMigrations(childLibMigrations, parentLibMigrations),
    });
    try {
      const ds = t.dataSource;
      expect(
        ((await ds.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[]).map(
          (r) => r.name,
        ),
      ).toEqual(['CreateParent1700000000010', 'CreateChild1700000000020', 'AddParentIndex1700000000030']);
      const [parent] = (await ds.query("INSERT INTO mig_parent (name) VALUES ('p') RETURNING id")) as {
        id: string;
      }[];
      await ds.query('INSERT INTO mig_child (parent_id) VALUES ($1)', [parent!.id]);
      await expect(ds.query("INSERT INTO mig_parent (name) VALUES ('p')")).rejects.toThrow(/mig_parent_name/);
      await ds.undoLastMigration();
      await ds.query("INSERT INTO mig_parent (name) VALUES ('p')");
      expect(await ds.showMigrations()).toBe(true);
    } finally {
      await t.cleanup();
    }
  });
});

describe('migrations on postgres with concurrent starters', () => {
  it('runs each migration once when several processes start together', async () => {
    const t = await createTestDataSource('postgres');
    try {
      const url = String((t.dataSource.options as { url?: string }).url);
      const migrations = combineMigrations(parentLibMigrations, childLibMigrations);
      const started = await Promise.all(
        [1, 2, 3].map(() => createDataSource({ kind: 'postgres', url, poolSize: 2 }, [], migrations)),
      );
      const [row] = (await t.dataSource.query('SELECT count(*)::int AS n FROM migrations')) as {
        n: number;
      }[];
      expect(row!.n).toBe(3);
      await Promise.all(started.map((ds) => closeDataSource(ds)));
    } finally {
      await t.cleanup();
    }
  });
});
