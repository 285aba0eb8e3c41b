import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PosixBackupStore } from './posix-store';

describe('PosixBackupStore reads and writes around the page cache', () => {
  const dirs: string[] = [];
  const storeIn = (parent: string): PosixBackupStore => {
    const dir = mkdtempSync(path.join(parent, 'osc-posix-store-'));
    dirs.push(dir);
    return new PosixBackupStore(dir);
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each([
    ['a disk filesystem', os.tmpdir()],
    ['tmpfs', '/dev/shm'],
  ])(
    'on %s: objects of any length come back whole, in the given memory when it has room',
    async (_, parent) => {
      if (!existsSync(parent)) return;
      const store = storeIn(parent);
      await store.ensureContainer('c');
      const objects = [100_000, 3 * 1024 * 1024, 8192].map((n, i) => ({
        name: `o${i}`,
        bytes: randomBytes(n),
      }));
      for (const o of objects) await store.write('c', o.name, o.bytes);
      const into = new SharedArrayBuffer(3 * 1024 * 1024 + 8192);
      for (const o of objects) {
        const back = await store.read('c', o.name, into);
        expect(back.equals(o.bytes)).toBe(true);
        expect(back.buffer).toBe(into);
      }
      // twice into the same memory (its offset remembered); too small: a buffer of its own
      expect((await store.read('c', 'o0', into)).equals(objects[0]!.bytes)).toBe(true);
      const small = new SharedArrayBuffer(50_000);
      const own = await store.read('c', 'o0', small);
      expect(own.equals(objects[0]!.bytes)).toBe(true);
      expect(own.buffer).not.toBe(small);
      expect((await store.read('c', 'o1')).equals(objects[1]!.bytes)).toBe(true);
    },
  );
});
