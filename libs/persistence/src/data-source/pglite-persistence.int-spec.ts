import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { closeDataSource, createDataSource } from './data-source.factory';

class CreateNote1700000000001 implements MigrationInterface {
  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE note (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), body jsonb NOT NULL)');
  }
  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE note');
  }
}

describe('embedded engine on disk', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'osc-pglite-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps committed data across a close and reopen, and runs migrations only once', async () => {
    const dataDir = join(dir, 'data');
    const first = await createDataSource({ kind: 'pglite', dataDir }, [], [CreateNote1700000000001]);
    const [{ id }] = (await first.query(`INSERT INTO note (body) VALUES ($1) RETURNING id`, [
      JSON.stringify({ kept: true }),
    ])) as [{ id: string }];
    await closeDataSource(first);
    await closeDataSource(first);

    const second = await createDataSource({ kind: 'pglite', dataDir }, [], [CreateNote1700000000001]);
    try {
      expect(await second.query('SELECT id, body FROM note')).toEqual([{ id, body: { kept: true } }]);
      expect(await second.query('SELECT count(*)::int AS n FROM migrations')).toEqual([{ n: 1 }]);
    } finally {
      await closeDataSource(second);
    }
  });
});
