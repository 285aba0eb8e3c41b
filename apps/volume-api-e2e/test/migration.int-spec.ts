import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';
import { hasCinderClient, runPythonScript } from './python-client';

const bad = (message: string) => ({ badRequest: { code: 400, message } });

/**
 * Two back ends in one worker process (VOLUME_BACKENDS, Cinder's enabled_backends): placement by
 * `volume_backend_name`, retype with `migration_policy: on-demand` moving the bytes to the other
 * back end, and the admin `os-migrate_volume` action (spec 8.1.4; tempest's VolumeMultiBackendTest
 * and VolumeRetypeWithMigrationTest).
 */
describe.each(MODES)('multiple back ends and volume migration (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let host: string;
  const suffix = randomBytes(3).toString('hex');
  const typeOn: Record<string, { id: string; name: string }> = {};

  beforeAll(async () => {
    bs = await startBlockStorage(mode, { VOLUME_BACKENDS: 'alpha,beta' });
    api = new Client(bs.base, admin);
    const pools = (await api.get('/scheduler-stats/get_pools?detail=true')).body.pools;
    host = String(pools[0].name).split('@')[0] ?? '';
    for (const backend of ['alpha', 'beta']) {
      const r = await api.post('/types', {
        volume_type: { name: `mb-${backend}-${suffix}`, extra_specs: { volume_backend_name: backend } },
      });
      expect(r.status).toBe(200);
      typeOn[backend] = r.body.volume_type;
    }
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  const fileOf = (backend: string, volumeId: string): string =>
    path.join(backend === 'alpha' ? bs.volumeDir : `${bs.volumeDir}-${backend}`, `volume-${volumeId}`);

  async function volume(c: Client, body: Record<string, unknown> = {}): Promise<any> {
    const r = await c.post('/volumes', { volume: { size: 1, ...body } });
    expect(r.status).toBe(202);
    await c.waitFor('volumes', r.body.volume.id, ['available']);
    return (await api.get(`/volumes/${r.body.volume.id}`)).body.volume;
  }

  /** Writes a recognisable pattern into a volume's file and returns it. */
  async function scribble(file: string): Promise<Buffer> {
    const data = randomBytes(64 * 1024);
    const fh = await open(file, 'r+');
    await fh.write(data, 0, data.length, 1024 * 1024);
    await fh.close();
    return data;
  }

  async function readBack(file: string, length: number): Promise<Buffer> {
    const fh = await open(file, 'r');
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, 1024 * 1024);
    await fh.close();
    return buf;
  }

  async function waitForMigration(id: string): Promise<any> {
    const until = Date.now() + 30000;
    while (Date.now() < until) {
      const v = (await api.get(`/volumes/${id}`)).body.volume;
      if (
        ['success', 'error'].includes(v.migration_status) &&
        !['retyping', 'maintenance'].includes(v.status)
      )
        return v;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`volume ${id} did not finish migrating`);
  }

  /**
   * The source copy is removed right after the row moves (the commit comes first, so a crash never
   * loses the only copy); a reader who saw migration_status success may be a moment early.
   */
  async function waitUntilGone(file: string): Promise<boolean> {
    const until = Date.now() + 10000;
    while (existsSync(file) && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
    return !existsSync(file);
  }

  it('reports one pool, one location and one cinder-volume service per back end', async () => {
    const pools = (await api.get('/scheduler-stats/get_pools?detail=true')).body.pools;
    expect(pools.map((p: any) => p.name).sort()).toEqual([`${host}@alpha#alpha`, `${host}@beta#beta`]);
    for (const p of pools) expect(p.capabilities.location_info).toMatch(/^file:[^:]+:\//);
    const services = (await api.get('/os-services?binary=cinder-volume')).body.services;
    expect(services.map((s: any) => [s.host, s.state]).sort()).toEqual([
      [`${host}@alpha`, 'up'],
      [`${host}@beta`, 'up'],
    ]);
  });

  it('places volumes by volume_backend_name, with and without the capabilities: prefix', async () => {
    const prefixed = (
      await api.post('/types', {
        volume_type: {
          name: `mb-cap-beta-${suffix}`,
          extra_specs: { 'capabilities:volume_backend_name': 'beta' },
        },
      })
    ).body.volume_type;
    const a = await volume(api, { volume_type: typeOn['alpha']?.name });
    const b = await volume(api, { volume_type: typeOn['beta']?.name });
    const c = await volume(api, { volume_type: prefixed.name });
    expect([a['os-vol-host-attr:host'], b['os-vol-host-attr:host'], c['os-vol-host-attr:host']]).toEqual([
      `${host}@alpha#alpha`,
      `${host}@beta#beta`,
      `${host}@beta#beta`,
    ]);
    expect(existsSync(fileOf('alpha', a.id))).toBe(true);
    expect(existsSync(fileOf('beta', b.id))).toBe(true);
  });

  it('retypes on demand to a type of the other back end: the bytes move, the type and host change, the quota follows', async () => {
    const member = api.as(memberOf(newProject()));
    const v = await volume(member, {
      volume_type: typeOn['alpha']?.name,
      name: 'moving',
      description: 'kept',
    });
    const data = await scribble(fileOf('alpha', v.id));
    const r = await member.post(`/volumes/${v.id}/action`, {
      'os-retype': { new_type: typeOn['beta']?.name, migration_policy: 'on-demand' },
    });
    expect(r.status).toBe(202);
    const after = await waitForMigration(v.id);
    expect(after).toMatchObject({
      id: v.id,
      name: 'moving',
      description: 'kept',
      size: 1,
      status: 'available',
      volume_type: typeOn['beta']?.name,
      migration_status: 'success',
      'os-vol-mig-status-attr:migstat': 'success',
      'os-vol-host-attr:host': `${host}@beta#beta`,
    });
    expect((await readBack(fileOf('beta', v.id), data.length)).equals(data)).toBe(true);
    expect(await waitUntilGone(fileOf('alpha', v.id))).toBe(true);
    const quota = (await api.get(`/os-quota-sets/${member.caller.project}?usage=true`)).body.quota_set;
    expect([
      quota[`volumes_${typeOn['alpha']?.name}`].in_use,
      quota[`volumes_${typeOn['beta']?.name}`].in_use,
    ]).toEqual([0, 1]);
    expect([
      quota[`gigabytes_${typeOn['beta']?.name}`].in_use,
      quota[`gigabytes_${typeOn['beta']?.name}`].reserved,
      quota.volumes.in_use,
    ]).toEqual([1, 0, 1]);
    // The moved volume lives on: it can be extended and deleted on its new back end.
    expect((await member.post(`/volumes/${v.id}/action`, { 'os-extend': { new_size: 2 } })).status).toBe(202);
    await member.waitFor('volumes', v.id, ['available']);
    expect((await member.delete(`/volumes/${v.id}`)).status).toBe(202);
    await member.waitFor('volumes', v.id, ['deleted']);
    expect(existsSync(fileOf('beta', v.id))).toBe(false);
  });

  it('keeps the type when the policy is never and the volume would have to move', async () => {
    const v = await volume(api, { volume_type: typeOn['alpha']?.name });
    expect(
      (
        await api.post(`/volumes/${v.id}/action`, {
          'os-retype': { new_type: typeOn['beta']?.name, migration_policy: 'never' },
        })
      ).status,
    ).toBe(202);
    expect((await api.get(`/volumes/${v.id}`)).body.volume).toMatchObject({
      volume_type: typeOn['alpha']?.name,
      status: 'available',
      migration_status: null,
      'os-vol-host-attr:host': `${host}@alpha#alpha`,
    });
  });

  it('refuses an on-demand retype of a volume with snapshots', async () => {
    const v = await volume(api, { volume_type: typeOn['alpha']?.name });
    const s = await api.post('/snapshots', { snapshot: { volume_id: v.id } });
    await api.waitFor('snapshots', s.body.snapshot.id, ['available']);
    const r = await api.post(`/volumes/${v.id}/action`, {
      'os-retype': { new_type: typeOn['beta']?.name, migration_policy: 'on-demand' },
    });
    expect(r.body).toEqual(
      bad(`Invalid volume: Volume ${v.id} must not have snapshots to be retyped with a migration.`),
    );
  });

  it('migrates a volume to another back end with os-migrate_volume (admin), lock_volume holding it in maintenance', async () => {
    const member = api.as(memberOf(newProject()));
    const v = await volume(member);
    const from = String(v['os-vol-host-attr:host']).split('#')[0] ?? '';
    const to = from === `${host}@alpha` ? `${host}@beta` : `${host}@alpha`;
    const data = await scribble(fileOf(from.split('@')[1] ?? '', v.id));
    expect((await member.post(`/volumes/${v.id}/action`, { 'os-migrate_volume': { host: to } })).status).toBe(
      403,
    );
    const r = await api.post(`/volumes/${v.id}/action`, {
      'os-migrate_volume': { host: to, force_host_copy: false, lock_volume: true },
    });
    expect(r.status).toBe(202);
    const during = (await api.get(`/volumes/${v.id}`)).body.volume;
    if (during.migration_status !== 'success') expect(during.status).toBe('maintenance');
    const after = await waitForMigration(v.id);
    expect(after).toMatchObject({
      status: 'available',
      migration_status: 'success',
      volume_type: v.volume_type,
      'os-vol-host-attr:host': `${to}#${to.split('@')[1]}`,
    });
    expect((await readBack(fileOf(to.split('@')[1] ?? '', v.id), data.length)).equals(data)).toBe(true);
    expect(await waitUntilGone(fileOf(from.split('@')[1] ?? '', v.id))).toBe(true);
    // A volume whose last migration succeeded can migrate again (back), by pool name this time.
    expect(
      (
        await api.post(`/volumes/${v.id}/action`, {
          'os-migrate_volume': { host: `${from}#${from.split('@')[1]}` },
        })
      ).status,
    ).toBe(202);
    expect((await waitForMigration(v.id))['os-vol-host-attr:host']).toBe(`${from}#${from.split('@')[1]}`);
    expect((await readBack(fileOf(from.split('@')[1] ?? '', v.id), data.length)).equals(data)).toBe(true);
  });

  it('ends in migration_status error, the volume untouched where it was, when the destination does not satisfy its type', async () => {
    const v = await volume(api, { volume_type: typeOn['alpha']?.name });
    const data = await scribble(fileOf('alpha', v.id));
    expect(
      (await api.post(`/volumes/${v.id}/action`, { 'os-migrate_volume': { host: `${host}@beta` } })).status,
    ).toBe(202);
    const after = await waitForMigration(v.id);
    expect(after).toMatchObject({
      status: 'available',
      migration_status: 'error',
      'os-vol-host-attr:host': `${host}@alpha#alpha`,
    });
    expect((await readBack(fileOf('alpha', v.id), data.length)).equals(data)).toBe(true);
    expect(existsSync(fileOf('beta', v.id))).toBe(false);
    // An error is not an active migration: the volume can be deleted.
    expect((await api.delete(`/volumes/${v.id}`)).status).toBe(202);
  });

  it('refuses bad migrations with Cinder’s messages', async () => {
    const v = await volume(api, { volume_type: typeOn['alpha']?.name });
    const act = (args: unknown, c: Client = api) =>
      c.post(`/volumes/${v.id}/action`, { 'os-migrate_volume': args });
    expect((await act({ host: 'nowhere@none' })).body).toEqual(
      bad('Invalid host: No available service named nowhere@none'),
    );
    expect((await act({ host: `${host}@alpha` })).body).toEqual(
      bad('Invalid host: Destination host must be different than the current host.'),
    );
    expect((await act({})).status).toBe(400);
    expect((await act({ host: 7 })).status).toBe(400);
    expect((await act({ host: `${host}@beta`, lock_volume: 'perhaps' })).status).toBe(400);
    expect((await act({ host: `${host}@beta`, cluster: 'c1' }, api.at('3.15'))).status).toBe(400);
    expect((await act({ host: `${host}@beta`, cluster: 'c1' }, api.at('3.16'))).body).toEqual(
      bad('Invalid input received: Only one of host and cluster may be given.'),
    );
    expect((await act({ cluster: 'c1' }, api.at('3.16'))).body).toEqual(
      bad('Invalid host: No available service named c1'),
    );
    const s = await api.post('/snapshots', { snapshot: { volume_id: v.id } });
    await api.waitFor('snapshots', s.body.snapshot.id, ['available']);
    expect((await act({ host: `${host}@beta` })).body).toEqual(
      bad(`Invalid volume: Volume ${v.id} must not have snapshots.`),
    );
    await api.post(`/volumes/${v.id}/action`, { 'os-reset_status': { status: 'error' } });
    expect((await act({ host: `${host}@beta` })).body).toEqual(
      bad(`Invalid volume: Volume ${v.id} status must be available or in-use, but current status is: error.`),
    );
    await api.post(`/volumes/${v.id}/action`, {
      'os-reset_status': { status: 'available', migration_status: 'migrating' },
    });
    expect((await act({ host: `${host}@beta` })).body).toEqual(
      bad(`Invalid volume: Volume ${v.id} is already part of an active migration.`),
    );
    expect((await api.post(`/volumes/${v.id}/action`, { 'os-extend': { new_size: 2 } })).body).toEqual(
      bad(`Invalid volume: Volume ${v.id} is part of an active migration and cannot be extended.`),
    );
  });
  it('moves nothing to a back end whose service an operator disabled', async () => {
    const v = await volume(api, { volume_type: typeOn['alpha']?.name });
    expect(
      (await api.put('/os-services/disable', { host: `${host}@beta`, binary: 'cinder-volume' })).status,
    ).toBe(200);
    try {
      expect(
        (await api.post(`/volumes/${v.id}/action`, { 'os-migrate_volume': { host: `${host}@beta` } })).body,
      ).toEqual(bad(`Invalid host: No available service named ${host}@beta`));
      expect(
        (
          await api.post(`/volumes/${v.id}/action`, {
            'os-retype': { new_type: typeOn['beta']?.name, migration_policy: 'on-demand' },
          })
        ).status,
      ).toBe(202);
      expect((await api.get(`/volumes/${v.id}`)).body.volume).toMatchObject({
        volume_type: typeOn['alpha']?.name,
        status: 'available',
        migration_status: null,
      });
    } finally {
      expect(
        (await api.put('/os-services/enable', { host: `${host}@beta`, binary: 'cinder-volume' })).status,
      ).toBe(200);
    }
  });
});

/** The real python-cinderclient (no-auth) migrating and retyping between two back ends. */
describe.each(MODES.slice(0, 1))('python-cinderclient migrate_volume and retype on-demand (%s)', (mode) => {
  let bs: BlockStorage;
  const host = `py-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    bs = await startBlockStorage(mode, {
      AUTH_MODE: 'noauth',
      VOLUME_BACKENDS: 'alpha,beta',
      VOLUME_BACKEND_HOST: host,
    });
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  it('moves a volume with cinder migrate (3.0 and 3.71) and back with cinder retype --migration-policy on-demand', async () => {
    expect(hasCinderClient).toBe(true);
    const res = await runPythonScript('cinderclient_migrate.py', [`${bs.base}/v3`, newProject(), host]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const each = { migrated: [true, 'success', 'available'], retyped: [true, 'success'] };
    expect(JSON.parse(res.stdout)).toEqual({ '3.0': each, '3.71': each });
  }, 120000);
});
