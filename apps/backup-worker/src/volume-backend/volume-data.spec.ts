import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createSparseFile } from './sparse-file';
import { fetchRemoteVolume, removeRemoteVolume, startVolumeDataServer, volumeFrames } from './volume-data';
import { signVolumeRequest } from './volume-stream';

const SECRET = randomBytes(16).toString('hex');
const BACKEND = 'host-a@file';
const MIB = 1024 * 1024;

/** The data endpoint on loopback: what it serves, to whom, and what the reading side refuses. */
describe('volume data endpoint', () => {
  let dir: string;
  let server: Server;
  let base: string;
  const migrating = new Set<string>();
  const movedAway = new Set<string>();
  const fileOf = (id: string): string => path.join(dir, `volume-${id}`);
  const id = '11111111-2222-4333-8444-555555555555';

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-volume-data-'));
    server = await startVolumeDataServer({
      backend: BACKEND,
      secret: SECRET,
      host: '127.0.0.1',
      port: 0,
      fileOf,
      mayServe: async (v) => migrating.has(v),
      removeMovedAway: async (v) => {
        if (!movedAway.has(v)) return false;
        rmSync(fileOf(v), { force: true });
        return true;
      },
      now: () => Date.now(),
      warn: () => undefined,
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const read = (dest: string, over: Partial<Parameters<typeof fetchRemoteVolume>[0]> = {}) =>
    fetchRemoteVolume({
      baseUrl: base,
      backend: BACKEND,
      volumeId: id,
      secret: SECRET,
      dest,
      bytes: 64 * MIB,
      now: Date.now(),
      timeoutMs: 30_000,
      ...over,
    });

  it('streams a migrating volume whole, sha256 equal, holes kept as holes', async () => {
    await createSparseFile(fileOf(id), 64 * MIB);
    const fh = await open(fileOf(id), 'r+');
    await fh.write(randomBytes(MIB + 5), 0, MIB + 5, 3 * MIB);
    await fh.write(randomBytes(100), 0, 100, 64 * MIB - 100);
    await fh.close();
    migrating.add(id);
    const dest = path.join(dir, 'copy');
    expect(await read(dest)).toBe(64 * MIB);
    const digest = async (f: string) =>
      createHash('sha256')
        .update(await readFile(f))
        .digest('hex');
    expect(await digest(dest)).toBe(await digest(fileOf(id)));
    // Three 1 MiB blocks hold data; the 61 others stay unallocated.
    expect((await stat(dest)).blocks * 512).toBeLessThanOrEqual(4 * MIB);
  });

  it('refuses requests not signed with the secret, for another volume or back end, or while not migrating', async () => {
    const dest = path.join(dir, 'refused');
    await expect(read(dest, { secret: 'another-secret-of-16' })).rejects.toThrow(
      /answered 401: .*signature does not match/,
    );
    const other = await fetch(`${base}/v1/backends/${BACKEND}/volumes/${id}`, {
      headers: {
        authorization: signVolumeRequest(SECRET, 'GET', BACKEND, id.replace('1111', '9999'), Date.now()),
      },
    });
    expect(other.status).toBe(401);
    await expect(read(dest, { backend: 'host-b@file' })).rejects.toThrow(/answered 404/);
    migrating.delete(id);
    await expect(read(dest)).rejects.toThrow(/answered 409: .*not migrating away/);
    migrating.add(id);
  });

  it('removes the source copy only once the volume moved away, and only when signed for DELETE', async () => {
    const del = (secret = SECRET) =>
      removeRemoteVolume({
        baseUrl: base,
        backend: BACKEND,
        volumeId: id,
        secret,
        now: Date.now(),
        timeoutMs: 10_000,
      });
    await expect(del()).rejects.toThrow(/answered 409: .*still on host-a@file/);
    const getToken = await fetch(`${base}/v1/backends/${BACKEND}/volumes/${id}`, {
      method: 'DELETE',
      headers: { authorization: signVolumeRequest(SECRET, 'GET', BACKEND, id, Date.now()) },
    });
    expect(getToken.status).toBe(401);
    movedAway.add(id);
    await del();
    expect(existsSync(fileOf(id))).toBe(false);
  });

  it('refuses a stream cut short or altered on the way', async () => {
    const src = path.join(dir, 'volume-src');
    await createSparseFile(src, 4 * MIB);
    const fh = await open(src, 'r+');
    await fh.write(randomBytes(2 * MIB), 0, 2 * MIB, 0);
    await fh.close();
    const frames: Buffer[] = [];
    for await (const b of volumeFrames(src)) frames.push(b);
    const whole = Buffer.concat(frames);
    const bodies = { cut: whole.subarray(0, whole.length - 40), altered: Buffer.from(whole) };
    (bodies.altered[100] as number) = (bodies.altered[100] as number) ^ 1;
    const liar = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-osc-volume-stream' });
      res.end(req.url?.includes('22222222') ? bodies.cut : bodies.altered);
    });
    await new Promise<void>((r) => liar.listen(0, '127.0.0.1', () => r()));
    const liarBase = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
    try {
      await expect(
        read(path.join(dir, 'cut'), { baseUrl: liarBase, volumeId: '22222222-2222-4333-8444-555555555555' }),
      ).rejects.toThrow(/ended before its end frame/);
      await expect(
        read(path.join(dir, 'altered'), {
          baseUrl: liarBase,
          volumeId: '33333333-2222-4333-8444-555555555555',
        }),
      ).rejects.toThrow(/digest does not match/);
    } finally {
      await new Promise((r) => liar.close(r));
    }
  });
});
