import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DirectStaging, VolumeWriter } from './volume-writer';

const MIB = 1024 * 1024;

describe('VolumeWriter', () => {
  const dirs: string[] = [];
  /** A sparse file of `bytes` bytes (all holes), as a new volume is. */
  const sparseIn = (parent: string, bytes: number): string => {
    const dir = mkdtempSync(path.join(parent, 'osc-volume-writer-'));
    dirs.push(dir);
    const file = path.join(dir, 'volume');
    writeFileSync(file, Buffer.alloc(0));
    truncateSync(file, bytes);
    return file;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('writes around the page cache on a disk filesystem, concurrently, leaving what it did not write as holes', async () => {
    const file = sparseIn(os.tmpdir(), 64 * MIB);
    const writer = await VolumeWriter.open(file, 3);
    const pieces = Array.from({ length: 6 }, (_, i) => ({ at: i * 8 * MIB, bytes: randomBytes(5 * MIB) }));
    try {
      if (process.platform === 'linux') expect(writer.isDirect).toBe(true);
      // from an offset of the source, as the restore writes from a decompressed object's middle
      await Promise.all(
        pieces.map((p) =>
          writer.write(Buffer.concat([Buffer.alloc(100), p.bytes]), 100, p.bytes.length, p.at),
        ),
      );
      await writer.handle.sync();
      expect(writer.isDirect).toBe(process.platform === 'linux');
    } finally {
      await writer.close();
    }
    const back = readFileSync(file);
    expect(back.length).toBe(64 * MIB);
    for (const p of pieces) {
      expect(back.subarray(p.at, p.at + p.bytes.length).equals(p.bytes)).toBe(true);
      expect(back.subarray(p.at + p.bytes.length, p.at + 8 * MIB).equals(Buffer.alloc(3 * MIB))).toBe(true);
    }
    // 30 MiB written of 64: the rest stayed holes
    expect(statSync(file).blocks * 512).toBeLessThan(40 * MIB);
  });

  it('writes what is not in whole pages the ordinary way, and direct writes go on after it', async () => {
    const file = sparseIn(os.tmpdir(), 4 * MIB);
    const writer = await VolumeWriter.open(file);
    const odd = randomBytes(1000);
    const whole = randomBytes(MIB);
    try {
      await writer.write(odd, 0, odd.length, 12_345);
      await writer.write(whole, 0, whole.length, 2 * MIB);
      expect(writer.isDirect).toBe(process.platform === 'linux');
    } finally {
      await writer.close();
    }
    const back = readFileSync(file);
    expect(back.subarray(12_345, 13_345).equals(odd)).toBe(true);
    expect(back.subarray(2 * MIB, 3 * MIB).equals(whole)).toBe(true);
  });

  it('creates files through one shared staging, their whole pages direct and the tail the ordinary way', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'osc-volume-writer-'));
    dirs.push(dir);
    const staging = new DirectStaging(2, 50);
    const objects = Array.from({ length: 4 }, (_, i) => ({
      file: path.join(dir, `object-${i}`),
      bytes: randomBytes(3 * MIB + 1000 * i),
    }));
    await Promise.all(
      objects.map(async (o) => {
        const writer = await VolumeWriter.open(o.file, staging, 'w');
        try {
          await writer.write(o.bytes, 0, o.bytes.length, 0);
          if (process.platform === 'linux') expect(writer.isDirect).toBe(true);
          await writer.handle.sync();
        } finally {
          await writer.close();
        }
      }),
    );
    for (const o of objects) expect(readFileSync(o.file).equals(o.bytes)).toBe(true);
    // the staging memory is let go when idle and allocated again for the next write
    await new Promise((r) => setTimeout(r, 100));
    const again = { file: path.join(dir, 'again'), bytes: randomBytes(MIB) };
    const writer = await VolumeWriter.open(again.file, staging, 'w');
    try {
      await writer.write(again.bytes, 0, again.bytes.length, 0);
    } finally {
      await writer.close();
    }
    expect(readFileSync(again.file).equals(again.bytes)).toBe(true);
  });

  it('writes a file in memory (tmpfs), whether or not the kernel takes direct writes there', async () => {
    if (!existsSync('/dev/shm')) return;
    const file = sparseIn('/dev/shm', 2 * MIB);
    const bytes = randomBytes(MIB);
    const writer = await VolumeWriter.open(file);
    try {
      await writer.write(bytes, 0, bytes.length, MIB);
    } finally {
      await writer.close();
    }
    expect(readFileSync(file).subarray(MIB).equals(bytes)).toBe(true);
  });
});
