import { randomBytes } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { open, truncate } from 'node:fs/promises';
import path from 'node:path';
import {
  admin,
  Client,
  memberOf,
  MODES,
  newProject,
  startBlockStorage,
  type BlockStorage,
  type Caller,
} from './harness';

const GIB = 1024 * 1024 * 1024;

/**
 * Manage and unmanage (tempest's VolumeManageAdminTest and SnapshotManageAdminTest): unmanage
 * forgets a volume or snapshot and keeps its file; manage adopts such a file again under a new id,
 * with its bytes, its size and the project's quota.
 */
describe.each(MODES)('manage and unmanage (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let pool: string;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base, admin);
    pool = (await api.get('/scheduler-stats/get_pools')).body.pools[0].name;
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  const file = (name: string): string => path.join(bs.volumeDir, name);
  /** An admin of a project of its own, so quota assertions see only this test's resources. */
  const freshAdmin = (): Client =>
    new Client(bs.base, {
      project: newProject(),
      user: 'admin-2',
      roles: 'admin,member,reader',
    } satisfies Caller);

  async function volume(c: Client, size = 1): Promise<any> {
    const r = await c.post('/volumes', { volume: { size } });
    expect(r.status).toBe(202);
    await c.waitFor('volumes', r.body.volume.id, ['available']);
    return (await c.get(`/volumes/${r.body.volume.id}`)).body.volume;
  }

  async function scribble(name: string): Promise<Buffer> {
    const data = randomBytes(64 * 1024);
    const fh = await open(file(name), 'r+');
    await fh.write(data, 0, data.length, 1024 * 1024);
    await fh.close();
    return data;
  }

  async function readBack(name: string, length: number): Promise<Buffer> {
    const fh = await open(file(name), 'r');
    const buf = Buffer.alloc(length);
    await fh.read(buf, 0, length, 1024 * 1024);
    await fh.close();
    return buf;
  }

  const usage = async (c: Client): Promise<Record<string, { in_use: number }>> =>
    (await api.get(`/os-quota-sets/${c.caller.project}?usage=true`)).body.quota_set;

  it('unmanage keeps the file; manage adopts it under a new id with its bytes, size, type, zone and quota', async () => {
    const c = freshAdmin();
    const org = await volume(c, 2);
    const pattern = await scribble(`volume-${org.id}`);
    expect((await usage(c))['gigabytes']?.in_use).toBe(2);

    const un = await c.post(`/volumes/${org.id}/action`, { 'os-unmanage': {} });
    expect(un.status).toBe(202);
    await c.waitFor('volumes', org.id, ['deleted']);
    expect(existsSync(file(`volume-${org.id}`))).toBe(true);
    const listed = (await c.get('/volumes/detail?all_tenants=1')).body.volumes.map((v: any) => v.id);
    expect(listed).not.toContain(org.id);
    expect((await usage(c))['volumes']?.in_use).toBe(0);
    expect((await usage(c))['gigabytes']?.in_use).toBe(0);

    const r = await c.post('/os-volume-manage', {
      volume: {
        name: 'adopted',
        host: org['os-vol-host-attr:host'],
        ref: { 'source-name': `volume-${org.id}` },
        volume_type: org.volume_type,
        availability_zone: org.availability_zone,
      },
    });
    expect(r.status).toBe(202);
    expect(r.body.volume).toMatchObject({ name: 'adopted', status: 'creating' });
    const id = r.body.volume.id;
    expect(id).not.toBe(org.id);
    const v = await c.waitFor('volumes', id, ['available', 'error']);
    expect(v.status).toBe('available');
    for (const key of ['size', 'volume_type', 'availability_zone', 'os-vol-host-attr:host'])
      expect(v[key]).toEqual(org[key]);
    expect(v.metadata).toEqual({});
    expect(existsSync(file(`volume-${org.id}`))).toBe(false);
    expect((await readBack(`volume-${id}`, pattern.length)).equals(pattern)).toBe(true);
    expect((await usage(c))['volumes']?.in_use).toBe(1);
    expect((await usage(c))['gigabytes']?.in_use).toBe(2);

    // The adopted volume is an ordinary one: deleting it removes the file and the quota.
    expect((await c.delete(`/volumes/${id}`)).status).toBe(202);
    await c.waitFor('volumes', id, ['deleted']);
    expect(existsSync(file(`volume-${id}`))).toBe(false);
    expect((await usage(c))['gigabytes']?.in_use).toBe(0);
  });

  it('manages an operator file by source-id through /manageable_volumes, sized up to whole GiB, with a back end host', async () => {
    const c = freshAdmin();
    const foreign = '0f0f0f0f-1111-4222-8333-444455556666';
    writeFileSync(file(`volume-${foreign}`), 'x');
    await truncate(file(`volume-${foreign}`), GIB + 1);
    const backend = pool.split('#')[0];
    const r = await c.post('/manageable_volumes', {
      volume: {
        host: backend,
        ref: { 'source-id': foreign },
        bootable: true,
        metadata: { k: 'v' },
        description: 'd',
      },
    });
    expect(r.status).toBe(202);
    const v = await c.waitFor('volumes', r.body.volume.id, ['available', 'error']);
    expect(v).toMatchObject({
      status: 'available',
      size: 2,
      bootable: 'true',
      metadata: { k: 'v' },
      description: 'd',
      'os-vol-host-attr:host': pool,
    });
    expect((await usage(c))['gigabytes']?.in_use).toBe(2);
  });

  it('refuses members, unknown hosts, missing host or ref, and references it already manages', async () => {
    const owner = new Client(bs.base, memberOf(newProject()));
    const mine = await volume(owner);
    const ref = { 'source-name': `volume-${mine.id}` };
    expect((await owner.post('/os-volume-manage', { volume: { host: pool, ref } })).status).toBe(403);
    expect((await owner.post(`/volumes/${mine.id}/action`, { 'os-unmanage': {} })).status).toBe(403);
    const unknown = await api.post('/os-volume-manage', {
      volume: { host: 'nowhere@none#none', ref: { 'source-name': 'volume-x' } },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.badRequest.message).toContain("Host 'nowhere@none#none' not found");
    expect((await api.post('/os-volume-manage', { volume: { ref } })).status).toBe(400);
    expect((await api.post('/os-volume-manage', { volume: { host: pool } })).status).toBe(400);
    expect((await api.post('/os-volume-manage', { volume: { host: pool, ref: 5 } })).status).toBe(400);
    expect((await api.post('/os-volume-manage', {})).status).toBe(400);
    const twice = await api.post('/os-volume-manage', { volume: { host: pool, ref } });
    expect(twice.status).toBe(400);
    expect(twice.body.badRequest.message).toContain('already managed');
    expect(
      (
        await api.post('/os-volume-manage', {
          volume: { host: pool, ref: { 'source-name': 'volume-x' }, volume_type: 'no-such-type' },
        })
      ).status,
    ).toBe(404);
    // A disabled cinder-volume service manages nothing.
    const backend = pool.split('#')[0];
    expect((await api.put('/os-services/disable', { host: backend, binary: 'cinder-volume' })).status).toBe(
      200,
    );
    const disabled = await api.post('/os-volume-manage', {
      volume: { host: pool, ref: { 'source-name': 'volume-x' } },
    });
    expect((await api.put('/os-services/enable', { host: backend, binary: 'cinder-volume' })).status).toBe(
      200,
    );
    expect([disabled.status, disabled.body.badRequest?.message]).toEqual([
      400,
      'Service is unavailable at this time.',
    ]);
  });

  it('a reference the back end cannot adopt ends in error (error_managing) without quota and without touching files', async () => {
    const c = freshAdmin();
    for (const ref of [
      { 'source-name': `volume-${'9'.repeat(8)}-9999-4999-8999-${'9'.repeat(12)}` },
      { 'source-name': '../../etc/passwd' },
      { other: 'x' },
    ]) {
      const r = await c.post('/os-volume-manage', { volume: { host: pool, ref } });
      expect(r.status).toBe(202);
      const v = await c.waitFor('volumes', r.body.volume.id, ['available', 'error']);
      expect(v.status).toBe('error');
      expect((await usage(c))['volumes']?.in_use).toBe(0);
      expect((await c.delete(`/volumes/${v.id}`)).status).toBe(202);
      await c.waitFor('volumes', v.id, ['deleted']);
      expect((await usage(c))['volumes']?.in_use).toBe(0);
    }
  });

  it('quota: the volume count is checked at once (413), the gigabytes when the back end knows the size', async () => {
    const c = freshAdmin();
    const src = await volume(api, 2);
    expect((await api.post(`/volumes/${src.id}/action`, { 'os-unmanage': {} })).status).toBe(202);
    await api.waitFor('volumes', src.id, ['deleted']);
    const ref = { 'source-name': `volume-${src.id}` };

    expect((await api.put(`/os-quota-sets/${c.caller.project}`, { quota_set: { volumes: 0 } })).status).toBe(
      200,
    );
    expect((await c.post('/os-volume-manage', { volume: { host: pool, ref } })).status).toBe(413);

    expect(
      (await api.put(`/os-quota-sets/${c.caller.project}`, { quota_set: { volumes: 5, gigabytes: 1 } }))
        .status,
    ).toBe(200);
    const over = await c.post('/os-volume-manage', { volume: { host: pool, ref } });
    expect(over.status).toBe(202);
    expect((await c.waitFor('volumes', over.body.volume.id, ['available', 'error'])).status).toBe('error');
    expect((await usage(c))['volumes']?.in_use).toBe(0);
    expect(existsSync(file(`volume-${src.id}`))).toBe(true);

    expect(
      (await api.put(`/os-quota-sets/${c.caller.project}`, { quota_set: { gigabytes: 2 } })).status,
    ).toBe(200);
    const fits = await c.post('/os-volume-manage', { volume: { host: pool, ref } });
    expect((await c.waitFor('volumes', fits.body.volume.id, ['available', 'error'])).status).toBe(
      'available',
    );
    expect((await usage(c))['gigabytes']?.in_use).toBe(2);
  });

  it('unmanage refuses a volume with snapshots', async () => {
    const v = await volume(api);
    const s = await api.post('/snapshots', { snapshot: { volume_id: v.id } });
    await api.waitFor('snapshots', s.body.snapshot.id, ['available']);
    const r = await api.post(`/volumes/${v.id}/action`, { 'os-unmanage': {} });
    expect(r.status).toBe(400);
    expect(r.body.badRequest.message).toContain('Invalid volume');
    expect((await api.get(`/volumes/${v.id}`)).body.volume.status).toBe('available');
  });

  it('lists the manageable volumes and snapshots of a back end (3.8), as the back end last reported its files', async () => {
    const c = freshAdmin();
    const kept = await volume(c);
    const gone = await volume(c);
    const snap = await c.waitFor(
      'snapshots',
      (await c.post('/snapshots', { snapshot: { volume_id: kept.id } })).body.snapshot.id,
      ['available'],
    );
    expect((await c.post(`/volumes/${gone.id}/action`, { 'os-unmanage': {} })).status).toBe(202);
    expect((await c.post(`/snapshots/${snap.id}/action`, { 'os-unmanage': {} })).status).toBe(202);
    await c.waitFor('volumes', gone.id, ['deleted']);
    await c.waitFor('snapshots', snap.id, ['deleted']);
    const q = `host=${encodeURIComponent(pool)}`;
    const until = Date.now() + 15000;
    let vols: any[] = [];
    let snaps: any[] = [];
    while (Date.now() < until) {
      vols = (await c.get(`/manageable_volumes/detail?${q}`)).body['manageable-volumes'];
      snaps = (await c.get(`/manageable_snapshots/detail?${q}`)).body['manageable-snapshots'];
      const goneSafe =
        vols.find((e) => e.reference['source-name'] === `volume-${gone.id}`)?.safe_to_manage === true;
      if (
        goneSafe &&
        snaps.some((e) => e.reference['source-name'] === `snapshot-${snap.id}` && e.safe_to_manage)
      )
        break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(vols.find((e) => e.reference['source-name'] === `volume-${gone.id}`)).toEqual({
      reference: { 'source-name': `volume-${gone.id}` },
      size: 1,
      safe_to_manage: true,
      reason_not_safe: null,
      cinder_id: null,
      extra_info: null,
    });
    expect(vols.find((e) => e.reference['source-name'] === `volume-${kept.id}`)).toEqual({
      reference: { 'source-name': `volume-${kept.id}` },
      size: 1,
      safe_to_manage: false,
      reason_not_safe: 'already managed',
      cinder_id: kept.id,
      extra_info: null,
    });
    expect(snaps.find((e) => e.reference['source-name'] === `snapshot-${snap.id}`)).toEqual({
      reference: { 'source-name': `snapshot-${snap.id}` },
      size: 1,
      safe_to_manage: true,
      source_reference: { 'source-name': `volume-${kept.id}` },
      reason_not_safe: null,
      cinder_id: null,
      extra_info: null,
    });
    const summary = (await c.get(`/manageable_volumes?${q}`)).body['manageable-volumes'];
    expect(Object.keys(summary[0]).sort()).toEqual(['reference', 'safe_to_manage', 'size']);
    const names = (entries: any[]): string[] => entries.map((e) => e.reference['source-name']);
    expect(names(summary)).toEqual([...names(summary)].sort().reverse());
    const asc = names(
      (await c.get(`/manageable_volumes?${q}&sort=reference:asc`)).body['manageable-volumes'],
    );
    expect(asc).toEqual([...asc].sort());
    const second = (await c.get(`/manageable_volumes?${q}&sort=reference:asc&limit=1&marker=${asc[0]}`)).body[
      'manageable-volumes'
    ];
    expect(names(second)).toEqual([asc[1]]);
    expect(
      names(
        (await c.get(`/manageable_volumes?${q}&sort=reference:asc&offset=1&limit=1`)).body[
          'manageable-volumes'
        ],
      ),
    ).toEqual([asc[1]]);
    const v2 = await c.raw('GET', `${bs.base}/v2/${c.caller.project}/os-volume-manage?${q}`);
    expect(v2.status).toBe(200);
    expect(names(v2.body['manageable-volumes'])).toContain(`volume-${gone.id}`);

    expect((await c.get('/manageable_volumes')).status).toBe(400);
    expect((await c.get('/manageable_volumes?host=nowhere@none')).status).toBe(404);
    expect((await c.get(`/manageable_volumes?${q}&sort=name`)).status).toBe(400);
    expect((await c.get(`/manageable_volumes?${q}&marker=volume-none`)).status).toBe(400);
    expect((await c.at('3.7').get(`/manageable_volumes?${q}`)).status).toBe(404);
    expect(
      (await new Client(bs.base, memberOf(c.caller.project)).get(`/manageable_snapshots?${q}`)).status,
    ).toBe(403);
  });

  it('snapshots: unmanage keeps the file; manage adopts it with name, description, metadata, size and quota', async () => {
    const c = freshAdmin();
    const v = await volume(c);
    const created = await c.post('/snapshots', { snapshot: { volume_id: v.id, name: 'orig' } });
    const snap = await c.waitFor('snapshots', created.body.snapshot.id, ['available']);
    const pattern = await scribble(`snapshot-${snap.id}`);
    expect((await usage(c))['snapshots']?.in_use).toBe(1);

    expect(
      (
        await new Client(bs.base, memberOf(c.caller.project)).post(`/snapshots/${snap.id}/action`, {
          'os-unmanage': {},
        })
      ).status,
    ).toBe(403);
    expect((await c.post(`/snapshots/${snap.id}/action`, { 'os-unmanage': {} })).status).toBe(202);
    await c.waitFor('snapshots', snap.id, ['deleted']);
    expect(existsSync(file(`snapshot-${snap.id}`))).toBe(true);
    expect(
      (await c.get('/snapshots/detail?all_tenants=1')).body.snapshots.map((s: any) => s.id),
    ).not.toContain(snap.id);
    expect((await usage(c))['snapshots']?.in_use).toBe(0);
    expect((await usage(c))['gigabytes']?.in_use).toBe(1);

    const metadata = { m1: 'v1', m2: 'v2' };
    const body = {
      snapshot: {
        volume_id: v.id,
        ref: { 'source-name': `snapshot-${snap.id}` },
        name: 'managed',
        description: 'desc',
        metadata,
      },
    };
    expect(
      (await new Client(bs.base, memberOf(c.caller.project)).post('/os-snapshot-manage', body)).status,
    ).toBe(403);
    const r = await c.at(null).post('/os-snapshot-manage', body);
    expect(r.status).toBe(202);
    expect(Object.keys(r.body.snapshot).sort()).toEqual([
      'created_at',
      'description',
      'id',
      'metadata',
      'name',
      'size',
      'status',
      'updated_at',
      'volume_id',
    ]);
    const got = await c.waitFor('snapshots', r.body.snapshot.id, ['available', 'error']);
    expect(got).toMatchObject({
      status: 'available',
      size: snap.size,
      volume_id: v.id,
      name: 'managed',
      description: 'desc',
      metadata,
    });
    expect(existsSync(file(`snapshot-${snap.id}`))).toBe(false);
    expect((await readBack(`snapshot-${got.id}`, pattern.length)).equals(pattern)).toBe(true);
    expect((await usage(c))['snapshots']?.in_use).toBe(1);
    expect((await usage(c))['gigabytes']?.in_use).toBe(2);

    // Managing the same file again is refused at once; a missing one fails on the back end.
    expect(
      (await c.post('/manageable_snapshots', { snapshot: { volume_id: v.id, ref: { 'source-id': got.id } } }))
        .status,
    ).toBe(400);
    const missing = await c.post('/manageable_snapshots', {
      snapshot: { volume_id: v.id, ref: { 'source-id': snap.id } },
    });
    expect(missing.status).toBe(202);
    expect((await c.waitFor('snapshots', missing.body.snapshot.id, ['available', 'error'])).status).toBe(
      'error',
    );
    expect((await c.post('/os-snapshot-manage', { snapshot: { volume_id: v.id } })).status).toBe(400);
    expect(
      (await c.post('/os-snapshot-manage', { snapshot: { volume_id: v.id, ref: {}, size: 1 } })).status,
    ).toBe(400);
    expect(
      (
        await c.post('/os-snapshot-manage', {
          snapshot: {
            volume_id: newProject().replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
            ref: {},
          },
        })
      ).status,
    ).toBe(404);

    // The adopted snapshot is an ordinary one: deleting it removes its file.
    expect((await c.delete(`/snapshots/${got.id}`)).status).toBe(202);
    await c.waitFor('snapshots', got.id, ['deleted']);
    expect(existsSync(file(`snapshot-${got.id}`))).toBe(false);
  });
});
