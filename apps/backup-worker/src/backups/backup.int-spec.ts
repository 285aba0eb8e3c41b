import 'reflect-metadata';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import {
  backupQuotaDeltas,
  dataObjectName,
  hashFileDocument,
  hashFileObjectName,
  manifestDocument,
  manifestObjectName,
  parseManifestObjects,
  type BackupCodec,
  type ManifestObject,
} from '@osc/block-storage-domain';
import { QuotaRepository } from '@osc/block-storage-persistence';
import { createRuntime, type RunningApp, type Runtime } from '@osc/platform';
import { loadConfig, SCHEMA_PARTS, startBackupWorker } from '../index';
import { createSparseFile } from '../volume-backend/sparse-file';
import { BackupCancelledError, type BackupLocation } from './backup-engine';
import { restoreBackup, type RestoreCheck } from './backup-reader';
import { sameBlocksAs, writeBackup } from './backup-writer';
import { PosixBackupStore } from './stores';
import { ChunkWorkers } from './chunk-workers';

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

const workers = new ChunkWorkers(2);
afterAll(() => workers.close());
const going = async (): Promise<boolean> => true;

/** Bytes the file really holds on disk (holes hold none). */
const allocated = async (file: string): Promise<number> => {
  const fh = await open(file, 'r');
  try {
    return (await fh.stat()).blocks * 512;
  } finally {
    await fh.close();
  }
};

describe('backup engine (posix store)', () => {
  let dir: string;
  let store: PosixBackupStore;
  const params = { chunkSize: 1 * MIB, blockSize: 32 * 1024 };
  const description = (id: string, parentId: string | null = null) => ({
    backupId: id,
    volumeId: 'v',
    name: null,
    description: null,
    createdAt: 'now',
    parentId,
  });

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-bk-engine-'));
    store = new PosixBackupStore(path.join(dir, 'store'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const backup = (
    source: string,
    location: BackupLocation,
    parent: BackupLocation | null,
    progress: (done: number, total: number) => Promise<boolean> = going,
    codec: BackupCodec = 'zlib',
  ) =>
    writeBackup({
      store,
      workers,
      params,
      codec,
      depth: 3,
      source,
      bytes: 8 * MIB,
      location,
      description: description(location.prefix),
      volumeMeta: '{}',
      parent,
      progress,
    });
  const restore = (
    chain: BackupLocation[],
    target: string,
    newVolume: boolean,
    progress: (done: number, total: number) => Promise<boolean> = going,
    check?: RestoreCheck,
    warn?: (message: string) => void,
  ) =>
    restoreBackup({
      store,
      workers,
      depth: 3,
      chain,
      target,
      bytes: 8 * MIB,
      newVolume,
      progress,
      reportEvery: MIB,
      check,
      warn,
    });
  const manifest = async (loc: BackupLocation): Promise<ManifestObject[]> =>
    parseManifestObjects((await store.read(loc.container, manifestObjectName(loc.prefix))).toString('utf8'));

  it('restores full and incremental chains byte for byte; incrementals store only changed ranges', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 100, randomBytes(3 * MIB));
    const v1 = await sha(vol);
    const full = { container: 'c/full', prefix: 'full' };
    expect(await backup(vol, full, null)).toEqual({ objectCount: 4 });
    await writeAt(vol, 6 * MIB + 5, Buffer.from('changed'));
    const v2 = await sha(vol);
    const inc = { container: 'c/inc', prefix: 'inc' };
    expect(await backup(vol, inc, full)).toEqual({ objectCount: 1 });
    expect((await readdir(path.join(dir, 'store', 'c', 'inc'))).sort()).toEqual([
      'inc-00001',
      'inc_metadata',
      'inc_sha256file',
    ]);

    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    await restore([full, inc], target, true);
    expect(await sha(target)).toBe(v2);
    // Over an existing volume with other bytes: ranges the full backup did not store become zeros.
    await writeAt(target, 7 * MIB, randomBytes(MIB));
    await restore([full], target, false);
    expect(await sha(target)).toBe(v1);
  });

  it('drops an incremental that changed nothing when asked (skip_unchanged), and only then', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 2 * MIB, randomBytes(MIB));
    const full = { container: 'c', prefix: 'full' };
    expect(await backup(vol, full, null)).toEqual({ objectCount: 1 });
    const drop = (location: BackupLocation) =>
      writeBackup({
        store,
        workers,
        params,
        codec: 'zlib',
        depth: 3,
        source: vol,
        bytes: 8 * MIB,
        location,
        description: description(location.prefix, 'full'),
        volumeMeta: '{}',
        parent: full,
        progress: going,
        dropUnchanged: true,
      });
    // Nothing changed: nothing is stored, not even the hash file and manifest.
    expect(await drop({ container: 'c', prefix: 'same' })).toEqual({ objectCount: 0, unchanged: true });
    expect((await readdir(path.join(dir, 'store', 'c'))).filter((n) => n.startsWith('same'))).toEqual([]);
    // Without the flag the same empty incremental is kept (a user's backup is never dropped).
    expect(await backup(vol, { container: 'c', prefix: 'kept' }, full)).toEqual({ objectCount: 0 });
    expect((await readdir(path.join(dir, 'store', 'c'))).filter((n) => n.startsWith('kept')).sort()).toEqual([
      'kept_metadata',
      'kept_sha256file',
    ]);
    // A full backup is compared before anything is written: the same blocks, or not.
    const same = () => sameBlocksAs({ store, workers, params, source: vol, bytes: 8 * MIB, base: full });
    expect(await same()).toBe(true);
    // One changed byte: the incremental is written even with the flag.
    await writeAt(vol, 7 * MIB + 3, Buffer.from('y'));
    expect(await same()).toBe(false);
    expect(await drop({ container: 'c', prefix: 'changed' })).toEqual({ objectCount: 1 });
    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    await restore([full, { container: 'c', prefix: 'changed' }], target, true);
    expect(await sha(target)).toBe(await sha(vol));
  });

  it('never stores zero blocks, and restores with holes where the volume had zeros', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    // One chunk holding data, 256 KiB of zeros, data; another chunk with a single dirty block.
    await writeAt(vol, 0, randomBytes(128 * 1024));
    await writeAt(vol, 384 * 1024, randomBytes(64 * 1024));
    await writeAt(vol, 5 * MIB + 40 * 1024, Buffer.from('x'));
    const loc = { container: 'c', prefix: 'z' };
    const reports: [number, number][] = [];
    const progress = async (done: number, total: number): Promise<boolean> => {
      reports.push([done, total]);
      return true;
    };
    expect(await backup(vol, loc, null, progress)).toEqual({ objectCount: 3 });
    expect((await manifest(loc)).map((x) => [x.offset, x.length])).toEqual([
      [0, 128 * 1024],
      [384 * 1024, 64 * 1024],
      [5 * MIB + 32 * 1024, 32 * 1024],
    ]);
    // One report as the work starts, then one per chunk, in order, ending at the whole volume.
    expect(reports).toEqual([[0, 8 * MIB], ...Array.from({ length: 8 }, (_, i) => [(i + 1) * MIB, 8 * MIB])]);

    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    await restore([loc], target, true);
    expect(await sha(target)).toBe(await sha(vol));
    expect(await allocated(target)).toBeLessThanOrEqual(512 * 1024);
    // Over an existing volume full of other bytes: its old blocks are dropped, zeros become holes.
    await writeAt(target, 0, randomBytes(8 * MIB));
    await restore([loc], target, false);
    expect(await sha(target)).toBe(await sha(vol));
    expect(await allocated(target)).toBeLessThanOrEqual(512 * 1024);
  });

  it('backs up with zstd and restores it, full and incremental', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 0, Buffer.alloc(2 * MIB, 'compressible text '));
    await writeAt(vol, 4 * MIB, randomBytes(MIB));
    const full = { container: 'c/zf', prefix: 'zf' };
    await backup(vol, full, null, going, 'zstd');
    const codecs = (await manifest(full)).map((x) => x.compression);
    // Text shrinks (zstd); random bytes do not and are stored raw (BS-11.4).
    expect(new Set(codecs)).toEqual(new Set(['zstd', 'none']));
    await writeAt(vol, 4 * MIB, Buffer.alloc(64 * 1024));
    await writeAt(vol, 7 * MIB, Buffer.alloc(64 * 1024, 'more text '));
    const inc = { container: 'c/zi', prefix: 'zi' };
    await backup(vol, inc, full, going, 'zstd');
    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    await restore([full, inc], target, true);
    expect(await sha(target)).toBe(await sha(vol));
  });

  it.each(['zstd', 'zlib'] as const)(
    'stores %s pieces over 1 MiB raw when a sample of them does not shrink, compressed when it does',
    async (codec) => {
      const vol = path.join(dir, 'vol');
      await createSparseFile(vol, 16 * MIB);
      await writeAt(vol, 0, randomBytes(4 * MIB));
      await writeAt(vol, 4 * MIB, Buffer.alloc(4 * MIB, 'compressible text '));
      await writeAt(vol, 8 * MIB, Buffer.alloc(2 * MIB, 'half text '));
      await writeAt(vol, 10 * MIB, randomBytes(2 * MIB));
      const loc = { container: 'c/probe', prefix: 'probe' };
      await writeBackup({
        store,
        workers,
        params: { chunkSize: 4 * MIB, blockSize: 32 * 1024 },
        codec,
        depth: 2,
        source: vol,
        bytes: 16 * MIB,
        location: loc,
        description: description(loc.prefix),
        volumeMeta: '{}',
        parent: null,
        progress: going,
      });
      const objects = await manifest(loc);
      // The last chunk is zeros: no object (BS-11.9).
      expect(objects.map((x) => [x.offset / MIB, x.length / MIB, x.compression])).toEqual([
        [0, 4, 'none'],
        [4, 4, codec],
        [8, 4, codec],
      ]);
      const raw = await store.read(loc.container, (objects[0] as ManifestObject).name);
      expect(raw.length).toBe(4 * MIB);
      expect(createHash('md5').update(raw).digest('hex')).toBe((objects[0] as ManifestObject).md5);
      const target = path.join(dir, 'target');
      await createSparseFile(target, 16 * MIB);
      await restoreBackup({
        store,
        workers,
        depth: 1,
        chain: [loc],
        target,
        bytes: 16 * MIB,
        newVolume: true,
        progress: going,
        reportEvery: MIB,
      });
      expect(await sha(target)).toBe(await sha(vol));
    },
  );

  it('reports restore progress up to the whole and stops when told to', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 0, randomBytes(6 * MIB));
    const loc = { container: 'c', prefix: 'rp' };
    await backup(vol, loc, null);
    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    const reports: number[] = [];
    await restore([loc], target, true, async (done, total) => {
      reports.push(done / total);
      return true;
    });
    expect(reports[reports.length - 1]).toBe(1);
    expect([...reports].sort((a, b) => a - b)).toEqual(reports);
    await expect(restore([loc], target, true, async () => false)).rejects.toBeInstanceOf(
      BackupCancelledError,
    );
  });

  it('restores a backup written by the earlier writer: whole chunks with their zeros, zlib', async () => {
    // The writer before the pipeline stored each chunk that was not all zeros whole (zero blocks
    // inside it included), deflated. Such a backup is built here object by object.
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 10, randomBytes(100 * 1024));
    await writeAt(vol, 3 * MIB - 5, randomBytes(10));
    const bytes = await readFile(vol);
    const loc = { container: 'c/old', prefix: 'old' };
    await store.ensureContainer(loc.container);
    const objects: ManifestObject[] = [];
    const hashes: string[] = [];
    for (let off = 0; off < bytes.length; off += MIB) {
      const chunk = bytes.subarray(off, off + MIB);
      for (let b = 0; b < chunk.length; b += 32 * 1024)
        hashes.push(
          createHash('sha256')
            .update(chunk.subarray(b, b + 32 * 1024))
            .digest('hex'),
        );
      if (chunk.equals(Buffer.alloc(MIB))) continue;
      const name = dataObjectName(loc.prefix, objects.length + 1);
      await store.write(loc.container, name, deflateSync(chunk, { level: 1 }));
      objects.push({
        name,
        offset: off,
        length: MIB,
        compression: 'zlib',
        md5: createHash('md5').update(chunk).digest('hex'),
      });
    }
    const desc = description('old');
    await store.write(
      loc.container,
      hashFileObjectName(loc.prefix),
      Buffer.from(hashFileDocument(desc, 32 * 1024, hashes)),
    );
    await store.write(
      loc.container,
      manifestObjectName(loc.prefix),
      Buffer.from(manifestDocument(desc, objects, '{}')),
    );
    expect(objects.map((x) => x.offset)).toEqual([0, 2 * MIB, 3 * MIB]);

    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    await restore([loc], target, true);
    expect(await sha(target)).toBe(await sha(vol));
    // The zeros inside the stored chunks were not written either.
    expect(await allocated(target)).toBeLessThanOrEqual(256 * 1024);
    // And an incremental of today's writer on top of it.
    await writeAt(vol, 6 * MIB, randomBytes(1000));
    const inc = { container: 'c/oldinc', prefix: 'oldinc' };
    await backup(vol, inc, loc);
    await restore([loc, inc], target, false);
    expect(await sha(target)).toBe(await sha(vol));
  });

  it('shares chunk memory with the workers: nothing is transferred away from the caller or copied', async () => {
    // A transferred ArrayBuffer came back as a new one each time, and V8 counted every one as fresh
    // external memory: a 4 GiB restore ran ~50 full collections (chunk-workers.ts).
    const bytes = randomBytes(256 * 1024);
    const stored = new SharedArrayBuffer(bytes.length);
    new Uint8Array(stored).set(bytes);
    const md5 = createHash('md5').update(bytes).digest('hex');
    const r = await workers.unpack(stored, bytes.length, 'none', bytes.length, { md5 }, 32 * 1024);
    if (r.corrupt) throw new Error('reported corrupt');
    // still the caller's, and the raw object's bytes are its very memory
    expect(stored.byteLength).toBe(bytes.length);
    new Uint8Array(r.bytes)[0] = (bytes[0]! + 1) % 256;
    expect(new Uint8Array(stored)[0]).toBe((bytes[0]! + 1) % 256);
    const chunk = new SharedArrayBuffer(64 * 1024);
    const zeroHash = createHash('sha256')
      .update(Buffer.alloc(32 * 1024))
      .digest('hex');
    const h = await workers.hash(chunk, chunk.byteLength, 32 * 1024, zeroHash);
    expect(chunk.byteLength).toBe(64 * 1024);
    expect(h.hashes).toEqual([zeroHash, zeroHash]);
    new Uint8Array(h.buf)[1] = 7;
    expect(new Uint8Array(chunk)[1]).toBe(7);
  });

  it('refuses a corrupt object and a manifest that does not match the stored objects', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 0, randomBytes(MIB));
    const loc = { container: 'c', prefix: 'b' };
    await backup(vol, loc, null);
    const target = path.join(dir, 'target');
    await createSparseFile(target, 8 * MIB);
    await writeFile(path.join(dir, 'store', 'c', 'b-00001'), Buffer.alloc(10));
    await expect(restore([loc], target, true)).rejects.toThrow(/corrupt|incorrect|invalid|header/i);
    await writeFile(path.join(dir, 'store', 'c', 'b-00009'), Buffer.alloc(10));
    await expect(restore([loc], target, true)).rejects.toThrow(/do not match its manifest/);
  });

  it("checks restored objects by their blocks' SHA-256 or by MD5; a hash file that disagrees yields to MD5", async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 0, randomBytes(2 * MIB));
    await writeAt(vol, 5 * MIB + 32 * 1024, randomBytes(100_000));
    const loc = { container: 'c', prefix: 'b' };
    // raw objects: a flipped byte keeps the length, only a checksum can see it
    await backup(vol, loc, null, going, 'none');
    const target = path.join(dir, 'target');
    const warnings: string[] = [];
    const restoreWith = async (check: RestoreCheck): Promise<void> => {
      await createSparseFile(target, 8 * MIB);
      await restore([loc], target, true, going, check, (m) => warnings.push(m));
    };
    for (const check of ['sha256', 'md5'] as const) {
      await restoreWith(check);
      expect(await sha(target)).toBe(await sha(vol));
    }
    expect(warnings).toEqual([]);

    const objects = await manifest(loc);
    expect(objects.map((x) => [x.offset, x.length])).toEqual([
      [0, MIB],
      [MIB, MIB],
      [5 * MIB + 32 * 1024, 4 * 32 * 1024],
    ]);
    const last = path.join(dir, 'store', 'c', objects[2]!.name);
    const good = await readFile(last);
    const flipped = Buffer.from(good);
    flipped[70_000] = (flipped[70_000]! + 1) % 256;
    await writeFile(last, flipped);
    for (const check of ['sha256', 'md5'] as const)
      await expect(restoreWith(check)).rejects.toThrow(
        `object ${objects[2]!.name} is corrupt (checksum mismatch)`,
      );
    await writeFile(last, good);

    // A digest of the hash file that is wrong: the SHA-256 check sees it, MD5 vouches for the object.
    const hashFile = path.join(dir, 'store', 'c', hashFileObjectName('b'));
    const doc = JSON.parse(await readFile(hashFile, 'utf8')) as { sha256s: string[] };
    doc.sha256s[32] = 'ab'.repeat(32);
    await writeFile(hashFile, JSON.stringify(doc));
    await restoreWith('md5');
    expect(warnings).toEqual([]);
    await restoreWith('sha256');
    expect(await sha(target)).toBe(await sha(vol));
    expect(warnings).toEqual([
      expect.stringMatching(/^The hash file of backup b does not match 1 of its objects/),
    ]);

    // No hash file: MD5 checks everything, and says so.
    warnings.length = 0;
    await writeFile(hashFile, '{"chunk_size": 32768}');
    await restoreWith('sha256');
    expect(warnings).toEqual([expect.stringMatching(/hash file of backup b is not one the restore can use/)]);
    expect(await sha(target)).toBe(await sha(vol));
  });

  it('removes what it wrote when the backup is cancelled, and refuses containers outside the store', async () => {
    const vol = path.join(dir, 'vol');
    await createSparseFile(vol, 8 * MIB);
    await writeAt(vol, 0, randomBytes(8 * MIB));
    let checks = 0;
    await expect(
      backup(vol, { container: 'x', prefix: 'p' }, null, async () => ++checks <= 3),
    ).rejects.toBeInstanceOf(BackupCancelledError);
    expect(await store.list('x', 'p')).toEqual([]);
    expect(() => store.containerDir('../escape')).toThrow(/inside the backup store/);
  });
});

/** BS-8.3.6 on the embedded engine: a restarted worker leaves nothing stuck in a transitional state. */
describe('backup worker restart recovery', () => {
  let runtime: Runtime;
  let worker: RunningApp | null = null;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-bk-recover-'));
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, SCHEMA_PARTS);
  }, 60000);
  afterAll(async () => {
    await worker?.close();
    await runtime?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const db = () => runtime.dataSource;
  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 20000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not reached');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const volume = async (status: string): Promise<string> => {
    const id = randomUUID();
    await db().query(
      `INSERT INTO volumes (id, project_id, size, status, volume_type_id, host, created_at) VALUES ($1, 'p', 1, $2, $3, 'rh@file#file', now())`,
      [id, status, TYPE],
    );
    return id;
  };
  const backupRow = async (
    status: string,
    volumeId: string,
    extra: { restoreVolumeId?: string } = {},
  ): Promise<string> => {
    const id = randomUUID();
    await db().query(
      `INSERT INTO backups (id, project_id, volume_id, status, size, host, volume_previous_status, restore_volume_id, data_timestamp, created_at)
       VALUES ($1, 'p', $2, $3, 1, 'rh@file', 'available', $4, now(), now())`,
      [id, volumeId, status, extra.restoreVolumeId ?? null],
    );
    return id;
  };
  const row = async (table: string, id: string): Promise<Record<string, unknown>> =>
    (await db().query(`SELECT * FROM ${table} WHERE id = $1`, [id]))[0];
  const TYPE = randomUUID();

  it('fails interrupted backups, ends interrupted restores, resumes deletes, and settles quota once', async () => {
    await db().query(`INSERT INTO volume_types (id, name, created_at) VALUES ($1, 'recover-type', now())`, [
      TYPE,
    ]);
    const quotas = new QuotaRepository();
    const source = await volume('backing-up');
    const creating = await backupRow('creating', source);
    await quotas.reserve(db(), {
      id: creating,
      projectId: 'p',
      volumeId: creating,
      operation: 'backup',
      newSize: null,
      deltas: backupQuotaDeltas(1),
      now: new Date(),
    });
    const target = await volume('restoring-backup');
    const restoring = await backupRow('restoring', await volume('available'), { restoreVolumeId: target });
    const deleting = await backupRow('deleting', source);
    await quotas.apply(db(), 'p', [...backupQuotaDeltas(1), ...backupQuotaDeltas(1)], 'in_use');

    // A volume being created from a backup when the back end stopped: the restart restores it again.
    const bytesFile = path.join(dir, 'bytes');
    await createSparseFile(bytesFile, 1024 * MIB);
    await writeAt(bytesFile, 3 * MIB, randomBytes(MIB));
    const backupStore = new PosixBackupStore(path.join(dir, 'backups'));
    const from = await backupRow('available', source);
    await writeBackup({
      store: backupStore,
      workers,
      depth: 2,
      params: { chunkSize: 4 * MIB, blockSize: 32 * 1024 },
      codec: 'zlib',
      source: bytesFile,
      bytes: 1024 * MIB,
      location: { container: 'c', prefix: 'from' },
      description: {
        backupId: from,
        volumeId: source,
        name: null,
        description: null,
        createdAt: 'now',
        parentId: null,
      },
      volumeMeta: '{}',
      parent: null,
      progress: going,
    });
    await db().query(`UPDATE backups SET container = 'c', service_metadata = 'from' WHERE id = $1`, [from]);
    const restoring2 = await volume('creating');
    await db().query(`UPDATE volumes SET admin_metadata = $1::jsonb WHERE id = $2`, [
      JSON.stringify({ restore_source_backup_id: from }),
      restoring2,
    ]);

    worker = await startBackupWorker(
      loadConfig({
        VOLUME_BACKEND_DIR: path.join(dir, 'volumes'),
        BACKUP_STORE_DIR: path.join(dir, 'backups'),
        VOLUME_BACKEND_HOST: 'rh',
        LOG_LEVEL: 'error',
      }),
      runtime,
      { http: false },
    );

    expect(await row('backups', creating)).toMatchObject({
      status: 'error',
      fail_reason: expect.stringMatching(/interrupted by a restart/),
    });
    expect((await row('volumes', source))['status']).toBe('available');
    expect((await row('backups', restoring))['status']).toBe('available');
    expect((await row('volumes', target))['status']).toBe('error_restoring');
    await until(async () => (await row('backups', deleting))['deleted'] === true);
    // 2 counted before + 1 reserved (committed: the failed backup counts until deleted) - 1 deleted.
    const usages = await quotas.usages(db(), 'p');
    expect([usages['backups'], usages['backup_gigabytes']]).toEqual([
      { inUse: 2, reserved: 0 },
      { inUse: 2, reserved: 0 },
    ]);
    expect(await quotas.reservationsOf(db(), creating)).toEqual([]);
    await until(async () => (await row('volumes', restoring2))['status'] === 'available');
    expect(await sha(path.join(dir, 'volumes', `volume-${restoring2}`))).toBe(await sha(bytesFile));
  });
});
