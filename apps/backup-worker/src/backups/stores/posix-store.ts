import { mkdir, open, readdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { types } from 'node:util';
import { BACKUP_DRIVER_IDS, defaultBackupContainer } from '@osc/block-storage-domain';
import { InvalidInputError } from '@osc/errors';
import { VolumeReader, directReadRoom, wholePages } from '../volume-reader';
import { DirectStaging, VolumeWriter } from '../volume-writer';
import type { BackupStore } from './backup-store';

/**
 * The posix backup driver's object store (BS-11.1): a container is a directory under the backup
 * root, an object a file in it. Writes go to a temporary name, are flushed, then renamed, so an
 * object either exists whole or not at all. Object names may hold `/` (an object store's prefix,
 * BS-11.3, in a backup imported from Swift or S3): they become subdirectories of the container.
 */
export class PosixBackupStore implements BackupStore {
  readonly kind = 'posix' as const;
  readonly driverId = BACKUP_DRIVER_IDS.posix;

  /**
   * Staging memory for objects written around the page cache (VolumeWriter), shared by the writes
   * of this store and let go a few seconds after the last.
   */
  private readonly staging = new DirectStaging(4, 5000);

  /** Offsets of read buffers direct reads were accepted at (see readDirect). */
  private readonly readOffsets = new WeakMap<SharedArrayBuffer, number>();

  constructor(readonly root: string) {}

  defaultContainer(backupId: string): string {
    return defaultBackupContainer('posix', backupId);
  }

  checkContainer(container: string): void {
    this.containerDir(container);
  }

  /** The container's directory; names that would leave the root are refused. */
  containerDir(container: string): string {
    const dir = path.resolve(this.root, container);
    if (
      container.length === 0 ||
      path.isAbsolute(container) ||
      !dir.startsWith(`${path.resolve(this.root)}${path.sep}`)
    ) {
      throw new InvalidInputError(
        `Invalid backup: container ${container.slice(0, 100)} is not a relative path inside the backup store.`,
      );
    }
    return dir;
  }

  /** The object's file; names that would leave the container are refused. */
  private objectFile(container: string, name: string): string {
    const dir = this.containerDir(container);
    const file = path.resolve(dir, name);
    if (name.length === 0 || path.isAbsolute(name) || !file.startsWith(`${dir}${path.sep}`))
      throw new InvalidInputError(`Invalid backup: object name ${name.slice(0, 100)} leaves its container.`);
    return file;
  }

  async ensureContainer(container: string): Promise<void> {
    await mkdir(this.containerDir(container), { recursive: true });
  }

  async write(container: string, name: string, data: Buffer): Promise<void> {
    const file = this.objectFile(container, name);
    if (name.includes('/')) await mkdir(path.dirname(file), { recursive: true });
    const tmp = `${file}.part`;
    // whole pages around the page cache where the filesystem allows, the last partial one through it
    const fh = await VolumeWriter.open(tmp, this.staging, 'w');
    try {
      await fh.write(data, 0, data.length, 0);
      await fh.handle.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  }

  /**
   * The object's bytes, read with as few calls as the kernel allows (readFile reads in 512 KiB
   * steps, each a thread-pool round trip), into `into` when they fit (objects are immutable once
   * renamed into place, so the size read first is the size).
   */
  async read(container: string, name: string, into?: ArrayBufferLike): Promise<Buffer> {
    const file = this.objectFile(container, name);
    const direct = into === undefined ? null : await this.readDirect(file, into);
    if (direct !== null) return direct;
    const fh = await open(file, 'r');
    try {
      const size = (await fh.stat()).size;
      const buf =
        into !== undefined && into.byteLength >= size
          ? Buffer.from(into, 0, size)
          : Buffer.from(new ArrayBuffer(size));
      let filled = 0;
      while (filled < size) {
        const { bytesRead } = await fh.read(buf, filled, size - filled, filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      return buf.subarray(0, filled);
    } finally {
      await fh.close();
    }
  }

  /**
   * The object's bytes read with `O_DIRECT` into `into` by a {@link VolumeReader} (which finds an
   * offset of the memory the kernel accepts; remembered here per buffer); null when the object
   * cannot be read so (a filesystem without `O_DIRECT`, memory smaller than {@link directReadRoom}):
   * the caller reads it the ordinary way. Through the page cache, a restore's object reads
   * cost the kernel a fresh page per 4 KiB (docs/issue-17-history.md, "Issue 17, stop 44").
   */
  private async readDirect(file: string, into: ArrayBufferLike): Promise<Buffer | null> {
    if (!types.isSharedArrayBuffer(into)) return null;
    const size = (await stat(file)).size;
    if (size === 0 || into.byteLength < directReadRoom(size)) return null;
    const reader = await VolumeReader.open(file);
    try {
      if (!reader.isDirect) return null;
      const mem = { buf: into, offset: this.readOffsets.get(into) ?? 0 };
      // whole pages: the part past the object's end reads as zeros
      await reader.read(mem, wholePages(size), 0);
      this.readOffsets.set(into, mem.offset);
      return Buffer.from(into, mem.offset, size);
    } finally {
      await reader.close();
    }
  }

  /** The directory holding the names with `prefix`, that directory's path relative to the container, and the file-name prefix. */
  private split(container: string, prefix: string): { dir: string; rel: string; base: string } {
    const cut = prefix.lastIndexOf('/');
    const rel = cut < 0 ? '' : prefix.slice(0, cut + 1);
    const dir =
      rel === '' ? this.containerDir(container) : path.dirname(this.objectFile(container, `${rel}x`));
    return { dir, rel, base: prefix.slice(cut + 1) };
  }

  /** Object names starting with `prefix` (finished objects only). */
  async list(container: string, prefix: string): Promise<string[]> {
    const { dir, rel, base } = this.split(container, prefix);
    try {
      return (await readdir(dir, { withFileTypes: true }))
        .filter((e) => e.isFile() && e.name.startsWith(base) && !e.name.endsWith('.part'))
        .map((e) => `${rel}${e.name}`)
        .sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** Removes every object (and leftover part) with the prefix, then the empty directories up to the root (BS-11.8). */
  async deletePrefix(container: string, prefix: string): Promise<void> {
    const { dir, base } = this.split(container, prefix);
    let names: string[] = [];
    try {
      names = (await readdir(dir, { withFileTypes: true }))
        .filter((e) => e.isFile() && e.name.startsWith(base))
        .map((e) => e.name);
    } catch {
      return;
    }
    for (const n of names) await rm(path.join(dir, n), { force: true });
    // Remove empty directories up to the root; a non-empty one stops the walk.
    let d = dir;
    const root = path.resolve(this.root);
    while (d.startsWith(`${root}${path.sep}`)) {
      try {
        await rmdir(d);
      } catch {
        break;
      }
      d = path.dirname(d);
    }
  }

  /** Nothing to release: files are closed after each operation. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
