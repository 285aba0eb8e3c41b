import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { ENGINE_KINDS, type TestDataSource, createTestDataSource } from '@osc/persistence';
import { blockStorageEntities } from './block-storage.entities';
import { blockStorageMigrations } from './block-storage.migration';
import { SnapshotRepository, VolumeRepository } from './volume.repository';

/** Metadata writes are one statement each: concurrent writers of different keys both keep theirs (issue #20 item 6). */
describe.each(ENGINE_KINDS)('atomic metadata writes (%s)', (kind) => {
  let t: TestDataSource;
  const volumes = new VolumeRepository();
  const snapshots = new SnapshotRepository();
  const TYPE = randomUUID();

  beforeAll(async () => {
    t = await createTestDataSource(kind, {
      entities: blockStorageEntities,
      migrations: blockStorageMigrations,
    });
    await t.dataSource.query(`INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'meta', now())`, [
      TYPE,
    ]);
  }, 60000);
  afterAll(() => t?.cleanup());

  const volume = async (metadata: Record<string, string>): Promise<string> => {
    const id = randomUUID();
    await t.dataSource.query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, metadata, created_at) VALUES ($1, 'proj', 1, 'available', $2, $3::jsonb, now())`,
      [id, TYPE, JSON.stringify(metadata)],
    );
    return id;
  };
  const metadataOf = async (table: string, id: string): Promise<unknown> => {
    const rows: { metadata: unknown }[] = await t.dataSource.query(
      `SELECT metadata FROM "${table}" WHERE id = $1`,
      [id],
    );
    const m = rows[0]?.metadata;
    return typeof m === 'string' ? JSON.parse(m) : m;
  };

  it('keeps both keys when a second merge runs while the first one holds the row', async () => {
    const id = await volume({ keep: 'me' });
    let second: Promise<unknown> = Promise.resolve();
    await t.dataSource.transaction(async (em) => {
      expect(await volumes.metadata.merge(em, id, { a: '1' }, new Date())).toEqual({ keep: 'me', a: '1' });
      // Started before the first commits; on Postgres it waits for the row, on PGlite for the session.
      second = volumes.metadata.merge(t.dataSource, id, { b: '2' }, new Date());
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    expect(await second).toEqual({ keep: 'me', a: '1', b: '2' });
    expect(await metadataOf('volumes', id)).toEqual({ keep: 'me', a: '1', b: '2' });
  });

  it('keeps every key of many concurrent merges and item deletes', async () => {
    const id = await volume({ gone: 'x' });
    await Promise.all([
      ...Array.from({ length: 8 }, (_, i) =>
        volumes.metadata.merge(t.dataSource, id, { [`k${i}`]: String(i) }, new Date()),
      ),
      volumes.metadata.deleteKey(t.dataSource, id, 'gone', new Date()),
    ]);
    expect(await metadataOf('volumes', id)).toEqual(
      Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}`, String(i)])),
    );
  });

  it('replaces only when the row still holds the metadata the If-Match was checked against', async () => {
    const id = await volume({ a: '1' });
    expect(
      await volumes.metadata.replace(t.dataSource, id, { c: '3' }, new Date(), { a: '1', other: 'x' }),
    ).toBeNull();
    expect(await metadataOf('volumes', id)).toEqual({ a: '1' });
    expect(await volumes.metadata.replace(t.dataSource, id, { c: '3' }, new Date(), { a: '1' })).toEqual({
      c: '3',
    });
    expect(await volumes.metadata.replace(t.dataSource, id, { d: '4' }, new Date())).toEqual({ d: '4' });
  });

  it('deletes a key only while it is there, and never writes a deleted row', async () => {
    const id = await volume({ a: '1', b: '2' });
    expect(await volumes.metadata.deleteKey(t.dataSource, id, 'a', new Date())).toBe(true);
    expect(await volumes.metadata.deleteKey(t.dataSource, id, 'a', new Date())).toBe(false);
    expect(await metadataOf('volumes', id)).toEqual({ b: '2' });
    await t.dataSource.query(`UPDATE volumes SET deleted = true WHERE id = $1`, [id]);
    expect(await volumes.metadata.merge(t.dataSource, id, { c: '3' }, new Date())).toBeNull();
    expect(await volumes.metadata.deleteKey(t.dataSource, id, 'b', new Date())).toBe(false);
  });

  it('writes snapshot metadata the same way', async () => {
    const vol = await volume({});
    const id = randomUUID();
    await t.dataSource.query(
      `INSERT INTO snapshots (id, project_id, volume_id, size, status, metadata, created_at) VALUES ($1, 'proj', $2, 1, 'available', '{"x": "0"}'::jsonb, now())`,
      [id, vol],
    );
    await Promise.all([
      snapshots.metadata.merge(t.dataSource, id, { y: '1' }, new Date()),
      snapshots.metadata.merge(t.dataSource, id, { z: '2' }, new Date()),
    ]);
    expect(await metadataOf('snapshots', id)).toEqual({ x: '0', y: '1', z: '2' });
  });
});
