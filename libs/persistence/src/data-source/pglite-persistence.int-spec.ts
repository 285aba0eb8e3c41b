import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConflictError } from '@osc/errors';
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

  it('runs with a small buffer pool, on a fresh folder and after a reopen (issue #17)', async () => {
    const dataDir = join(dir, 'buffers');
    for (let round = 0; round < 2; round++) {
      const ds = await createDataSource({ kind: 'pglite', dataDir }, [], []);
      try {
        expect(await ds.query('SHOW shared_buffers')).toEqual([{ shared_buffers: '16MB' }]);
      } finally {
        await closeDataSource(ds);
      }
    }
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

  it('refuses a second opener of the same folder, in this process or a live other one', async () => {
    const dataDir = join(dir, 'locked');
    const ds = await createDataSource({ kind: 'pglite', dataDir }, [], []);
    try {
      expect(existsSync(join(dataDir, 'osc.lock'))).toBe(true);
      await expect(createDataSource({ kind: 'pglite', dataDir }, [], [])).rejects.toBeInstanceOf(
        ConflictError,
      );
    } finally {
      await closeDataSource(ds);
    }
    expect(existsSync(join(dataDir, 'osc.lock'))).toBe(false);

    const other = join(dir, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'osc.lock'), String(process.ppid));
    await expect(createDataSource({ kind: 'pglite', dataDir: other }, [], [])).rejects.toThrow(
      `is in use by process ${process.ppid}`,
    );
  });

  it('takes over a lock left by a dead process', async () => {
    const dataDir = join(dir, 'stale');
    mkdirSync(dataDir);
    writeFileSync(join(dataDir, 'osc.lock'), '999999999');
    const ds = await createDataSource({ kind: 'pglite', dataDir }, [], []);
    await closeDataSource(ds);
  });
});
