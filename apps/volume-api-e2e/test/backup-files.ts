import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from './harness';

/** What the backup specs share: byte-level file checks, a scratch store directory, a backup poll. */

export const MIB = 1024 * 1024;

/** The sha256 of a (possibly sparse, GiB-sized) volume file, read `bufferBytes` at a time. */
export async function sha256File(file: string, bufferBytes = 8 * MIB): Promise<string> {
  const h = createHash('sha256');
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(bufferBytes);
    for (let pos = 0; ;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      pos += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return h.digest('hex');
}

/** Writes `data` into a volume file at `offset`, leaving the rest as it is. */
export async function writeAt(file: string, offset: number, data: Buffer): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.write(data, 0, data.length, offset);
  } finally {
    await fh.close();
  }
}

/** A fresh directory under the OS temp dir (a backup store), and how to remove it afterwards. */
export function scratchDir(prefix: string): { dir: string; remove: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Polls GET /backups/{id} until its status is one of `statuses` (`'deleted'` is met by a 404) and
 * answers the backup (null once deleted); throws with the last body when the time runs out.
 */
export async function waitBackup(
  c: Client,
  id: string,
  statuses: string[],
  opts: { timeoutMs?: number; pollMs?: number } = {},
): Promise<any> {
  const until = Date.now() + (opts.timeoutMs ?? 60000);
  let last: any = null;
  while (Date.now() < until) {
    const r = await c.get(`/backups/${id}`);
    if (r.status === 404 && statuses.includes('deleted')) return null;
    last = r.body;
    if (statuses.includes(r.body?.backup?.status)) return r.body.backup;
    await new Promise((res) => setTimeout(res, opts.pollMs ?? 50));
  }
  throw new Error(`backup ${id} did not reach ${statuses.join('|')}: ${JSON.stringify(last)}`);
}
