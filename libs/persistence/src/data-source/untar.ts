import { createReadStream, mkdirSync, openSync, closeSync, writeSync } from 'node:fs';
import { dirname, join, normalize, sep } from 'node:path';
import { createGunzip } from 'node:zlib';

const BLOCK = 512;

/**
 * Extracts a gzip'd tar of directories and regular files (the dump PGlite's `dumpDataDir` makes)
 * into `dir`, streaming: a few blocks in memory at a time instead of the whole archive. Loading a
 * 40 MB cluster through PGlite's `loadDataDir` held it three times over (the gunzipped buffer, the
 * Blob, the Blob's bytes) until a garbage collection the idle process never ran (issue #17).
 * Returns the paths written, relative to `dir`. Refuses links, devices and names leaving `dir`.
 */
export async function extractTarGz(file: string, dir: string): Promise<string[]> {
  const written: string[] = [];
  let pending: Buffer = Buffer.alloc(0);
  /** The file being written: its descriptor and the bytes of it still to come (then padding). */
  let body: { fd: number | undefined; left: number; pad: number } | undefined;
  let ended = false;
  try {
    for await (const chunk of createReadStream(file).pipe(createGunzip())) {
      pending = pending.length === 0 ? (chunk as Buffer) : Buffer.concat([pending, chunk as Buffer]);
      for (;;) {
        if (body) {
          const n = Math.min(body.left, pending.length);
          if (n > 0 && body.fd !== undefined) writeSync(body.fd, pending, 0, n);
          pending = pending.subarray(n);
          body.left -= n;
          if (body.left > 0) break;
          if (body.fd !== undefined) closeSync(body.fd);
          body.fd = undefined;
          if (pending.length < body.pad) break;
          pending = pending.subarray(body.pad);
          body = undefined;
        }
        if (ended || pending.length < BLOCK) break;
        const header = pending.subarray(0, BLOCK);
        pending = pending.subarray(BLOCK);
        if (header.every((b) => b === 0)) {
          ended = true;
          break;
        }
        const entry = parseHeader(header);
        const target = join(dir, entry.name);
        if (entry.type === 'dir') {
          mkdirSync(target, { recursive: true, mode: entry.mode });
          if (entry.name !== '.') written.push(entry.name);
          continue;
        }
        mkdirSync(dirname(target), { recursive: true });
        const fd = openSync(target, 'w', entry.mode);
        written.push(entry.name);
        body = { fd, left: entry.size, pad: (BLOCK - (entry.size % BLOCK)) % BLOCK };
      }
    }
  } finally {
    if (body?.fd !== undefined) closeSync(body.fd);
  }
  // gunzip refuses a truncated stream; within it, the archive must not stop inside an entry.
  if (body || (!ended && pending.length > 0)) throw new Error(`${file} is not a complete tar archive`);
  return written;
}

function parseHeader(h: Buffer): { name: string; type: 'file' | 'dir'; size: number; mode: number } {
  const text = (from: number, len: number) => {
    const raw = h.subarray(from, from + len);
    const end = raw.indexOf(0);
    return raw.subarray(0, end < 0 ? len : end).toString('utf8');
  };
  const octal = (from: number, len: number) => parseInt(text(from, len).trim() || '0', 8);
  const checksum = octal(148, 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] ?? 0);
  if (sum !== checksum) throw new Error('tar header checksum mismatch');
  const prefix = h.subarray(257, 262).toString() === 'ustar' ? text(345, 155) : '';
  const name = normalize((prefix ? `${prefix}/` : '') + text(0, 100))
    .replace(/^[/\\]+/, '')
    .replace(/[/\\]+$/, '');
  const flag = String.fromCharCode(h[156] ?? 0);
  const mode = octal(100, 8) & 0o777;
  if (flag === '5' && (name === '' || name === '.')) return { name: '.', type: 'dir', size: 0, mode };
  if (name === '' || name === '.' || name.split(sep).includes('..'))
    throw new Error(`tar entry name ${name}`);
  if (flag === '5') return { name, type: 'dir', size: 0, mode };
  if (flag === '0' || flag === '\0') return { name, type: 'file', size: octal(124, 12), mode };
  throw new Error(`tar entry ${name} of type ${flag}: only files and directories are expected`);
}
