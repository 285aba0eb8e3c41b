import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createRuntime, type RunningApp, type Runtime } from '@osc/platform';
import { loadConfig, SCHEMA_PARTS, startBackupWorker } from '../index';
import { createSparseFile } from './sparse-file';

const GIB = 1024 ** 3;

/** BS-8.6.2 on the embedded engine: a restarted back end settles the work it owned. */
describe('volume back end restart recovery', () => {
  let runtime: Runtime;
  let worker: RunningApp | null = null;
  let dir: string;
  const backend = 'recover-host@file';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-recover-'));
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, SCHEMA_PARTS);
  }, 60000);

  afterAll(async () => {
    await worker?.close();
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insertVolume = async (status: string, host: string | null): Promise<string> => {
    const id = randomUUID();
    await runtime.dataSource.query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, created_at) VALUES ($1, 'p', 1, $2, $3, $4, now())`,
      [id, status, TYPE, host],
    );
    return id;
  };
  const statusOf = async (id: string): Promise<{ status: string; deleted: boolean }> =>
    (await runtime.dataSource.query(`SELECT status, deleted FROM volumes WHERE id = $1`, [id]))[0];
  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const TYPE = randomUUID();

  it('re-creates, deletes and fails interrupted work, and reports its pool', async () => {
    await runtime.dataSource.query(`INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'recover-type', now())`, [TYPE]);
    const creating = await insertVolume('creating', `${backend}#file`);
    const deleting = await insertVolume('deleting', `${backend}#file`);
    await createSparseFile(path.join(dir, `volume-${deleting}`), GIB);
    const extending = await insertVolume('extending', `${backend}#file`);
    const elsewhere = await insertVolume('creating', 'other-host@file#file');

    worker = await startBackupWorker(
      loadConfig({ VOLUME_BACKEND_DIR: dir, VOLUME_BACKEND_HOST: 'recover-host', LOG_LEVEL: 'error' }),
      runtime,
      { http: false },
    );

    await until(async () => (await statusOf(creating)).status === 'available');
    expect((await stat(path.join(dir, `volume-${creating}`))).size).toBe(GIB);
    await until(async () => (await statusOf(deleting)).deleted);
    expect(existsSync(path.join(dir, `volume-${deleting}`))).toBe(false);
    expect(await statusOf(extending)).toEqual({ status: 'error_extending', deleted: false });
    expect(await statusOf(elsewhere)).toEqual({ status: 'creating', deleted: false });
    const pools = await runtime.dataSource.query(`SELECT name, backend, availability_zone, capabilities FROM storage_pools`);
    expect(pools).toHaveLength(1);
    expect(pools[0]).toMatchObject({ name: `${backend}#file`, backend, availability_zone: 'nova' });
    expect(pools[0].capabilities).toMatchObject({ thin_provisioning_support: true, storage_protocol: 'file', total_capacity_gb: expect.any(Number) });
  }, 60000);
});
