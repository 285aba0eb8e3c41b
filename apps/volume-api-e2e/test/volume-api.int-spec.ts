import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/;

describe.each(MODES)('block storage v3 over HTTP (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base, admin);
  }, 120000);

  afterAll(async () => {
    await bs?.close();
  });

  describe('versions and microversions', () => {
    it('lists versions with 300 and describes v3', async () => {
      const root = await api.raw('GET', `${bs.base}/`);
      expect(root.status).toBe(300);
      expect(root.body.versions.map((v: any) => [v.id, v.status, v.version, v.min_version])).toEqual([
        ['v2.0', 'SUPPORTED', '', ''],
        ['v3.0', 'CURRENT', '3.71', '3.0'],
      ]);
      const v3 = await api.raw('GET', `${bs.base}/v3/`);
      expect(v3.status).toBe(200);
      expect(v3.body.versions[0].links[1]).toEqual({ rel: 'self', href: `${bs.base}/v3/` });
      expect(v3.headers.get('openstack-api-version')).toBe('volume 3.71');
      expect(v3.headers.get('vary')).toBe('OpenStack-API-Version');
    });
    it.each([
      [null, 200, 'volume 3.0'],
      ['volume 3.45', 200, 'volume 3.45'],
      ['volume latest', 200, 'volume 3.71'],
      ['volume 3.72', 406, 'volume 3.0'],
      ['volume 3.x', 400, 'volume 3.0'],
      ['compute 2.1', 400, 'volume 3.0'],
    ])('header %p → %i', async (header, status, echoed) => {
      const r = await api.at(null).get('/types', header === null ? {} : { 'openstack-api-version': header });
      expect(r.status).toBe(status);
      expect(r.headers.get('openstack-api-version')).toBe(echoed);
      expect(r.headers.get('x-openstack-request-id')).toMatch(/^req-/);
      expect(r.headers.get('x-compute-request-id')).toBe(r.headers.get('x-openstack-request-id'));
      if (status === 406)
        expect(r.body).toEqual({
          computeFault: { code: 406, message: expect.stringContaining('Minimum is 3.0 and maximum is 3.71') },
        });
      if (status === 400) expect(Object.keys(r.body)).toEqual(['badRequest']);
    });
    it('serves URLs with and without the project segment and checks it', async () => {
      expect((await api.raw('GET', api.url('/types', false))).status).toBe(200);
      expect((await api.raw('GET', `${bs.base}/v3/${newProject()}/types`)).body).toEqual({
        badRequest: { code: 400, message: 'Malformed request url' },
      });
      expect((await api.raw('GET', `${bs.base}/v3/not-hex!/types`)).status).toBe(404);
      expect((await api.raw('GET', `${bs.base}/v3/${admin.project}/nothing-here`)).body).toEqual({
        itemNotFound: { code: 404, message: 'The resource could not be found.' },
      });
    });
    it('serves v2 at 3.0 behaviour without microversion headers', async () => {
      const r = await api.raw('GET', `${bs.base}/v2/${admin.project}/types`, undefined, {
        'openstack-api-version': 'volume 3.71',
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('openstack-api-version')).toBeNull();
      expect(r.body.volume_types.length).toBeGreaterThan(0);
      expect((await api.raw('GET', `${bs.base}/v2/`)).body.versions[0].id).toBe('v2.0');
    });
    it('refuses non-JSON bodies with 415', async () => {
      const r = await api.post('/volumes', '<volume/>', { 'content-type': 'application/xml' });
      expect(r.status).toBe(415);
      expect(r.body).toEqual({ badMediaType: { code: 415, message: 'Unsupported Content-Type' } });
      expect((await api.post('/volumes', 'size=1', { 'content-type': 'text/plain' })).status).toBe(415);
    });
    it('lists extensions', async () => {
      const r = await api.get('/extensions');
      expect(r.status).toBe(200);
      const aliases = r.body.extensions.map((e: any) => e.alias);
      for (const a of [
        'os-hosts',
        'os-types-manage',
        'os-volume-type-access',
        'scheduler-stats',
        'OS-SCH-HNT',
      ])
        expect(aliases).toContain(a);
      expect((await api.get('/extensions/os-hosts')).body.extension.name).toBe('Hosts');
      expect((await api.get('/extensions/nope')).status).toBe(404);
    });
  });

  describe('volume types', () => {
    it('has the __DEFAULT__ type and serves it as the default', async () => {
      const r = await api.get('/types/default');
      expect(r.status).toBe(200);
      expect(r.body.volume_type).toMatchObject({
        name: '__DEFAULT__',
        description: 'Default Volume Type',
        is_public: true,
      });
    });
    it('creates, shows, updates, lists and deletes a type', async () => {
      const created = await api.post('/types', {
        volume_type: { name: 'gold-e2e', description: 'fast', extra_specs: { volume_backend_name: 'file' } },
      });
      expect(created.status).toBe(200);
      const t = created.body.volume_type;
      expect(t).toEqual({
        id: expect.stringMatching(UUID),
        name: 'gold-e2e',
        description: 'fast',
        is_public: true,
        'os-volume-type-access:is_public': true,
        extra_specs: { volume_backend_name: 'file' },
      });
      expect((await api.post('/types', { volume_type: { name: 'gold-e2e' } })).status).toBe(409);
      const shown = await api.get(`/types/${t.id}`);
      expect(shown.body.volume_type).toEqual({ ...t, qos_specs_id: null });
      const updated = await api.put(`/types/${t.id}`, { volume_type: { description: 'faster' } });
      expect(updated.status).toBe(200);
      expect(Object.keys(updated.body.volume_type).sort()).toEqual([
        'description',
        'extra_specs',
        'id',
        'is_public',
        'name',
      ]);
      expect((await api.put(`/types/${t.id}`, { volume_type: {} })).status).toBe(400);
      expect((await api.put(`/types/${t.id}`, { volume_type: { name: '__DEFAULT__' } })).status).toBe(409);
      const listed = await api.get('/types?sort=name:asc');
      expect(listed.body.volume_types.map((x: any) => x.name)).toEqual(
        expect.arrayContaining(['__DEFAULT__', 'gold-e2e']),
      );
      const del = await api.delete(`/types/${t.id}`);
      expect([del.status, del.text]).toEqual([202, '']);
      expect((await api.get(`/types/${t.id}`)).status).toBe(404);
    });
    it('pages type lists with links', async () => {
      for (const n of ['page-a', 'page-b', 'page-c'])
        expect((await api.post('/types', { volume_type: { name: n } })).status).toBe(200);
      const first = await api.get('/types?limit=2&sort=name:asc');
      expect(first.body.volume_types).toHaveLength(2);
      const next = first.body.volume_type_links[0].href as string;
      expect(next).toContain('marker=');
      const second = await api.raw('GET', next);
      expect(second.status).toBe(200);
      expect(second.body.volume_types[0].name > first.body.volume_types[1].name).toBe(true);
      expect((await api.get('/types?limit=x')).body).toEqual({
        badRequest: { code: 400, message: 'limit param must be an integer' },
      });
      expect((await api.get('/types?sort=bogus')).status).toBe(400);
    });
    it('filters type lists by is_public for admins only', async () => {
      const priv = (
        await api.post('/types', {
          volume_type: { name: 'is-public-e2e', 'os-volume-type-access:is_public': false },
        })
      ).body.volume_type;
      const names = async (c: Client, q: string) =>
        (await c.get(`/types${q}`)).body.volume_types.map((t: any) => t.name);
      expect(await names(api, '')).not.toContain(priv.name);
      expect(await names(api, '?is_public=false')).toContain(priv.name);
      expect(await names(api, '?is_public=false')).not.toContain('__DEFAULT__');
      expect(await names(api, '?is_public=None')).toEqual(expect.arrayContaining([priv.name, '__DEFAULT__']));
      expect((await api.get('/types?is_public=maybe')).status).toBe(400);
      const member = api.as(memberOf(newProject()));
      expect(await names(member, '?is_public=false')).not.toContain(priv.name);
      expect((await member.get('/types?bogus=1')).status).toBe(400);
    });
    it('refuses type management to members and hides private types', async () => {
      const p = newProject();
      const member = api.as(memberOf(p));
      const denied = await member.post('/types', { volume_type: { name: 'x' } });
      expect(denied.status).toBe(403);
      expect(denied.body.forbidden).toEqual({
        code: 403,
        message: "Policy doesn't allow volume_extension:type_create to be performed.",
      });
      const priv = (
        await api.post('/types', {
          volume_type: { name: 'private-e2e', 'os-volume-type-access:is_public': false },
        })
      ).body.volume_type;
      expect((await member.get(`/types/${priv.id}`)).status).toBe(404);
      expect((await member.get('/types')).body.volume_types.map((t: any) => t.id)).not.toContain(priv.id);
      expect((await member.post('/volumes', { volume: { size: 1, volume_type: priv.id } })).status).toBe(404);
      expect((await api.post(`/types/${priv.id}/action`, { addProjectAccess: { project: p } })).status).toBe(
        202,
      );
      expect((await api.post(`/types/${priv.id}/action`, { addProjectAccess: { project: p } })).status).toBe(
        409,
      );
      expect((await api.get(`/types/${priv.id}/os-volume-type-access`)).body).toEqual({
        volume_type_access: [{ volume_type_id: priv.id, project_id: p }],
      });
      expect((await member.get(`/types/${priv.id}`)).status).toBe(200);
      expect((await member.get(`/types/${priv.id}`)).body.volume_type).not.toHaveProperty('qos_specs_id');
      expect(
        (await api.post(`/types/${priv.id}/action`, { removeProjectAccess: { project: p } })).status,
      ).toBe(202);
      expect(
        (await api.post(`/types/${priv.id}/action`, { removeProjectAccess: { project: p } })).status,
      ).toBe(404);
      expect((await member.get(`/types/${priv.id}`)).status).toBe(404);
      const pub = (await api.get('/types/default')).body.volume_type;
      expect((await api.post(`/types/${pub.id}/action`, { addProjectAccess: { project: p } })).status).toBe(
        400,
      );
      expect((await api.get(`/types/${pub.id}/os-volume-type-access`)).status).toBe(404);
    });
    it('manages extra specs', async () => {
      const t = (await api.post('/types', { volume_type: { name: 'specs-e2e' } })).body.volume_type;
      expect(
        (await api.post(`/types/${t.id}/extra_specs`, { extra_specs: { a: '1', multiattach: '<is> True' } }))
          .body,
      ).toEqual({ extra_specs: { a: '1', multiattach: '<is> True' } });
      expect((await api.get(`/types/${t.id}/extra_specs`)).body).toEqual({
        extra_specs: { a: '1', multiattach: '<is> True' },
      });
      expect((await api.get(`/types/${t.id}/extra_specs/a`)).body).toEqual({ a: '1' });
      expect((await api.put(`/types/${t.id}/extra_specs/a`, { a: '2' })).body).toEqual({ a: '2' });
      expect((await api.put(`/types/${t.id}/extra_specs/a`, { b: '2' })).status).toBe(400);
      expect(
        (await api.post(`/types/${t.id}/extra_specs`, { extra_specs: { cacheable: '<is> True' } })).status,
      ).toBe(400);
      const member = api.as(memberOf(newProject()));
      expect((await member.get(`/types/${t.id}/extra_specs`)).body).toEqual({
        extra_specs: { multiattach: '<is> True' },
      });
      expect((await member.get(`/types/${t.id}/extra_specs/a`)).status).toBe(404);
      expect((await api.delete(`/types/${t.id}/extra_specs/a`)).status).toBe(202);
      expect((await api.delete(`/types/${t.id}/extra_specs/a`)).status).toBe(404);
      expect(
        (await api.get(`/types/${newProject().slice(0, 8)}-0000-4000-8000-000000000000/extra_specs`)).status,
      ).toBe(404);
    });
    it('manages encryption types', async () => {
      const t = (await api.post('/types', { volume_type: { name: 'enc-e2e' } })).body.volume_type;
      expect((await api.get(`/types/${t.id}/encryption`)).body).toEqual({});
      const created = await api.post(`/types/${t.id}/encryption`, {
        encryption: { provider: 'luks', cipher: 'aes-xts-plain64', key_size: 256 },
      });
      expect(created.status).toBe(200);
      expect(created.body.encryption).toEqual({
        provider: 'luks',
        cipher: 'aes-xts-plain64',
        key_size: 256,
        control_location: 'front-end',
        volume_type_id: t.id,
        encryption_id: expect.stringMatching(UUID),
      });
      expect((await api.post(`/types/${t.id}/encryption`, { encryption: { provider: 'luks' } })).status).toBe(
        400,
      );
      const shown = (await api.get(`/types/${t.id}/encryption`)).body;
      expect(shown).toMatchObject({
        provider: 'luks',
        deleted: false,
        deleted_at: null,
        created_at: expect.stringMatching(TS),
      });
      expect((await api.get(`/types/${t.id}/encryption/provider`)).body).toEqual({ provider: 'luks' });
      expect((await api.get(`/types/${t.id}/encryption/nope`)).status).toBe(404);
      const encId = created.body.encryption.encryption_id;
      expect(
        (await api.put(`/types/${t.id}/encryption/${encId}`, { encryption: { key_size: 512 } })).body,
      ).toEqual({ encryption: { key_size: 512 } });
      const v = (await api.post('/volumes', { volume: { size: 1, volume_type: t.id } })).body.volume;
      expect(v.encrypted).toBe(true);
      expect(v.encryption_key_id).toMatch(UUID);
      expect((await api.delete(`/types/${t.id}/encryption/${encId}`)).status).toBe(400);
      await api.waitFor('volumes', v.id, ['available']);
      expect((await api.delete(`/volumes/${v.id}`)).status).toBe(202);
      await api.waitFor('volumes', v.id, ['deleted']);
      expect((await api.delete(`/types/${t.id}/encryption/${encId}`)).status).toBe(202);
      expect((await api.delete(`/types/${t.id}/encryption/${encId}`)).status).toBe(404);
      expect((await api.as(memberOf(newProject())).get(`/types/${t.id}/encryption`)).status).toBe(403);
    });
    it('manages project default types from 3.62', async () => {
      const p = newProject();
      const t = (await api.post('/types', { volume_type: { name: 'default-e2e' } })).body.volume_type;
      expect(
        (
          await api
            .at('3.61')
            .raw('PUT', `${bs.base}/v3/default-types/${p}`, { default_type: { volume_type: t.name } })
        ).status,
      ).toBe(404);
      const set = await api.raw('PUT', `${bs.base}/v3/default-types/${p}`, {
        default_type: { volume_type: t.name },
      });
      expect(set.status).toBe(200);
      expect(set.body).toEqual({ default_type: { project_id: p, volume_type_id: t.id } });
      expect(
        (
          await api.raw('PUT', `${bs.base}/v3/default-types/${p}`, {
            default_type: { volume_type: 'no-such-type' },
          })
        ).status,
      ).toBe(400);
      expect((await api.raw('GET', `${bs.base}/v3/default-types/${p}`)).body).toEqual({
        default_type: { project_id: p, volume_type_id: t.id },
      });
      expect((await api.raw('GET', `${bs.base}/v3/default-types`)).body.default_types).toContainEqual({
        project_id: p,
        volume_type_id: t.id,
      });
      const member = api.as(memberOf(p));
      expect((await member.get('/types/default')).body.volume_type.id).toBe(t.id);
      expect((await member.raw('GET', `${bs.base}/v3/default-types`)).status).toBe(403);
      const v = (await member.post('/volumes', { volume: { size: 1 } })).body.volume;
      expect(v.volume_type).toBe(t.name);
      expect((await api.delete(`/types/${t.id}`)).status).toBe(400);
      expect((await api.raw('DELETE', `${bs.base}/v3/default-types/${p}`)).status).toBe(204);
      expect((await api.raw('DELETE', `${bs.base}/v3/default-types/${p}`)).status).toBe(204);
      expect((await api.raw('GET', `${bs.base}/v3/default-types/${p}`)).status).toBe(404);
      expect((await member.get('/types/default')).body.volume_type.name).toBe('__DEFAULT__');
      expect((await api.delete(`/types/${t.id}`)).status).toBe(400);
      await member.waitFor('volumes', v.id, ['available']);
    });
    it('refuses to delete the installation default type', async () => {
      const d = (await api.get('/types/default')).body.volume_type;
      const r = await api.delete(`/types/${d.id}`);
      expect(r.status).toBe(400);
      expect(r.body.badRequest.message).toContain('can not be deleted');
    });
  });

  describe('volumes', () => {
    it('creates a volume that becomes available on a real sparse file', async () => {
      const p = newProject();
      const member = api.as(memberOf(p));
      const r = await member.post('/volumes', {
        volume: { size: 1, name: 'v1', description: 'd', metadata: { a: 'b' } },
      });
      expect(r.status).toBe(202);
      const v = r.body.volume;
      expect(v).toMatchObject({
        id: expect.stringMatching(UUID),
        status: 'creating',
        size: 1,
        name: 'v1',
        availability_zone: 'nova',
        volume_type: '__DEFAULT__',
        bootable: 'false',
        encrypted: false,
        multiattach: false,
        metadata: { a: 'b' },
        attachments: [],
        created_at: expect.stringMatching(TS),
      });
      expect(v).not.toHaveProperty('migration_status');
      expect(v).toHaveProperty('volume_type_id');
      expect(v.links[0]).toEqual({ rel: 'self', href: `${bs.base}/v3/${p}/volumes/${v.id}` });
      const ready = await member.waitFor('volumes', v.id, ['available']);
      expect(ready['os-vol-tenant-attr:tenant_id']).toBe(p);
      const st = await (await open(path.join(bs.volumeDir, `volume-${v.id}`), 'r')).stat();
      expect(st.size).toBe(1024 ** 3);
      expect(st.blocks * 512).toBeLessThan(1024 * 1024);
      const adminView = (await api.get(`/volumes/${v.id}`)).body.volume;
      expect(adminView['os-vol-host-attr:host']).toMatch(/@file#file$/);
      expect(adminView).toHaveProperty('migration_status', null);
      expect((await api.as(memberOf(newProject())).get(`/volumes/${v.id}`)).status).toBe(404);
    });
    it.each([
      [{ volume: { size: 0 } }, 400],
      [{ volume: { size: 'big' } }, 400],
      [{ volume: {} }, 400],
      [{ volume: { size: 1, volume_type: 'no-such-type' } }, 404],
      [{ volume: { size: 1, multiattach: true } }, 400],
      [{ volume: { size: 1, availability_zone: 'mars' } }, 400],
      [{ volume: { size: 1, bogus: 1 } }, 400],
      [{ volume: { size: 1, snapshot_id: '0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4' } }, 404],
      [{ volume: { size: 1, imageRef: '0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4' } }, 404],
      ['not json', 400],
    ])('refuses %p with %i', async (body, status) => {
      const r = await api.post('/volumes', body);
      expect(r.status).toBe(status);
      expect(Object.values(r.body as object)[0]).toMatchObject({ code: status, message: expect.any(String) });
    });
    it('enforces quotas with 413', async () => {
      const p = newProject();
      const member = api.as(memberOf(p));
      expect((await api.put(`/os-quota-sets/${p}`, { quota_set: { volumes: 1, gigabytes: 3 } })).status).toBe(
        200,
      );
      const big = await member.post('/volumes', { volume: { size: 4 } });
      expect(big.status).toBe(413);
      expect(big.body.overLimit.message).toMatch(/^VolumeSizeExceedsAvailableQuota: /);
      expect(big.headers.get('retry-after')).toBeNull();
      const ok = await member.post('/volumes', { volume: { size: 1 } });
      expect(ok.status).toBe(202);
      const second = await member.post('/volumes', { volume: { size: 1 } });
      expect(second.status).toBe(413);
      expect(second.body.overLimit.message).toMatch(/^VolumeLimitExceeded: /);
      const limits = (await member.get('/limits')).body.limits.absolute;
      expect(limits).toMatchObject({
        maxTotalVolumes: 1,
        maxTotalVolumeGigabytes: 3,
        totalVolumesUsed: 1,
        totalGigabytesUsed: 1,
      });
      expect((await api.get(`/os-quota-sets/${p}?usage=true`)).body.quota_set.volumes).toEqual({
        limit: 1,
        in_use: 1,
        reserved: 0,
      });
      await member.waitFor('volumes', ok.body.volume.id, ['available']);
      expect((await member.delete(`/volumes/${ok.body.volume.id}`)).status).toBe(202);
      await member.waitFor('volumes', ok.body.volume.id, ['deleted']);
      expect((await member.get('/limits')).body.limits.absolute.totalVolumesUsed).toBe(0);
      expect((await member.put(`/os-quota-sets/${p}`, { quota_set: { volumes: 5 } })).status).toBe(403);
    });
    it('answers quota defaults for a project (no 500 on PostgreSQL)', async () => {
      const p = newProject();
      const r = await api.get(`/os-quota-sets/${p}/defaults`);
      expect(r.status).toBe(200);
      expect(r.body.quota_set).toMatchObject({
        id: p,
        volumes: expect.any(Number),
        gigabytes: expect.any(Number),
      });
    });
    it('lists with filters, sorting, paging and counts', async () => {
      const p = newProject();
      const member = api.as(memberOf(p));
      const ids: string[] = [];
      for (const [i, name] of ['alpha', 'beta', 'gamma'].entries()) {
        const r = await member.post('/volumes', {
          volume: { size: i + 1, name, metadata: { idx: String(i) } },
        });
        ids.push(r.body.volume.id);
      }
      for (const id of ids) await member.waitFor('volumes', id, ['available']);
      const summary = await member.get('/volumes');
      expect(summary.body.volumes.map((v: any) => Object.keys(v).sort())).toEqual([
        ['id', 'links', 'name'],
        ['id', 'links', 'name'],
        ['id', 'links', 'name'],
      ]);
      expect(summary.body.volumes.map((v: any) => v.name)).toEqual(['gamma', 'beta', 'alpha']);
      expect(
        (await member.get('/volumes/detail?sort=name:asc')).body.volumes.map((v: any) => v.name),
      ).toEqual(['alpha', 'beta', 'gamma']);
      expect((await member.get('/volumes/detail?name=beta')).body.volumes.map((v: any) => v.id)).toEqual([
        ids[1],
      ]);
      expect((await member.get('/volumes/detail?size=3')).body.volumes.map((v: any) => v.name)).toEqual([
        'gamma',
      ]);
      expect(
        (await member.get(`/volumes/detail?metadata=${encodeURIComponent('{"idx":"0"}')}`)).body.volumes.map(
          (v: any) => v.name,
        ),
      ).toEqual(['alpha']);
      expect(
        (await member.get('/volumes/detail?status=available&availability_zone=nova')).body.volumes,
      ).toHaveLength(3);
      const page = await member.get('/volumes/detail?limit=2&sort=name:asc&with_count=true');
      expect(page.body.count).toBe(3);
      expect(page.body.volumes.map((v: any) => v.name)).toEqual(['alpha', 'beta']);
      const next = await member.raw('GET', page.body.volumes_links[0].href);
      expect(next.body.volumes.map((v: any) => v.name)).toEqual(['gamma']);
      expect(next.body).not.toHaveProperty('volumes_links');
      expect((await member.at('3.44').get('/volumes?with_count=true')).body).not.toHaveProperty('count');
      const future = new Date(Date.now() + 3600_000).toISOString().slice(0, 19);
      expect((await member.at('3.60').get(`/volumes/detail?created_at=gt:${future}`)).body.volumes).toEqual(
        [],
      );
      expect(
        (await member.at('3.60').get('/volumes/detail?created_at=gt:2000-01-01T00:00:00')).body.volumes,
      ).toHaveLength(3);
      expect((await member.at('3.60').get('/volumes/detail?created_at=after:2000-01-01')).status).toBe(400);
      expect((await member.get('/volumes/detail?foo=bar')).body).toEqual({
        badRequest: {
          code: 400,
          message: 'Invalid input received: Invalid filters foo are found in query options.',
        },
      });
      expect((await member.at('3.30').get('/volumes/detail?foo=bar')).body.volumes).toHaveLength(3);
      expect((await member.get('/volumes/detail?bootable=maybe')).status).toBe(400);
      expect((await member.get('/volumes/detail?marker=0b7c9d2e-1f3a-4b5c-8d6e-7f8091a2b3c4')).status).toBe(
        404,
      );
      expect((await member.get('/volumes/detail?all_tenants=1')).body.volumes).toHaveLength(3);
      const all = await api.get(`/volumes/detail?all_tenants=1&project_id=${p}`);
      expect(all.body.volumes).toHaveLength(3);
      expect((await member.at('3.12').get('/volumes/summary')).body).toEqual({
        'volume-summary': { total_count: 3, total_size: 6 },
      });
    });
    it('updates, manages metadata, extends and deletes', async () => {
      const member = api.as(memberOf(newProject()));
      const v = (await member.post('/volumes', { volume: { size: 1 } })).body.volume;
      await member.waitFor('volumes', v.id, ['available']);
      expect((await member.put(`/volumes/${v.id}`, { volume: { name: 'renamed' } })).body.volume.name).toBe(
        'renamed',
      );
      expect((await member.put(`/volumes/${v.id}`, { volume: {} })).status).toBe(400);
      expect((await member.post(`/volumes/${v.id}/metadata`, { metadata: { k1: 'v1' } })).body).toEqual({
        metadata: { k1: 'v1' },
      });
      expect((await member.post(`/volumes/${v.id}/metadata`, { metadata: { k2: 'v2' } })).body).toEqual({
        metadata: { k1: 'v1', k2: 'v2' },
      });
      expect((await member.get(`/volumes/${v.id}/metadata/k1`)).body).toEqual({ meta: { k1: 'v1' } });
      expect((await member.put(`/volumes/${v.id}/metadata/k1`, { meta: { k1: 'x' } })).body).toEqual({
        meta: { k1: 'x' },
      });
      expect((await member.put(`/volumes/${v.id}/metadata/k1`, { meta: { k9: 'x' } })).status).toBe(400);
      expect((await member.delete(`/volumes/${v.id}/metadata/k2`)).status).toBe(200);
      expect((await member.delete(`/volumes/${v.id}/metadata/k2`)).status).toBe(404);
      const meta = await member.get(`/volumes/${v.id}/metadata`);
      expect(meta.body).toEqual({ metadata: { k1: 'x' } });
      expect(meta.headers.get('etag')).toBe(createHash('md5').update(meta.text).digest('hex'));
      const stale = await member.put(
        `/volumes/${v.id}/metadata`,
        { metadata: { only: '0' } },
        { 'if-match': 'not-the-etag' },
      );
      expect([stale.status, stale.text]).toEqual([412, '']);
      expect(
        (
          await member.put(
            `/volumes/${v.id}/metadata`,
            { metadata: { only: '1' } },
            { 'if-match': meta.headers.get('etag')! },
          )
        ).body,
      ).toEqual({ metadata: { only: '1' } });
      expect((await member.post(`/volumes/${v.id}/action`, { 'os-extend': { new_size: 1 } })).status).toBe(
        400,
      );
      expect((await member.post(`/volumes/${v.id}/action`, { 'os-fly': {} })).body.badRequest.message).toBe(
        'There is no such action: os-fly',
      );
      expect((await member.post(`/volumes/${v.id}/action`, { 'os-extend': { new_size: 2 } })).status).toBe(
        202,
      );
      const extended = await member.waitFor('volumes', v.id, ['available']);
      expect(extended.size).toBe(2);
      const st = await (await open(path.join(bs.volumeDir, `volume-${v.id}`), 'r')).stat();
      expect(st.size).toBe(2 * 1024 ** 3);
      expect(
        (await member.post(`/volumes/${v.id}/action`, { 'os-reset_status': { status: 'error' } })).status,
      ).toBe(403);
      expect((await member.delete(`/volumes/${v.id}`)).status).toBe(202);
      await member.waitFor('volumes', v.id, ['deleted']);
      await expect(open(path.join(bs.volumeDir, `volume-${v.id}`), 'r')).rejects.toThrow(/ENOENT/);
    });
    it('clones real bytes from a volume and from a snapshot', async () => {
      const member = api.as(memberOf(newProject()));
      const src = (await member.post('/volumes', { volume: { size: 1 } })).body.volume;
      await member.waitFor('volumes', src.id, ['available']);
      const file = path.join(bs.volumeDir, `volume-${src.id}`);
      const fh = await open(file, 'r+');
      const pattern = Buffer.from(Array.from({ length: 3 * 1024 * 1024 + 17 }, (_, i) => (i * 31 + 7) % 251));
      await fh.write(pattern, 0, pattern.length, 5 * 1024 * 1024);
      await fh.write(Buffer.from('tail'), 0, 4, 1024 ** 3 - 4);
      await fh.close();
      const digest = async (f: string, end?: number) => {
        const h = createHash('sha256');
        for await (const chunk of createReadStream(f, {
          end: end === undefined ? undefined : end - 1,
          highWaterMark: 4 * 1024 * 1024,
        }))
          h.update(chunk as Buffer);
        return h.digest('hex');
      };
      const clone = (await member.post('/volumes', { volume: { source_volid: src.id } })).body.volume;
      expect(clone.size).toBe(1);
      await member.waitFor('volumes', clone.id, ['available']);
      expect(await digest(path.join(bs.volumeDir, `volume-${clone.id}`))).toBe(await digest(file));
      expect((await member.post('/volumes', { volume: { source_volid: src.id, size: 0 } })).status).toBe(400);
      const snap = await member.post('/snapshots', {
        snapshot: { volume_id: src.id, name: 's1', metadata: { x: 'y' } },
      });
      expect(snap.status).toBe(202);
      expect(snap.body.snapshot).toMatchObject({
        status: 'creating',
        size: 1,
        volume_id: src.id,
        name: 's1',
        metadata: { x: 'y' },
      });
      const s = await member.waitFor('snapshots', snap.body.snapshot.id, ['available']);
      expect(s['os-extended-snapshot-attributes:progress']).toBe('100%');
      const fromSnap = (await member.post('/volumes', { volume: { snapshot_id: s.id, size: 2 } })).body
        .volume;
      await member.waitFor('volumes', fromSnap.id, ['available']);
      const restored = path.join(bs.volumeDir, `volume-${fromSnap.id}`);
      expect((await stat(restored)).size).toBe(2 * 1024 ** 3);
      expect(await digest(restored, 1024 ** 3)).toBe(await digest(file));
      expect((await member.delete(`/volumes/${src.id}`)).status).toBe(400);
      expect((await member.get('/snapshots/detail')).body.snapshots.map((x: any) => x.id)).toEqual([s.id]);
      expect((await member.put(`/snapshots/${s.id}`, { snapshot: { name: 's2' } })).body.snapshot.name).toBe(
        's2',
      );
      expect((await member.delete(`/snapshots/${s.id}`)).status).toBe(202);
      await member.waitFor('snapshots', s.id, ['deleted']);
      expect((await member.delete(`/volumes/${src.id}`)).status).toBe(202);
      await member.waitFor('volumes', src.id, ['deleted']);
    }, 60000);
    it('places volumes by type capabilities and errors without a valid back end', async () => {
      const t = (await api.post('/types', { volume_type: { name: 'needs-cc', extra_specs: { cc: 'yes' } } }))
        .body.volume_type;
      const v = (await api.post('/volumes', { volume: { size: 1, volume_type: t.name } })).body.volume;
      await api.waitFor('volumes', v.id, ['error']);
      const ok = (
        await api.post('/types', {
          volume_type: {
            name: 'file-only',
            extra_specs: {
              volume_backend_name: 'file',
              'capabilities:thin_provisioning_support': '<is> True',
              'vendor:x': 'ignored',
            },
          },
        })
      ).body.volume_type;
      const v2 = (await api.post('/volumes', { volume: { size: 1, volume_type: ok.id } })).body.volume;
      await api.waitFor('volumes', v2.id, ['available']);
      const pools = await api.get('/scheduler-stats/get_pools?detail=true');
      expect(pools.body.pools[0].capabilities).toMatchObject({
        volume_backend_name: 'file',
        thin_provisioning_support: true,
        total_capacity_gb: expect.any(Number),
      });
      expect((await api.as(memberOf(newProject())).get('/scheduler-stats/get_pools')).status).toBe(403);
      expect((await api.get('/os-availability-zone')).body).toEqual({
        availabilityZoneInfo: [{ zoneName: 'nova', zoneState: { available: true } }],
      });
    });
  });
});
