import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { volumeQuotaDeltas } from '@osc/block-storage-domain';
import { QuotaRepository } from '@osc/block-storage-persistence';
import { createRuntime, type RunningApp, type Runtime } from '@osc/platform';
import { loadConfig, loadConfigs, SCHEMA_PARTS, startBackupWorker } from '../index';
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
    await runtime.dataSource.query(
      `INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'recover-type', now())`,
      [TYPE],
    );
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
    const pools = await runtime.dataSource.query(
      `SELECT name, backend, availability_zone, capabilities FROM storage_pools`,
    );
    expect(pools).toHaveLength(1);
    expect(pools[0]).toMatchObject({ name: `${backend}#file`, backend, availability_zone: 'nova' });
    expect(pools[0].capabilities).toMatchObject({
      thin_provisioning_support: true,
      storage_protocol: 'file',
      total_capacity_gb: expect.any(Number),
    });
  }, 60000);
});

/**
 * An extend's reserved quota is never left behind: the reservation row lets a restarted back end
 * finish the extend and commit it, and a failed extend releases it.
 */
describe('extend reservations across a back-end restart', () => {
  let runtime: Runtime;
  let worker: RunningApp | null = null;
  let dir: string;
  const backend = 'reserve-host@file';
  const TYPE = randomUUID();
  const quotas = new QuotaRepository();

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-reserve-'));
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, SCHEMA_PARTS);
    await runtime.dataSource.query(
      `INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'gold', now())`,
      [TYPE],
    );
  }, 60000);

  afterAll(async () => {
    await worker?.close();
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What volume-api leaves behind when the process dies right after accepting `os-extend`. */
  const extendingVolume = async (project: string, size: number, newSize: number): Promise<string> => {
    const id = randomUUID();
    await runtime.dataSource.transaction(async (em) => {
      await em.query(
        `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, created_at) VALUES ($1, $2, $3, 'extending', $4, $5, now())`,
        [id, project, size, TYPE, `${backend}#file`],
      );
      await quotas.apply(em, project, volumeQuotaDeltas(size, 'gold'), 'in_use');
      const deltas = volumeQuotaDeltas(newSize - size, 'gold').filter((d) =>
        d.resource.startsWith('gigabytes'),
      );
      await quotas.reserve(em, {
        id: randomUUID(),
        projectId: project,
        volumeId: id,
        operation: 'extend',
        newSize,
        deltas,
        now: new Date(),
      });
    });
    return id;
  };
  const usage = async (project: string): Promise<Record<string, { inUse: number; reserved: number }>> =>
    quotas.usages(runtime.dataSource, project);
  const volume = async (id: string): Promise<{ status: string; size: number }> => {
    const r = (await runtime.dataSource.query(`SELECT status, size FROM volumes WHERE id = $1`, [id]))[0];
    return { status: r.status, size: Number(r.size) };
  };
  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('finishes an interrupted extend and commits its reservation; a failing one releases it', async () => {
    const finished = await extendingVolume('proj-a', 1, 3);
    await createSparseFile(path.join(dir, `volume-${finished}`), GIB);
    const failing = await extendingVolume('proj-b', 2, 5); // no file: growing it fails
    expect(await usage('proj-a')).toMatchObject({
      gigabytes: { inUse: 1, reserved: 2 },
      gigabytes_gold: { inUse: 1, reserved: 2 },
    });

    worker = await startBackupWorker(
      loadConfig({ VOLUME_BACKEND_DIR: dir, VOLUME_BACKEND_HOST: 'reserve-host', LOG_LEVEL: 'error' }),
      runtime,
      { http: false },
    );

    await until(async () => (await volume(finished)).status === 'available');
    expect(await volume(finished)).toEqual({ status: 'available', size: 3 });
    expect((await stat(path.join(dir, `volume-${finished}`))).size).toBe(3 * GIB);
    expect(await usage('proj-a')).toMatchObject({
      gigabytes: { inUse: 3, reserved: 0 },
      gigabytes_gold: { inUse: 3, reserved: 0 },
    });

    await until(async () => (await volume(failing)).status === 'error_extending');
    expect(await volume(failing)).toEqual({ status: 'error_extending', size: 2 });
    expect(await usage('proj-b')).toMatchObject({
      gigabytes: { inUse: 2, reserved: 0 },
      gigabytes_gold: { inUse: 2, reserved: 0 },
    });
    expect(await runtime.dataSource.query(`SELECT id FROM quota_reservations`)).toEqual([]);

    // Settling is once only: a second run of the same job (or recovery racing it) changes nothing.
    await worker.close();
    worker = await startBackupWorker(
      loadConfig({ VOLUME_BACKEND_DIR: dir, VOLUME_BACKEND_HOST: 'reserve-host', LOG_LEVEL: 'error' }),
      runtime,
      { http: false },
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(await usage('proj-a')).toMatchObject({ gigabytes: { inUse: 3, reserved: 0 } });
  }, 60000);
});

/**
 * A migration survives a restart of the back ends: the destination finds the job kept in the
 * volume's admin metadata and finishes it (bytes, host, type, quota once), and stray copies — the
 * source file of a volume that already moved, the partial copy of an interrupted one — are removed
 * while files of volumes a back end still owns stay.
 */
describe('volume migration across a back-end restart', () => {
  let runtime: Runtime;
  let workers: RunningApp[] = [];
  let dir: string;
  const host = 'migrate-host';
  const OLD = randomUUID();
  const NEW = randomUUID();
  const quotas = new QuotaRepository();
  const env = (): Record<string, string> => ({
    VOLUME_BACKEND_DIR: dir,
    VOLUME_BACKEND_HOST: host,
    VOLUME_BACKENDS: 'alpha,beta',
    LOG_LEVEL: 'error',
  });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-migrate-'));
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, SCHEMA_PARTS);
    await runtime.dataSource.query(
      `INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'on-alpha', now()), ($2, 'on-beta', now())`,
      [OLD, NEW],
    );
    await runtime.dataSource.query(
      `INSERT INTO volume_type_extra_specs (volume_type_id, key, value) VALUES ($1, 'volume_backend_name', 'alpha'), ($2, 'volume_backend_name', 'beta')`,
      [OLD, NEW],
    );
  }, 60000);

  afterAll(async () => {
    for (const w of workers) await w.close();
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}-beta`, { recursive: true, force: true });
  });

  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const row = async (id: string) =>
    (
      await runtime.dataSource.query(
        `SELECT status, host, migration_status, volume_type_id, admin_metadata FROM volumes WHERE id = $1`,
        [id],
      )
    )[0];
  const startAll = async (): Promise<void> => {
    for (const config of loadConfigs(env()))
      workers.push(await startBackupWorker(config, runtime, { http: false }));
  };
  const stopAll = async (): Promise<void> => {
    for (const w of workers) await w.close();
    workers = [];
  };

  it('finishes an interrupted retype-with-migration once and sweeps stray copies', async () => {
    // The pools must have reported (the source's location is read from its pool).
    await startAll();
    await stopAll();
    const project = 'proj-m';
    const id = randomUUID();
    const reservation = randomUUID();
    const job = {
      volumeId: id,
      source: `${host}@alpha#alpha`,
      destination: `${host}@beta#beta`,
      newTypeId: NEW,
      reservationId: reservation,
      holdStatus: 'retyping',
      previousStatus: 'available',
      startedAt: Date.now(),
    };
    // What volume-api leaves when the process dies right after accepting the retype.
    await runtime.dataSource.transaction(async (em) => {
      await em.query(
        `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, migration_status, admin_metadata, created_at) VALUES ($1, $2, 1, 'retyping', $3, $4, 'starting', $5::jsonb, now())`,
        [id, project, OLD, job.source, JSON.stringify({ migration_job: JSON.stringify(job) })],
      );
      await quotas.apply(em, project, volumeQuotaDeltas(1, 'on-alpha'), 'in_use');
      await quotas.reserve(em, {
        id: reservation,
        projectId: project,
        volumeId: id,
        operation: 'migrate',
        newSize: null,
        deltas: volumeQuotaDeltas(1, 'on-beta').filter((d) => d.resource.includes('_')),
        now: new Date(),
      });
    });
    const source = path.join(dir, `volume-${id}`);
    await createSparseFile(source, GIB);
    await writeFile(source, Buffer.from('migrating bytes'), { flag: 'r+' });
    // A partial copy of that interrupted migration at the destination, and stray files of volumes
    // that moved away or were deleted; a file of a volume still here stays.
    await createSparseFile(path.join(`${dir}-beta`, `volume-${id}.migrating`), GIB);
    const movedAway = randomUUID();
    await runtime.dataSource.query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, migration_status, created_at) VALUES ($1, 'p', 1, 'available', $2, $3, 'success', now())`,
      [movedAway, NEW, `${host}@beta#beta`],
    );
    await createSparseFile(path.join(dir, `volume-${movedAway}`), GIB);
    const staying = randomUUID();
    await runtime.dataSource.query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, created_at) VALUES ($1, 'p', 1, 'available', $2, $3, now())`,
      [staying, OLD, `${host}@alpha#alpha`],
    );
    await createSparseFile(path.join(dir, `volume-${staying}`), GIB);
    const unknown = path.join(dir, `volume-${randomUUID()}`);
    await createSparseFile(unknown, 1024);

    await startAll();
    await until(async () => (await row(id)).migration_status === 'success');
    expect(await row(id)).toEqual({
      status: 'available',
      host: `${host}@beta#beta`,
      migration_status: 'success',
      volume_type_id: NEW,
      admin_metadata: {},
    });
    const moved = await readFile(path.join(`${dir}-beta`, `volume-${id}`));
    expect(moved.subarray(0, 15).toString()).toBe('migrating bytes');
    expect(moved.length).toBe(GIB);
    await until(async () => !existsSync(source));
    expect(existsSync(path.join(`${dir}-beta`, `volume-${id}.migrating`))).toBe(false);
    expect(existsSync(path.join(dir, `volume-${movedAway}`))).toBe(false);
    expect(existsSync(path.join(dir, `volume-${staying}`))).toBe(true);
    expect(existsSync(unknown)).toBe(true);
    const usage = await quotas.usages(runtime.dataSource, project);
    expect(usage).toMatchObject({
      volumes: { inUse: 1, reserved: 0 },
      'volumes_on-alpha': { inUse: 0, reserved: 0 },
      'volumes_on-beta': { inUse: 1, reserved: 0 },
      'gigabytes_on-beta': { inUse: 1, reserved: 0 },
    });

    // Once only: another restart changes nothing.
    await stopAll();
    await startAll();
    await new Promise((r) => setTimeout(r, 300));
    expect(await quotas.usages(runtime.dataSource, project)).toMatchObject({
      'volumes_on-beta': { inUse: 1, reserved: 0 },
      'volumes_on-alpha': { inUse: 0, reserved: 0 },
    });
    expect(existsSync(path.join(`${dir}-beta`, `volume-${id}`))).toBe(true);
  }, 60000);
});
