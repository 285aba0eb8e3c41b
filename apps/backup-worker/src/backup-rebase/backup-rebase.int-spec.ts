import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BACKUP_REBASE_JOB, backupRebaseQueue } from '@osc/block-storage-domain';
import { createRuntime, type RunningApp, type Runtime } from '@osc/platform';
import { loadConfig, SCHEMA_PARTS, startBackupWorker } from '../index';
import type { BackupLocation } from '../backups/backup-engine';
import { writeBackup } from '../backups/backup-writer';
import { ChunkWorkers } from '../backups/chunk-workers';
import { PosixBackupStore } from '../backups/stores';
import { createSparseFile } from '../volume-backend/sparse-file';

const MIB = 1024 * 1024;

async function writeAt(file: string, offset: number, data: Buffer): Promise<void> {
  const fh = await open(file, 'r+');
  await fh.write(data, 0, data.length, offset);
  await fh.close();
}

/**
 * A rebase that fails for good stalls its policy's retention (the older backups must stay while the
 * incremental needs them): the failure shows on the policy (GET's `last_error`), and the next rebase
 * of that policy that succeeds clears it (issue 21).
 */
describe('backup rebase failures surface on the policy', () => {
  let runtime: Runtime;
  let worker: RunningApp | null = null;
  let dir: string;
  const workers = new ChunkWorkers(1);

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-bk-rebase-'));
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, SCHEMA_PARTS);
  }, 60000);
  afterAll(async () => {
    await worker?.close();
    await runtime?.close();
    await workers.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const db = () => runtime.dataSource;
  const row = async (table: string, id: string): Promise<Record<string, any>> =>
    (await db().query(`SELECT * FROM ${table} WHERE id = $1`, [id]))[0];
  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('records the failure on the policy, and clears it once a rebase succeeds', async () => {
    const type = randomUUID();
    const volumeId = randomUUID();
    const policyId = randomUUID();
    await db().query(`INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'rebase-type', now())`, [
      type,
    ]);
    await db().query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, created_at) VALUES ($1, 'p', 1, 'available', $2, 'rh@file#file', now())`,
      [volumeId, type],
    );
    await db().query(
      `INSERT INTO backup_policies (id, project_id, volume_id, schedule, retention, next_run_at, created_at)
       VALUES ($1, 'p', $2, '0 2 * * *', 1, now() + interval '1 day', now())`,
      [policyId, volumeId],
    );

    // A full and an incremental on it, both the policy's, in the worker's store.
    const store = new PosixBackupStore(path.join(dir, 'backups'));
    const bytes = path.join(dir, 'bytes');
    await createSparseFile(bytes, 8 * MIB);
    await writeAt(bytes, 0, randomBytes(MIB));
    const stored = async (id: string, prefix: string, parent: BackupLocation | null): Promise<void> => {
      await writeBackup({
        store,
        workers,
        depth: 2,
        params: { chunkSize: MIB, blockSize: 32 * 1024 },
        codec: 'zlib',
        source: bytes,
        bytes: 8 * MIB,
        location: { container: 'c', prefix },
        description: {
          backupId: id,
          volumeId,
          name: null,
          description: null,
          createdAt: 'now',
          parentId: null,
        },
        volumeMeta: '{}',
        parent,
        progress: async () => true,
      });
    };
    const full = randomUUID();
    const inc = randomUUID();
    await stored(full, 'full', null);
    await writeAt(bytes, 5 * MIB, randomBytes(MIB));
    await stored(inc, 'inc', { container: 'c', prefix: 'full' });
    for (const [id, prefix, parent, dependents] of [
      [full, 'full', null, 1],
      [inc, 'inc', full, 0],
    ] as const) {
      await db().query(
        `INSERT INTO backups (id, project_id, volume_id, status, size, host, container, service_metadata, parent_id,
           num_dependent_backups, backup_policy_id, data_timestamp, created_at)
         VALUES ($1, 'p', $2, 'available', 1, 'rh@file', 'c', $3, $4, $5, $6, now(), now())`,
        [id, volumeId, prefix, parent, dependents, policyId],
      );
    }

    // The full's data object is damaged: the merge refuses it.
    const object = path.join(dir, 'backups', 'c', 'full-00001');
    const good = await readFile(object);
    await writeFile(object, randomBytes(good.length));

    worker = await startBackupWorker(
      loadConfig({
        VOLUME_BACKEND_DIR: path.join(dir, 'volumes'),
        BACKUP_STORE_DIR: path.join(dir, 'backups'),
        BACKUP_CHUNK_SIZE: String(MIB),
        VOLUME_BACKEND_HOST: 'rh',
        LOG_LEVEL: 'error',
      }),
      runtime,
      { http: false },
    );
    const rebase = (id: string) =>
      runtime.jobs.add(backupRebaseQueue('rh@file'), {
        id,
        name: BACKUP_REBASE_JOB,
        data: { backupId: inc, parentId: full },
        attempts: 1,
      });

    await rebase('first');
    await until(async () => (await row('backup_policies', policyId))['last_error'] !== null);
    const failed = await row('backup_policies', policyId);
    expect(failed['last_error']).toBe(
      `Rebasing backup ${inc} onto a full failed, so its older backups are kept: Invalid backup: object full-00001 is corrupt (checksum mismatch).`,
    );
    expect(failed['last_error_at']).not.toBeNull();
    expect(await row('backups', inc)).toMatchObject({ parent_id: full, service_metadata: 'inc' });

    // Repaired, while a restore reads the volume's chain (the full is `restoring`): the switch is made,
    // but the old objects stay until the restore ends; then the retried job removes them.
    await writeFile(object, good);
    await db().query(`UPDATE backups SET status = 'restoring' WHERE id = $1`, [full]);
    await runtime.jobs.add(backupRebaseQueue('rh@file'), {
      id: 'second',
      name: BACKUP_REBASE_JOB,
      data: { backupId: inc, parentId: full },
      attempts: 5,
      backoff: { type: 'fixed', delayMs: 200 },
    });
    await until(async () => (await row('backups', inc))['parent_id'] === null);
    await until(async () => (await row('backup_policies', policyId))['last_error'] === null);
    expect((await row('backup_policies', policyId))['last_error_at']).toBeNull();
    await new Promise((r) => setTimeout(r, 500));
    // the incremental's objects from before the rebase (the merged ones are under inc_rebase_…)
    const old = async () =>
      (await readdir(path.join(dir, 'backups', 'c'))).filter(
        (n) => n.startsWith('inc') && !n.startsWith('inc_rebase_'),
      );
    expect((await old()).sort()).toEqual(['inc-00001', 'inc_metadata', 'inc_sha256file']);
    await db().query(`UPDATE backups SET status = 'available' WHERE id = $1`, [full]);
    await until(async () => (await old()).length === 0);
  }, 60000);
});
