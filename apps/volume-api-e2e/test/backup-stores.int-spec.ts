import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import * as backupWorker from '@osc/backup-worker';
import { freePort, startS3, startSwift, type RunningObjectStore } from '@osc/testing';
import { admin, Client, startBlockStorage, type BlockStorage } from './harness';
import { MIB, scratchDir, sha256File, waitBackup as pollBackup, writeAt } from './backup-files';

type Driver = 'posix' | 'swift' | 's3';
const DRIVER_IDS: Record<Driver, string> = {
  posix: 'cinder.backup.drivers.posix.PosixBackupDriver',
  swift: 'cinder.backup.drivers.swift.SwiftBackupDriver',
  s3: 'cinder.backup.drivers.s3.S3BackupDriver',
};

const startServer = (driver: Driver): Promise<RunningObjectStore | null> =>
  driver === 'swift'
    ? startSwift({ segmentSize: MIB })
    : driver === 's3'
      ? startS3({ partSize: 5 * MIB })
      : Promise.resolve(null);

/**
 * Backups through the HTTP API on each backup driver (BACKUP_DRIVER), against real servers started
 * here on loopback: OpenStack Swift from Debian's packages and an S3-protocol server from npm.
 * 8 MiB chunks of random bytes are larger than the Swift segment (1 MiB) and the S3 part (5 MiB),
 * so data objects go up as static large objects and multipart uploads.
 */
describe.each<Driver>(['posix', 'swift', 's3'])('backups on the %s driver (embedded)', (driver) => {
  let server: RunningObjectStore | null = null;
  let bs: BlockStorage;
  let api: Client;
  let scratch: ReturnType<typeof scratchDir>;
  let env: Record<string, string>;
  let store: backupWorker.BackupStore;

  beforeAll(async () => {
    scratch = scratchDir(`osc-bk-${driver}-`);
    server = await startServer(driver);
    env = {
      BACKUP_STORE_DIR: path.join(scratch.dir, 'store'),
      BACKUP_CHUNK_SIZE: String(8 * MIB),
      ...(server?.env ?? {}),
    };
    bs = await startBlockStorage('embedded', env);
    api = new Client(bs.base, admin);
    store = backupWorker.createBackupStore(backupWorker.loadConfig(env).backup.store);
  }, 180000);

  afterAll(async () => {
    await bs?.close();
    await store?.close();
    await server?.stop();
    scratch?.remove();
  });

  const waitBackup = (id: string, statuses: string[]): Promise<any> =>
    pollBackup(api, id, statuses, { timeoutMs: 90000, pollMs: 100 });

  const volumeFile = (id: string): string => path.join(bs.volumeDir, `volume-${id}`);

  async function newVolume(): Promise<string> {
    const r = await api.post('/volumes', { volume: { size: 1, name: `bk-${driver}` } });
    expect(r.status).toBe(202);
    await api.waitFor('volumes', r.body.volume.id, ['available']);
    return r.body.volume.id;
  }

  async function backup(body: Record<string, unknown>): Promise<any> {
    const r = await api.post('/backups', { backup: body });
    expect(r.status).toBe(202);
    return waitBackup(r.body.backup.id, ['available', 'error']);
  }

  async function record(id: string): Promise<{ service: string; doc: any }> {
    const r = await api.get(`/backups/${id}/export_record`);
    expect(r.status).toBe(200);
    const rec = r.body['backup-record'];
    return {
      service: rec.backup_service,
      doc: JSON.parse(Buffer.from(rec.backup_url, 'base64').toString('utf8')),
    };
  }

  async function restoreNew(id: string): Promise<string> {
    const r = await api.post(`/backups/${id}/restore`, { restore: {} });
    expect(r.status).toBe(202);
    const vol = r.body.restore.volume_id;
    expect((await api.waitFor('volumes', vol, ['available', 'error'], 90000)).status).toBe('available');
    await waitBackup(id, ['available']);
    return sha256File(volumeFile(vol));
  }

  it('backs up full and incremental, restores (sha256 equal), exports and imports, and deletes every object', async () => {
    const vol = await newVolume();
    await writeAt(volumeFile(vol), 0, randomBytes(9 * MIB));
    await writeAt(volumeFile(vol), 500 * MIB + 3, randomBytes(MIB));
    const original = await sha256File(volumeFile(vol));

    const full = await backup({ volume_id: vol, name: 'full' });
    expect(full).toMatchObject({
      status: 'available',
      object_count: 3,
      is_incremental: false,
      fail_reason: null,
    });
    expect(full.container).toBe(
      driver === 'posix' ? `${full.id.slice(0, 2)}/${full.id.slice(2, 4)}/${full.id}` : 'volumebackups',
    );
    const fullRecord = await record(full.id);
    expect(fullRecord.service).toBe(DRIVER_IDS[driver]);
    expect(fullRecord.doc.service_metadata).toMatch(
      driver === 'posix'
        ? new RegExp(`^volume_${vol}_\\d{14}_backup_${full.id}$`)
        : new RegExp(`^volume_${vol}/\\d{14}/az_nova_backup_${full.id}$`),
    );
    // The objects are in the driver's store, under Cinder's names.
    const prefix = fullRecord.doc.service_metadata as string;
    expect(await store.list(full.container, prefix)).toEqual([
      `${prefix}-00001`,
      `${prefix}-00002`,
      `${prefix}-00003`,
      `${prefix}_metadata`,
      `${prefix}_sha256file`,
    ]);

    await writeAt(volumeFile(vol), 500 * MIB + 100, randomBytes(1000));
    const changed = await sha256File(volumeFile(vol));
    const inc = await backup({ volume_id: vol, name: 'inc', incremental: true });
    expect(inc).toMatchObject({ status: 'available', object_count: 1, is_incremental: true });

    expect(await restoreNew(inc.id)).toBe(changed);
    expect(await restoreNew(full.id)).toBe(original);

    // Export, then import the record under a new id: the imported backup reads the same objects.
    const importedId = randomUUID();
    const url = Buffer.from(JSON.stringify({ ...fullRecord.doc, id: importedId }), 'utf8').toString('base64');
    const imp = await api.post('/backups/import_record', {
      'backup-record': { backup_service: fullRecord.service, backup_url: url },
    });
    expect(imp.status).toBe(201);
    expect(await waitBackup(importedId, ['available', 'error'])).toMatchObject({
      status: 'available',
      object_count: 3,
    });
    expect((await record(importedId)).service).toBe(DRIVER_IDS[driver]);
    expect(await restoreNew(importedId)).toBe(original);

    // A container of the caller's choosing (a bucket of its own on S3).
    const own = driver === 'posix' ? 'own/backups' : `own-backups-${randomBytes(3).toString('hex')}`;
    const mine = await backup({ volume_id: vol, name: 'own', container: own });
    expect(mine).toMatchObject({ status: 'available', container: own });
    const minePrefix = (await record(mine.id)).doc.service_metadata as string;
    expect((await store.list(own, minePrefix)).length).toBe(mine.object_count + 2);

    for (const id of [inc.id, importedId, mine.id]) {
      expect((await api.delete(`/backups/${id}`)).status).toBe(202);
      await waitBackup(id, ['deleted']);
    }
    // The imported backup shared the full backup's objects: they go with it (as in Cinder).
    expect(await store.list(full.container, prefix)).toEqual([]);
    expect((await api.delete(`/backups/${full.id}`)).status).toBe(202);
    await waitBackup(full.id, ['deleted']);
    expect(await store.list(full.container, `volume_${vol}`)).toEqual([]);
    expect(await store.list(own, `volume_${vol}`)).toEqual([]);
  }, 300000);

  it('ends a backup in error with the reason when its container cannot exist on the driver', async () => {
    const vol = await newVolume();
    await writeAt(volumeFile(vol), 0, randomBytes(MIB));
    const bad = driver === 'posix' ? '../outside' : driver === 'swift' ? 'a/b' : 'Not_A_Bucket';
    const b = await backup({ volume_id: vol, container: bad });
    expect(b).toMatchObject({
      status: 'error',
      fail_reason: expect.stringMatching(/^Backup failed: Invalid backup: container /),
    });
    expect((await api.waitFor('volumes', vol, ['available'])).status).toBe('available');
    expect((await api.delete(`/backups/${b.id}`)).status).toBe(202);
    await waitBackup(b.id, ['deleted']);
  }, 120000);

  if (driver !== 'posix')
    it('ends a backup in error, never stuck in creating, when the object store does not answer', async () => {
      const closed = await freePort();
      const down = await startBlockStorage('embedded', {
        ...env,
        BACKUP_SWIFT_AUTH_URL: `http://127.0.0.1:${closed}/auth/v1.0`,
        BACKUP_SWIFT_RETRY_BACKOFF: '0.05',
        BACKUP_S3_ENDPOINT_URL: `http://127.0.0.1:${closed}`,
        BACKUP_S3_RETRY_MAX_ATTEMPTS: '1',
      });
      try {
        const c = new Client(down.base, admin);
        const v = await c.post('/volumes', { volume: { size: 1 } });
        await c.waitFor('volumes', v.body.volume.id, ['available']);
        const r = await c.post('/backups', { backup: { volume_id: v.body.volume.id } });
        expect(r.status).toBe(202);
        const until = Date.now() + 60000;
        let view: any;
        do {
          view = (await c.get(`/backups/${r.body.backup.id}`)).body.backup;
          if (view.status !== 'creating') break;
          await new Promise((res) => setTimeout(res, 100));
        } while (Date.now() < until);
        expect(view.status).toBe('error');
        expect(view.fail_reason).toMatch(
          new RegExp(`^Backup failed: .*127\\.0\\.0\\.1:${closed}.*ECONNREFUSED`),
        );
        expect((await c.waitFor('volumes', v.body.volume.id, ['available'])).status).toBe('available');
      } finally {
        await down.close();
      }
    }, 120000);
});
