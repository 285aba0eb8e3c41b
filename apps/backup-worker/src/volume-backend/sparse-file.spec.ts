import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createSparseFile, filesystemCapacity, growFile, removeFile, sparseCopy } from './sparse-file';

const MIB = 1024 * 1024;

describe('sparse volume files', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-sparse-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates sparse files that allocate nothing', async () => {
    const f = path.join(dir, 'v');
    await createSparseFile(f, 64 * MIB);
    const st = await stat(f);
    expect(st.size).toBe(64 * MIB);
    expect(st.blocks * 512).toBeLessThan(MIB);
  });

  it('copies bytes exactly, keeps holes and grows the copy', async () => {
    const src = path.join(dir, 'src');
    await createSparseFile(src, 16 * MIB);
    const fh = await open(src, 'r+');
    const data = Buffer.from(Array.from({ length: MIB + 123 }, (_, i) => (i * 7 + 3) % 256));
    await fh.write(data, 0, data.length, 3 * MIB + 5);
    await fh.write(Buffer.from('end'), 0, 3, 16 * MIB - 3);
    await fh.close();
    const dst = path.join(dir, 'dst');
    await sparseCopy(src, dst, 32 * MIB);
    const [a, b] = await Promise.all([readFile(src), readFile(dst)]);
    expect(b.length).toBe(32 * MIB);
    expect(
      createHash('sha256')
        .update(b.subarray(0, 16 * MIB))
        .digest('hex'),
    ).toBe(createHash('sha256').update(a).digest('hex'));
    expect(b.subarray(16 * MIB).every((x) => x === 0)).toBe(true);
    expect((await stat(dst)).blocks * 512).toBeLessThan(4 * MIB);
  });

  it('grows but never shrinks, removes idempotently and reports capacity', async () => {
    const f = path.join(dir, 'g');
    await createSparseFile(f, 2 * MIB);
    await growFile(f, 4 * MIB);
    expect((await stat(f)).size).toBe(4 * MIB);
    await growFile(f, MIB);
    expect((await stat(f)).size).toBe(4 * MIB);
    await removeFile(f);
    await removeFile(f);
    await expect(stat(f)).rejects.toThrow(/ENOENT/);
    const cap = await filesystemCapacity(dir);
    expect(cap.totalGb).toBeGreaterThan(0);
    expect(cap.freeGb).toBeLessThanOrEqual(cap.totalGb);
  });

  it('fails clearly when the source is missing', async () => {
    await expect(sparseCopy(path.join(dir, 'missing'), path.join(dir, 'x'), MIB)).rejects.toThrow(/ENOENT/);
  });
});
