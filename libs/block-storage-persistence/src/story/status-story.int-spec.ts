import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { ENGINE_KINDS, type TestDataSource, createTestDataSource } from '@osc/persistence';
import { BackupRepository } from '../backups/backup.repository';
import { blockStorageEntities } from '../block-storage.entities';
import { blockStorageMigrations } from '../block-storage.migration';
import { VolumeRepository } from '../volume.repository';
import { setStorySink, type StorySink } from './status-story';

/** The story of status changes is told once committed, never for a rollback (issue #16). */
describe.each(ENGINE_KINDS)('block-storage story lines (%s)', (kind) => {
  let t: TestDataSource;
  let lines: Record<string, unknown>[];
  let previous: StorySink;
  const volumes = new VolumeRepository();
  const backups = new BackupRepository();
  const TYPE = randomUUID();

  beforeAll(async () => {
    t = await createTestDataSource(kind, {
      entities: blockStorageEntities,
      migrations: blockStorageMigrations,
    });
    await t.dataSource.query(`INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'story', now())`, [
      TYPE,
    ]);
  }, 60000);
  afterAll(() => t?.cleanup());
  beforeEach(() => {
    lines = [];
    previous = setStorySink((fields) => lines.push(fields));
  });
  afterEach(() => setStorySink(previous));

  const volume = async (status: string): Promise<string> => {
    const id = randomUUID();
    await t.dataSource.query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, created_at) VALUES ($1, 'proj', 1, $2, $3, now())`,
      [id, status, TYPE],
    );
    return id;
  };

  it('tells a compare-and-set inside a transaction after the commit, with the ids as keys', async () => {
    const id = await volume('creating');
    await t.dataSource.transaction(async (em) => {
      expect(await volumes.compareAndSetStatus(em, id, ['creating'], 'available', new Date())).toBe(true);
      expect(lines).toEqual([]);
    });
    expect(lines).toEqual([
      {
        msg: 'volume available',
        event: 'block-storage.status',
        resource: 'volume',
        volumeId: id,
        projectId: 'proj',
        status: 'available',
        previousStatus: 'creating',
      },
    ]);
  });

  it('tells nothing for a rolled-back change or a compare-and-set that did not match', async () => {
    const id = await volume('creating');
    await expect(
      t.dataSource.transaction(async (em) => {
        await volumes.compareAndSetStatus(em, id, ['creating'], 'available', new Date());
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(
      await volumes.compareAndSetStatus(t.dataSource, id, ['deleting'], 'error_deleting', new Date()),
    ).toBe(false);
    expect(lines).toEqual([]);
    // Outside a transaction the statement has committed when it returns: told at once.
    expect(
      await volumes.compareAndSetStatus(t.dataSource, id, ['creating', 'error'], 'available', new Date()),
    ).toBe(true);
    expect(lines).toEqual([expect.objectContaining({ volumeId: id, status: 'available' })]);
    expect(lines[0]).not.toHaveProperty('previousStatus');
  });

  it('tells a backup change with its backup, volume and project ids, and its soft delete', async () => {
    const vol = await volume('available');
    const id = randomUUID();
    await t.dataSource.query(
      `INSERT INTO backups (id, project_id, volume_id, status, size, data_timestamp, created_at) VALUES ($1, 'proj', $2, 'creating', 1, now(), now())`,
      [id, vol],
    );
    await t.dataSource.transaction(async (em) => {
      await backups.compareAndSetStatus(em, id, ['creating'], 'available', new Date());
      await backups.compareAndSetStatus(em, id, ['available'], 'deleting', new Date());
    });
    await backups.softDelete(t.dataSource, id, ['deleting'], new Date());
    expect(lines.map((l) => [l['backupId'], l['volumeId'], l['projectId'], l['status']])).toEqual([
      [id, vol, 'proj', 'available'],
      [id, vol, 'proj', 'deleting'],
      [id, vol, 'proj', 'deleted'],
    ]);
  });
});
