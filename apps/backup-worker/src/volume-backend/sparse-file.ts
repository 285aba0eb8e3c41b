import { open, rm, statfs, mkdir } from 'node:fs/promises';

export const GIB = 1024 * 1024 * 1024;
const BLOCK = 1024 * 1024;

/** Creates (or resets) a sparse file of `bytes`: no data blocks are allocated until written. */
export async function createSparseFile(file: string, bytes: number): Promise<void> {
  const fh = await open(file, 'w', 0o600);
  try {
    await fh.truncate(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Copies `src` into a new file of `bytes` (≥ the source length), writing only the non-zero 1 MiB
 * blocks so holes stay holes; the tail past the source stays a hole.
 */
export async function sparseCopy(src: string, dst: string, bytes: number): Promise<void> {
  const input = await open(src, 'r');
  const output = await open(dst, 'w', 0o600);
  try {
    const size = (await input.stat()).size;
    await output.truncate(Math.max(bytes, size));
    const buf = Buffer.allocUnsafe(BLOCK);
    const zero = Buffer.alloc(BLOCK);
    for (let pos = 0; pos < size; pos += BLOCK) {
      const { bytesRead } = await input.read(buf, 0, Math.min(BLOCK, size - pos), pos);
      if (bytesRead === 0) break;
      const chunk = buf.subarray(0, bytesRead);
      if (!chunk.equals(zero.subarray(0, bytesRead))) await output.write(chunk, 0, bytesRead, pos);
    }
    await output.sync();
  } finally {
    await input.close();
    await output.close();
  }
}

/** Grows a file to `bytes` (never shrinks). */
export async function growFile(file: string, bytes: number): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    if ((await fh.stat()).size < bytes) await fh.truncate(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export const removeFile = (file: string): Promise<void> => rm(file, { force: true });

export const ensureDir = async (dir: string): Promise<void> => {
  await mkdir(dir, { recursive: true });
};

/** Total and free GiB of the filesystem holding `dir` (what the pool reports, BS-10.1). */
export async function filesystemCapacity(dir: string): Promise<{ totalGb: number; freeGb: number }> {
  const s = await statfs(dir);
  const round = (n: number): number => Math.floor((n / GIB) * 100) / 100;
  return { totalGb: round(s.blocks * s.bsize), freeGb: round(s.bavail * s.bsize) };
}
