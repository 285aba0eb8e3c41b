import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { QuotaRepository } from '@osc/block-storage-persistence';
import { createRuntime, type RunningApp, type Runtime } from '@osc/platform';
import { loadConfig, SCHEMA_PARTS, startBackupWorker } from '../index';
import { createSparseFile } from './sparse-file';

const GIB = 1024 ** 3;

/**
 * Manage and unmanage across a back-end restart (BS-8.6.2): what volume-api leaves behind when the
 * back end dies after accepting a manage or unmanage is finished by the restarted back end, and
 * the file of an unmanaged volume is never swept as a stray copy.
 */
describe('manage and unmanage recovery', () => {
  let runtime: Runtime;
  let worker: RunningApp | null = null;
  let dir: string;
  const backend = 'manage-host@file';
  const pool = `${backend}#file`;
  const TYPE = randomUUID();
  const quotas = new QuotaRepository();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-manage-'));
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, SCHEMA_PARTS);
    await runtime.dataSource.query(
      `INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'plain', now())`,
      [TYPE],
    );
  }, 60000);

  afterAll(async () => {
    await worker?.close();
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const file = (name: string): string => path.join(dir, name);
  const volume = async (
    status: string,
    size: number,
    adminMetadata: Record<string, string> = {},
    deleted = false,
  ): Promise<string> => {
    const id = randomUUID();
    await runtime.dataSource.query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, admin_metadata, deleted, created_at) VALUES ($1, 'p', $2, $3, $4, $5, $6::jsonb, $7, now())`,
      [id, size, status, TYPE, pool, JSON.stringify(adminMetadata), deleted],
    );
    return id;
  };
  const snapshot = async (
    volumeId: string,
    status: string,
    size: number,
    manageSource: string | null,
  ): Promise<string> => {
    const id = randomUUID();
    await runtime.dataSource.query(
      `INSERT INTO snapshots (id, project_id, volume_id, volume_type_id, size, status, host, manage_source, created_at) VALUES ($1, 'p', $2, $3, $4, $5, $6, $7, now())`,
      [id, volumeId, TYPE, size, status, pool, manageSource],
    );
    return id;
  };
  const row = async (table: 'volumes' | 'snapshots', id: string): Promise<any> =>
    (await runtime.dataSource.query(`SELECT * FROM ${table} WHERE id = $1`, [id]))[0];
  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('finishes interrupted manages and unmanages with the same effects, and keeps unmanaged files', async () => {
    // Usage as the API left it: four live volumes (the parent of 1 GiB, the unmanaging one of
    // 2 GiB, the two managing ones counted without gigabytes) and two snapshots of 1 GiB.
    await runtime.dataSource.transaction((em) =>
      quotas.apply(em, 'p', [
        { resource: 'volumes', delta: 4 },
        { resource: 'gigabytes', delta: 1 + 2 + 1 + 1 },
        { resource: 'snapshots', delta: 2 },
      ]),
    );
    // An unmanaged volume (deleted row marked) whose file an operator left in place.
    const oldId = await volume('deleted', 2, { unmanaged: 'True' }, true);
    await createSparseFile(file(`volume-${oldId}`), 2 * GIB);
    // Another unmanaged file nobody manages, and the file of a volume deleted the ordinary way
    // (a stray copy the restart removes).
    const keptId = await volume('deleted', 1, { unmanaged: 'True' }, true);
    await createSparseFile(file(`volume-${keptId}`), GIB);
    const strayId = await volume('deleted', 1, {}, true);
    await createSparseFile(file(`volume-${strayId}`), GIB);
    // A manage of the first file, interrupted before the back end looked at it.
    const managing = await volume('managing', 0, { manage_source: `volume-${oldId}` });
    // A manage whose rename happened but whose commit did not.
    const renamedId = await volume('managing', 0, { manage_source: `volume-${randomUUID()}` });
    await createSparseFile(file(`volume-${renamedId}`), GIB + 5);
    // An unmanage interrupted after the API accepted it.
    const unmanaging = await volume('unmanaging', 2);
    await createSparseFile(file(`volume-${unmanaging}`), 2 * GIB);
    // Snapshots: a manage and an unmanage interrupted.
    const parent = await volume('available', 1);
    await createSparseFile(file(`volume-${parent}`), GIB);
    const oldSnap = randomUUID();
    await writeFile(file(`snapshot-${oldSnap}`), 'snapshot bytes');
    const snapManaging = await snapshot(parent, 'creating', 1, `snapshot-${oldSnap}`);
    const snapUnmanaging = await snapshot(parent, 'unmanaging', 1, null);
    await createSparseFile(file(`snapshot-${snapUnmanaging}`), GIB);

    worker = await startBackupWorker(
      loadConfig({ VOLUME_BACKEND_DIR: dir, VOLUME_BACKEND_HOST: 'manage-host', LOG_LEVEL: 'error' }),
      runtime,
      { http: false },
    );

    await until(async () => (await row('volumes', managing)).status === 'available');
    expect(Number((await row('volumes', managing)).size)).toBe(2);
    expect((await row('volumes', managing)).admin_metadata).toEqual({});
    expect(existsSync(file(`volume-${oldId}`))).toBe(false);
    expect((await stat(file(`volume-${managing}`))).size).toBe(2 * GIB);

    await until(async () => (await row('volumes', renamedId)).status === 'available');
    expect(Number((await row('volumes', renamedId)).size)).toBe(2);

    await until(async () => (await row('volumes', unmanaging)).deleted === true);
    expect((await row('volumes', unmanaging)).admin_metadata).toMatchObject({ unmanaged: 'True' });
    expect(existsSync(file(`volume-${unmanaging}`))).toBe(true);

    await until(async () => (await row('snapshots', snapManaging)).status === 'available');
    expect((await row('snapshots', snapManaging)).manage_source).toBeNull();
    expect(existsSync(file(`snapshot-${snapManaging}`))).toBe(true);
    expect(existsSync(file(`snapshot-${oldSnap}`))).toBe(false);
    await until(async () => (await row('snapshots', snapUnmanaging)).deleted === true);
    expect(existsSync(file(`snapshot-${snapUnmanaging}`))).toBe(true);

    // The unmanaged volume and snapshot gave theirs back; the managed volumes were charged their
    // sizes: parent 1 + 2 + 2, and the managed snapshot 1.
    const usage = await quotas.usages(runtime.dataSource, 'p');
    expect(usage['volumes']?.inUse).toBe(3);
    expect(usage['gigabytes']?.inUse).toBe(1 + 2 + 2 + 1);
    expect(usage['snapshots']?.inUse).toBe(1);

    // The restart's sweep removed the stray copy but left the unmanaged files alone; the back end
    // reports them for the manageable lists.
    expect(existsSync(file(`volume-${strayId}`))).toBe(false);
    expect(existsSync(file(`volume-${keptId}`))).toBe(true);
    const reported = async (): Promise<string[]> =>
      (await runtime.dataSource.query(`SELECT name FROM backend_files WHERE backend = $1`, [backend])).map(
        (f: { name: string }) => f.name,
      );
    await until(async () => (await reported()).includes(`snapshot-${snapManaging}`));
    expect(await reported()).toEqual(
      expect.arrayContaining([`volume-${keptId}`, `snapshot-${snapUnmanaging}`, `volume-${managing}`]),
    );
  }, 60000);
});
