import 'reflect-metadata';
import { ENGINE_KINDS, type TestDataSource, createTestDataSource } from '@osc/persistence';
import { blockStorageEntities } from './block-storage.entities';
import { blockStorageMigrations } from './block-storage.migration';
import { BackendFileRepository, type BackendFile } from './manage.repository';

/**
 * Two replicas of one back end report the same directory: their file reports, each a transaction of
 * its own, may overlap and must both succeed (a chaos run once saw the second replica's start fail
 * on the first one's rows).
 */
describe.each(ENGINE_KINDS)('back-end file reports (%s)', (kind) => {
  let t: TestDataSource;
  const files = new BackendFileRepository();

  beforeAll(async () => {
    t = await createTestDataSource(kind, {
      entities: blockStorageEntities,
      migrations: blockStorageMigrations,
    });
  }, 60000);
  afterAll(() => t?.cleanup());

  const report = (backend: string, found: readonly BackendFile[]): Promise<void> =>
    t.dataSource.transaction((em) => files.replace(em, backend, found, new Date()));

  it('lets overlapping reports of one back end both succeed, the last one standing', async () => {
    const backend = `overlap-${kind}@file`;
    const found = Array.from({ length: 20 }, (_, i) => ({ name: `volume-${i}`, bytes: i }));
    for (let round = 0; round < 20; round++) {
      await Promise.all([report(backend, found), report(backend, found), report(backend, found)]);
    }
    expect(await files.list(t.dataSource, backend, 'volume-')).toHaveLength(20);
    await report(backend, found.slice(0, 3));
    expect((await files.list(t.dataSource, backend, 'volume-')).map((f) => f.name)).toEqual([
      'volume-0',
      'volume-1',
      'volume-2',
    ]);
  });

  it('leaves the other back ends reports alone', async () => {
    await report(`a-${kind}@file`, [{ name: 'volume-a', bytes: 1 }]);
    await report(`b-${kind}@file`, [{ name: 'volume-b', bytes: 2 }]);
    await report(`a-${kind}@file`, []);
    expect(await files.list(t.dataSource, `a-${kind}@file`, '')).toEqual([]);
    expect(await files.list(t.dataSource, `b-${kind}@file`, '')).toEqual([{ name: 'volume-b', bytes: 2 }]);
  });
});
