import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { VolumeReader } from './volume-reader';

const MIB = 1024 * 1024;

describe('VolumeReader', () => {
  const dirs: string[] = [];
  const fileIn = (parent: string, bytes: Buffer): string => {
    const dir = mkdtempSync(path.join(parent, 'osc-volume-reader-'));
    dirs.push(dir);
    const file = path.join(dir, 'volume');
    writeFileSync(file, bytes);
    return file;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('reads around the page cache on a disk filesystem, into aligned memory, zeros past the end', async () => {
    const bytes = randomBytes(3 * MIB);
    const reader = await VolumeReader.open(fileIn(os.tmpdir(), bytes));
    try {
      // Linux on ext4, xfs or btrfs (this project's machines); elsewhere the reader falls back
      if (process.platform === 'linux') expect(reader.isDirect).toBe(true);
      const mem = await reader.allocate(2 * MIB);
      await reader.read(mem, 2 * MIB, 2 * MIB);
      expect(Buffer.from(mem.buf, mem.offset, MIB).equals(bytes.subarray(2 * MIB))).toBe(true);
      expect(Buffer.from(mem.buf, mem.offset + MIB, MIB).equals(Buffer.alloc(MIB))).toBe(true);
      const again = await reader.allocate(2 * MIB);
      await reader.read(again, MIB, 0);
      expect(Buffer.from(again.buf, again.offset, MIB).equals(bytes.subarray(0, MIB))).toBe(true);
      expect(reader.isDirect).toBe(process.platform === 'linux');
      // a read the kernel refuses directly (not whole blocks) is made the ordinary way
      await reader.read(again, 1000, 12_345);
      expect(Buffer.from(again.buf, again.offset, 1000).equals(bytes.subarray(12_345, 13_345))).toBe(true);
      expect(reader.isDirect).toBe(false);
      await reader.read(mem, MIB, 2 * MIB);
      expect(Buffer.from(mem.buf, mem.offset, MIB).equals(bytes.subarray(2 * MIB))).toBe(true);
    } finally {
      await reader.close();
    }
  });

  it('finds the memory offset again when the first probe fell on a hole', async () => {
    const data = randomBytes(MIB);
    const file = fileIn(os.tmpdir(), Buffer.alloc(0));
    const fh = await open(file, 'r+');
    await fh.truncate(4 * MIB);
    await fh.write(data, 0, data.length, 2 * MIB);
    await fh.close();
    const reader = await VolumeReader.open(file);
    try {
      const mem = await reader.allocate(2 * MIB);
      await reader.read(mem, 2 * MIB, 2 * MIB);
      expect(Buffer.from(mem.buf, mem.offset, MIB).equals(data)).toBe(true);
      expect(Buffer.from(mem.buf, mem.offset + MIB, MIB).equals(Buffer.alloc(MIB))).toBe(true);
      expect(reader.isDirect).toBe(process.platform === 'linux');
    } finally {
      await reader.close();
    }
  });

  it('reads a file in memory (tmpfs: direct reads from Linux 6.6, ordinary ones before)', async () => {
    if (!existsSync('/dev/shm')) return;
    const bytes = randomBytes(MIB);
    const reader = await VolumeReader.open(fileIn('/dev/shm', bytes));
    try {
      const mem = await reader.allocate(MIB);
      await reader.read(mem, MIB, 0);
      expect(Buffer.from(mem.buf, mem.offset, MIB).equals(bytes)).toBe(true);
    } finally {
      await reader.close();
    }
  });
});
