import { mkdir, open, readdir, readFile, rename, rm, rmdir } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError } from '@osc/errors';

/**
 * The posix backup driver's object store (BS-11.1): a container is a directory under the backup
 * root, an object a file in it. Writes go to a temporary name, are flushed, then renamed, so an
 * object either exists whole or not at all.
 */
export class PosixBackupStore {
  constructor(readonly root: string) {}

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

  async ensureContainer(container: string): Promise<void> {
    await mkdir(this.containerDir(container), { recursive: true });
  }

  async write(container: string, name: string, data: Buffer): Promise<void> {
    const file = path.join(this.containerDir(container), name);
    const tmp = `${file}.part`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.write(data, 0, data.length, 0);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
  }

  read(container: string, name: string): Promise<Buffer> {
    return readFile(path.join(this.containerDir(container), name));
  }

  async exists(container: string, name: string): Promise<boolean> {
    try {
      await (await open(path.join(this.containerDir(container), name), 'r')).close();
      return true;
    } catch {
      return false;
    }
  }

  /** Object names starting with `prefix` (finished objects only). */
  async list(container: string, prefix: string): Promise<string[]> {
    try {
      return (await readdir(this.containerDir(container)))
        .filter((n) => n.startsWith(prefix) && !n.endsWith('.part'))
        .sort();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** Removes every object (and leftover part) with the prefix, then the container if it is empty (BS-11.8). */
  async deletePrefix(container: string, prefix: string): Promise<void> {
    const dir = this.containerDir(container);
    let names: string[] = [];
    try {
      names = (await readdir(dir)).filter((n) => n.startsWith(prefix));
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
}
