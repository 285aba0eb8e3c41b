import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { DistributedStack, freePort, ROOT } from '../test/distributed-stack';

const ADMIN = {
  'x-project-id': 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0',
  'x-user-id': 'admin-user',
  'x-roles': 'admin,member,reader',
};
const SECRET = randomBytes(24).toString('hex');

const sha256 = (file: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (d) => h.update(d))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });

/**
 * Migration between back-end hosts on different machines (issue 21 item 4): two backup-worker
 * processes with their own data directories and machine names, so neither can read the other's
 * files; the destination reads the source volume through the source's streaming data endpoint
 * (signed with the shared secret) and the source removes its copy when asked after the commit.
 */
describe('volume migration between two back-end machines (distributed)', () => {
  const stack = new DistributedStack();
  const dirs = {
    a: path.join(ROOT, 'tmp', stack.database, 'machine-a'),
    b: path.join(ROOT, 'tmp', stack.database, 'machine-b'),
  };
  const dataPorts: Record<'a' | 'b', number> = { a: 0, b: 0 };
  let base = '';

  beforeAll(async () => {
    await stack.createDatabase();
    dataPorts.a = await freePort();
    dataPorts.b = await freePort();
    const worker = (m: 'a' | 'b') => ({
      name: `backup-worker-${m}`,
      app: 'backup-worker',
      portVar: 'BACKUP_WORKER_HEALTH_PORT',
      env: {
        VOLUME_BACKEND_HOST: `host-${m}`,
        VOLUME_BACKEND_MACHINE: `machine-${m}`,
        VOLUME_BACKEND_DIR: path.join(dirs[m], 'volumes'),
        BACKUP_STORE_DIR: path.join(dirs[m], 'backups'),
        VOLUME_DATA_PORT: String(dataPorts[m]),
        VOLUME_DATA_HOST: '127.0.0.1',
        VOLUME_DATA_URL: `http://127.0.0.1:${dataPorts[m]}`,
        VOLUME_DATA_SECRET: SECRET,
        VOLUME_BACKEND_STATS_SECONDS: '5',
      },
    });
    await stack.start([
      {
        name: 'volume-api',
        app: 'volume-api',
        portVar: 'VOLUME_API_PORT',
        env: { AUTH_MODE: 'headers', VOLUME_API_HOST: '127.0.0.1' },
      },
      { name: 'scheduler-stats', app: 'scheduler-stats', portVar: 'SCHEDULER_STATS_HEALTH_PORT' },
      worker('a'),
      worker('b'),
    ]);
    base = `http://127.0.0.1:${stack.port('volume-api')}/v3/${ADMIN['x-project-id']}`;
  }, 180_000);
  afterAll(() => stack.stop(), 60_000);

  const api = async (method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const r = await fetch(`${base}${p}`, {
      method,
      headers: { ...ADMIN, 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  const volumeFile = (m: 'a' | 'b', id: string): string => path.join(dirs[m], 'volumes', `volume-${id}`);
  const until = async <T>(
    what: string,
    get: () => Promise<T>,
    done: (v: T) => boolean,
    ms = 60_000,
  ): Promise<T> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await get();
      if (done(v)) return v;
      if (Date.now() > deadline) throw new Error(`${what}: last ${JSON.stringify(v)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  it('moves the bytes through the data endpoint, sha256 equal, and removes the source copy', async () => {
    const pools = await until(
      'both pools reported',
      () => api('GET', '/scheduler-stats/get_pools?detail=true'),
      (r) => r.body?.pools?.length === 2,
    );
    for (const p of pools.body.pools) {
      const m = String(p.name).startsWith('host-a@') ? 'a' : 'b';
      expect(p.capabilities).toMatchObject({
        location_info: `file:machine-${m}:${path.join(dirs[m], 'volumes')}`,
        data_url: `http://127.0.0.1:${dataPorts[m]}`,
      });
    }

    const created = await api('POST', '/volumes', { volume: { size: 1, name: 'cross-host' } });
    expect(created.status).toBe(202);
    const id: string = created.body.volume.id;
    const placed = await until(
      'volume available',
      () => api('GET', `/volumes/${id}`),
      (r) => r.body?.volume?.status === 'available',
    );
    const from: 'a' | 'b' = String(placed.body.volume['os-vol-host-attr:host']).startsWith('host-a@')
      ? 'a'
      : 'b';
    const to: 'a' | 'b' = from === 'a' ? 'b' : 'a';

    // Data at the start, in the middle and in the last block; holes elsewhere.
    const fh = await open(volumeFile(from, id), 'r+');
    for (const [offset, length] of [
      [0, 3 * 1024 * 1024 + 17],
      [512 * 1024 * 1024 + 4096, 1024 * 1024],
      [1024 ** 3 - 4096, 4096],
    ] as const)
      await fh.write(randomBytes(length), 0, length, offset);
    await fh.close();
    const before = await sha256(volumeFile(from, id));

    // The source endpoint refuses a request not signed with the shared secret.
    const unsigned = await fetch(
      `http://127.0.0.1:${dataPorts[from]}/v1/backends/host-${from}@file/volumes/${id}`,
      { headers: { authorization: `Bearer ${SECRET}` } },
    );
    expect(unsigned.status).toBe(401);

    const migrate = await api('POST', `/volumes/${id}/action`, {
      'os-migrate_volume': { host: `host-${to}@file#file`, force_host_copy: false },
    });
    expect(migrate.status).toBe(202);
    const moved = await until(
      'migration finished',
      () => api('GET', `/volumes/${id}`),
      (r) =>
        ['success', 'error'].includes(r.body?.volume?.migration_status) &&
        r.body?.volume?.status !== 'maintenance',
      120_000,
    );
    expect(moved.body.volume).toMatchObject({
      status: 'available',
      migration_status: 'success',
      'os-vol-host-attr:host': `host-${to}@file#file`,
    });
    expect(await sha256(volumeFile(to, id))).toBe(before);
    await until(
      'source copy removed',
      async () => existsSync(volumeFile(from, id)),
      (exists) => !exists,
      30_000,
    );
    expect(existsSync(`${volumeFile(to, id)}.migrating`)).toBe(false);
  }, 300_000);
});
