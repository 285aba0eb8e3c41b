import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort, startS3, startSwift, type RunningObjectStore } from '@osc/testing';
import { loadConfig } from '../../config';
import { createSparseFile } from '../../volume-backend/sparse-file';
import type { BackupLocation } from '../backup-engine';
import { restoreBackup } from '../backup-reader';
import { writeBackup } from '../backup-writer';
import { ChunkWorkers } from '../chunk-workers';
import { BackupStoreError, createBackupStore, type BackupStore } from './index';

const MIB = 1024 * 1024;
const sha = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
async function writeAt(file: string, offset: number, data: Buffer): Promise<void> {
  const fh = await open(file, 'r+');
  await fh.write(data, 0, data.length, offset);
  await fh.close();
}
const going = async (): Promise<boolean> => true;

const workers = new ChunkWorkers(2);
afterAll(() => workers.close());

type Driver = 'posix' | 'swift' | 's3';

/**
 * The three backup drivers against real servers (Swift from Debian's packages, an S3-protocol
 * server from npm), started here on loopback. Objects are 8 MiB of random bytes, larger than the
 * Swift segment (1 MiB) and the S3 part (5 MiB): every data object goes up as a static large
 * object or a multipart upload.
 */
describe.each<Driver>(['posix', 'swift', 's3'])('backup store driver %s', (driver) => {
  let server: RunningObjectStore | null = null;
  let env: Record<string, string>;
  let dir: string;
  let store: BackupStore;
  const params = { chunkSize: 8 * MIB, blockSize: 32 * 1024 };
  const bytes = 24 * MIB;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), `osc-store-${driver}-`));
    if (driver === 'swift') server = await startSwift({ segmentSize: MIB });
    if (driver === 's3') server = await startS3({ partSize: 5 * MIB });
    env = {
      DATA_DIR: dir,
      ...(server?.env ?? {}),
      BACKUP_SWIFT_RETRY_BACKOFF: '0.05',
      BACKUP_S3_RETRY_MAX_ATTEMPTS: '2',
    };
    store = createBackupStore(loadConfig(env).backup.store);
  }, 120000);
  afterAll(async () => {
    await store?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const description = (id: string, parentId: string | null = null) => ({
    backupId: id,
    volumeId: 'v',
    name: null,
    description: null,
    createdAt: 'now',
    parentId,
  });
  const backup = (on: BackupStore, source: string, location: BackupLocation, parent: BackupLocation | null) =>
    writeBackup({
      store: on,
      workers,
      params,
      codec: 'zstd',
      depth: 2,
      source,
      bytes,
      location,
      description: description(location.prefix, parent?.prefix ?? null),
      volumeMeta: '{}',
      parent,
      progress: going,
    });
  const restore = (on: BackupStore, chain: BackupLocation[], target: string) =>
    restoreBackup({
      store: on,
      workers,
      depth: 2,
      chain,
      target,
      bytes,
      newVolume: true,
      progress: going,
      reportEvery: MIB,
    });

  it('stores full and incremental backups, restores them byte for byte, and deletes every object', async () => {
    const container = store.defaultContainer('0123456789abcdef');
    expect(container).toBe(driver === 'posix' ? '01/23/0123456789abcdef' : 'volumebackups');
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, bytes);
    await writeAt(vol, 0, randomBytes(8 * MIB));
    await writeAt(vol, 16 * MIB + 100, randomBytes(MIB));
    const v1 = await sha(vol);
    const full = { container, prefix: 'volume_v/20260101000000/az_nova_backup_full' };
    expect(await backup(store, vol, full, null)).toEqual({ objectCount: 2 });
    expect(await store.list(container, full.prefix)).toEqual([
      `${full.prefix}-00001`,
      `${full.prefix}-00002`,
      `${full.prefix}_metadata`,
      `${full.prefix}_sha256file`,
    ]);
    await writeAt(vol, 20 * MIB, randomBytes(64 * 1024));
    const v2 = await sha(vol);
    const inc = { container, prefix: 'volume_v/20260101000100/az_nova_backup_inc' };
    expect(await backup(store, vol, inc, full)).toEqual({ objectCount: 1 });

    const t1 = path.join(dir, 't1');
    await createSparseFile(t1, bytes);
    await restore(store, [full], t1);
    expect(await sha(t1)).toBe(v1);
    const t2 = path.join(dir, 't2');
    await createSparseFile(t2, bytes);
    await restore(store, [full, inc], t2);
    expect(await sha(t2)).toBe(v2);

    await store.deletePrefix(container, inc.prefix);
    await store.deletePrefix(container, full.prefix);
    expect(await store.list(container, 'volume_v/')).toEqual([]);
    // Segments of large objects went with their manifests.
    if (driver === 'swift') expect(await store.list(`${container}_segments`, 'volume_v/')).toEqual([]);
  });

  it('restores a backup written by another driver once its objects are copied over (same chunk format)', async () => {
    const other = createBackupStore(loadConfig({ DATA_DIR: path.join(dir, 'other') }).backup.store);
    const vol = path.join(dir, 'vol2');
    await createSparseFile(vol, bytes);
    await writeAt(vol, 3 * MIB, randomBytes(2 * MIB));
    const posixLoc = { container: 'aa/bb/copied', prefix: 'volume_v_20260101000000_backup_copied' };
    await backup(other, vol, posixLoc, null);
    const here = {
      container: driver === 'posix' ? 'cc/dd/copied' : 'copied-backups',
      prefix: posixLoc.prefix,
    };
    await store.ensureContainer(here.container);
    for (const name of await other.list(posixLoc.container, posixLoc.prefix))
      await store.write(here.container, name, await other.read(posixLoc.container, name));
    const target = path.join(dir, 't3');
    await createSparseFile(target, bytes);
    await restore(store, [here], target);
    expect(await sha(target)).toBe(await sha(vol));
    await store.deletePrefix(here.container, here.prefix);
    expect(await store.list(here.container, here.prefix)).toEqual([]);
  });

  it('refuses container names the server cannot hold and reports a missing object clearly', async () => {
    const bad = driver === 'posix' ? '../escape' : driver === 'swift' ? 'a/b' : 'Not_A_Bucket';
    expect(() => store.checkContainer(bad)).toThrow(/^Invalid backup: container/);
    const container = driver === 'posix' ? 'ee/ff/missing' : 'volumebackups';
    await store.ensureContainer(container);
    await expect(store.read(container, 'no-such-object')).rejects.toThrow(
      driver === 'posix' ? /ENOENT/ : /no-such-object.*not found/,
    );
    expect(await store.list(driver === 'posix' ? 'gg/hh/none' : 'never-created', 'x')).toEqual([]);
  });

  if (driver !== 'posix')
    it('fails with a message naming the server when it is down or refuses the credentials', async () => {
      const closed = await freePort();
      const down = createBackupStore(
        loadConfig({
          ...env,
          ...(driver === 'swift'
            ? { BACKUP_SWIFT_AUTH_URL: `http://127.0.0.1:${closed}/auth/v1.0` }
            : { BACKUP_S3_ENDPOINT_URL: `http://127.0.0.1:${closed}` }),
        }).backup.store,
      );
      const denied = createBackupStore(
        loadConfig({
          ...env,
          ...(driver === 'swift' ? { BACKUP_SWIFT_KEY: 'wrong' } : { BACKUP_S3_STORE_ACCESS_KEY: 'WRONG' }),
        }).backup.store,
      );
      try {
        const downErr = await down.write('volumebackups', 'x', Buffer.from('x')).catch((e: unknown) => e);
        expect(downErr).toBeInstanceOf(BackupStoreError);
        expect((downErr as Error).message).toMatch(new RegExp(`127\\.0\\.0\\.1:${closed}.*ECONNREFUSED`));
        const deniedErr = await denied.write('volumebackups', 'x', Buffer.from('x')).catch((e: unknown) => e);
        expect(deniedErr).toBeInstanceOf(BackupStoreError);
        expect((deniedErr as Error).message).toMatch(
          driver === 'swift' ? /authentication .* failed: 401/ : /403 InvalidAccessKeyId/,
        );
      } finally {
        await down.close();
        await denied.close();
      }
    });
});
