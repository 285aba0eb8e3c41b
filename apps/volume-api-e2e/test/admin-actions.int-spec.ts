import { randomBytes, randomUUID } from 'node:crypto';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

const bad = (message: string) => ({ badRequest: { code: 400, message } });
const notFound = (message: string) => ({ itemNotFound: { code: 404, message } });

/**
 * Operator surfaces (os-services, os-hosts, capabilities, quota classes, user messages) and the
 * volume/snapshot actions found missing by tempest: reserve/unreserve/detach, retype, revert,
 * os-update_snapshot_status, snapshot force-delete while deleting (spec 7.12, 7.13, 8.1, 8.2).
 */
describe.each(MODES)('admin surfaces and volume actions (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let member: Client;
  let backend: string;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base, admin);
    member = api.as(memberOf(newProject()));
    const pools = await api.get('/scheduler-stats/get_pools');
    backend = String(pools.body.pools[0].name).split('#')[0] ?? '';
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  });

  async function volume(c: Client, body: Record<string, unknown> = {}): Promise<string> {
    const r = await c.post('/volumes', { volume: { size: 1, ...body } });
    expect(r.status).toBe(202);
    await c.waitFor('volumes', r.body.volume.id, ['available']);
    return r.body.volume.id;
  }

  async function snapshot(c: Client, volumeId: string): Promise<string> {
    const r = await c.post('/snapshots', { snapshot: { volume_id: volumeId } });
    expect(r.status).toBe(202);
    await c.waitFor('snapshots', r.body.snapshot.id, ['available'], 90000);
    return r.body.snapshot.id;
  }

  describe('os-services and os-hosts', () => {
    it('lists the scheduler and the volume back end as up, filters by host part and binary', async () => {
      const r = await api.get('/os-services');
      expect(r.status).toBe(200);
      const volumeSvc = r.body.services.find((s: any) => s.binary === 'cinder-volume');
      expect(volumeSvc).toMatchObject({
        host: backend,
        status: 'enabled',
        state: 'up',
        frozen: false,
        disabled_reason: null,
        cluster: null,
        backend_state: 'up',
      });
      expect(r.body.services.map((s: any) => s.binary)).toContain('cinder-scheduler');
      const byHost = await api.get(
        `/os-services?host=${encodeURIComponent(backend.split('@')[0] ?? '')}&binary=cinder-volume`,
      );
      expect(byHost.body.services.map((s: any) => [s.binary, s.host])).toEqual([['cinder-volume', backend]]);
      expect((await member.get('/os-services')).status).toBe(403);
    });

    it('disables with a reason, enables, and refuses unknown hosts, binaries and empty reasons', async () => {
      const dis = await api.put('/os-services/disable-log-reason', {
        host: backend,
        binary: 'cinder-volume',
        disabled_reason: 'maintenance window',
      });
      expect([dis.status, dis.body]).toEqual([
        200,
        {
          host: backend,
          service: '',
          binary: 'cinder-volume',
          status: 'disabled',
          disabled: true,
          disabled_reason: 'maintenance window',
        },
      ]);
      const listed = (await api.get('/os-services?binary=cinder-volume')).body.services[0];
      expect(listed).toMatchObject({ status: 'disabled', disabled_reason: 'maintenance window' });
      expect((await api.get('/os-hosts')).body.hosts.map((h: any) => h.service)).not.toContain(
        'cinder-volume',
      );
      expect((await api.get(`/os-hosts/${encodeURIComponent(backend)}`)).status).toBe(404);
      const en = await api.put('/os-services/enable', { host: backend, binary: 'cinder-volume' });
      expect([en.status, en.body]).toEqual([
        200,
        { host: backend, service: '', binary: 'cinder-volume', status: 'enabled', disabled: false },
      ]);
      expect((await api.get('/os-services?binary=cinder-volume')).body.services[0]).toMatchObject({
        status: 'enabled',
        disabled_reason: null,
      });
      const unknownHost = await api.put('/os-services/enable', {
        host: 'invalid_host',
        binary: 'cinder-volume',
      });
      expect([unknownHost.status, unknownHost.body]).toEqual([
        404,
        notFound('Service None could not be found on host invalid_host.'),
      ]);
      expect(
        (await api.put('/os-services/disable', { host: backend, binary: 'invalid_binary' })).status,
      ).toBe(404);
      expect(
        (
          await api.put('/os-services/disable-log-reason', {
            host: backend,
            binary: 'cinder-volume',
            disabled_reason: null,
          })
        ).status,
      ).toBe(400);
      expect((await api.put('/os-services/reboot', { host: backend })).status).toBe(404);
    });

    it('places no new volume on a disabled back end; enabled again, it does', async () => {
      expect((await api.put('/os-services/disable', { host: backend, binary: 'cinder-volume' })).status).toBe(
        200,
      );
      const refused = await member.post('/volumes', { volume: { size: 1 } });
      expect(refused.status).toBe(202);
      await member.waitFor('volumes', refused.body.volume.id, ['error']);
      expect((await api.put('/os-services/enable', { host: backend, binary: 'cinder-volume' })).status).toBe(
        200,
      );
      await volume(member);
    });

    it('places no new volume on a frozen back end (Cinder schedules from services neither disabled nor frozen)', async () => {
      expect((await api.put('/os-services/freeze', { host: backend })).status).toBe(200);
      const refused = await member.post('/volumes', { volume: { size: 1 } });
      expect(refused.status).toBe(202);
      await member.waitFor('volumes', refused.body.volume.id, ['error']);
      expect((await api.put('/os-services/thaw', { host: backend })).status).toBe(200);
      await volume(member);
    });

    it('freezes and thaws a volume host; an unknown host is 400', async () => {
      expect((await api.put('/os-services/freeze', { host: backend })).status).toBe(200);
      expect((await api.get('/os-services?binary=cinder-volume')).body.services[0].frozen).toBe(true);
      expect((await api.put('/os-services/freeze', { host: backend })).status).toBe(400);
      expect((await api.put('/os-services/thaw', { host: backend })).status).toBe(200);
      expect((await api.get('/os-services?binary=cinder-volume')).body.services[0].frozen).toBe(false);
      const r = await api.put('/os-services/freeze', { host: 'invalid_host' });
      expect([r.status, r.body]).toEqual([
        400,
        bad('Invalid input received: No service found with host=invalid_host'),
      ]);
    });

    it('lists at least two hosts and shows the usage of the volume host per project', async () => {
      const hosts = (await api.get('/os-hosts')).body.hosts;
      expect(hosts.length).toBeGreaterThanOrEqual(2);
      expect(hosts.find((h: any) => h.service === 'cinder-volume')).toMatchObject({
        host_name: backend,
        'service-status': 'available',
        'service-state': 'enabled',
        zone: 'nova',
      });
      const owner = api.as(memberOf(newProject()));
      const v = await volume(owner, { size: 2 });
      await snapshot(owner, v);
      const shown = await api.get(`/os-hosts/${encodeURIComponent(backend)}`);
      expect(shown.status).toBe(200);
      expect(shown.body.host[0].resource).toMatchObject({ host: backend, project: '(total)' });
      expect(shown.body.host.find((h: any) => h.resource.project === owner.caller.project).resource).toEqual({
        host: backend,
        project: owner.caller.project,
        volume_count: '1',
        total_volume_gb: '2',
        snapshot_count: '1',
        total_snapshot_gb: '2',
      });
      expect((await api.get('/os-hosts/no-such-host')).status).toBe(404);
    });
  });

  describe('capabilities', () => {
    it('answers for host@backend (also with #pool) and 404 for an unknown back end', async () => {
      const r = await api.get(`/capabilities/${backend}`);
      expect(r.status).toBe(200);
      const pool = (await api.get('/scheduler-stats/get_pools?detail=true')).body.pools[0].capabilities;
      expect(r.body).toMatchObject({
        namespace: `OS::Storage::Capabilities::${backend}`,
        vendor_name: pool.vendor_name,
        volume_backend_name: pool.volume_backend_name,
        storage_protocol: pool.storage_protocol,
        replication_targets: [],
      });
      expect(Object.keys(r.body.properties)).toContain('thin_provisioning');
      const missing = await api.get('/capabilities/nowhere@nothing');
      expect([missing.status, missing.body]).toEqual([404, notFound("Can't find service: nowhere@nothing")]);
    });
  });

  describe('quota classes', () => {
    it('shows and updates the default class, which project defaults follow', async () => {
      const shown = await api.get('/os-quota-class-sets/default');
      expect(shown.status).toBe(200);
      expect(shown.body.quota_class_set).toMatchObject({
        id: 'default',
        volumes: expect.any(Number),
        gigabytes: expect.any(Number),
      });
      const before = shown.body.quota_class_set.backups;
      const up = await api.put('/os-quota-class-sets/default', { quota_class_set: { backups: before + 3 } });
      expect(up.status).toBe(200);
      expect(up.body.quota_class_set.backups).toBe(before + 3);
      expect(up.body.quota_class_set.id).toBeUndefined();
      const p = newProject();
      expect((await api.get(`/os-quota-sets/${p}/defaults`)).body.quota_set.backups).toBe(before + 3);
      expect(
        (await api.put('/os-quota-class-sets/default', { quota_class_set: { nonsense: 1 } })).body,
      ).toEqual(bad('Bad key(s) in quota set: nonsense'));
      expect(
        (await api.put('/os-quota-class-sets/default', { quota_class_set: { backups: before } })).status,
      ).toBe(200);
      expect((await member.get('/os-quota-class-sets/default')).status).toBe(403);
    });
  });

  describe('user messages', () => {
    it('records a message when no back end can take a volume; show, list, delete (204), then 404', async () => {
      const t = await api.post('/types', {
        volume_type: {
          name: `bogus-${randomBytes(3).toString('hex')}`,
          extra_specs: { storage_protocol: 'carrier-pigeon' },
        },
      });
      expect(t.status).toBe(200);
      const c = api.as(memberOf(newProject()));
      const r = await c.post('/volumes', { volume: { size: 1, volume_type: t.body.volume_type.id } });
      expect(r.status).toBe(202);
      await c.waitFor('volumes', r.body.volume.id, ['error']);
      const list = await c.get('/messages');
      expect(list.status).toBe(200);
      const m = list.body.messages.find((x: any) => x.resource_uuid === r.body.volume.id);
      expect(m).toMatchObject({
        event_id: 'VOLUME_VOLUME_001_003',
        user_message: 'schedule allocate volume:Could not find any available weighted backend.',
        message_level: 'ERROR',
        resource_type: 'VOLUME',
      });
      expect((await c.get(`/messages/${m.id}`)).body.message).toEqual(m);
      expect((await api.as(memberOf(newProject())).get(`/messages/${m.id}`)).status).toBe(404);
      expect((await c.at('3.0').get('/messages')).status).toBe(404);
      const second = await c.post('/volumes', { volume: { size: 1, volume_type: t.body.volume_type.id } });
      await c.waitFor('volumes', second.body.volume.id, ['error']);
      const page = await c.get('/messages?limit=1');
      expect(page.body.messages.map((x: any) => x.resource_uuid)).toEqual([second.body.volume.id]);
      expect(page.body.messages_links[0].href).toContain(`marker=${page.body.messages[0].id}`);
      const next = await c.get(`/messages?limit=1&marker=${page.body.messages[0].id}`);
      expect(next.body.messages.map((x: any) => x.id)).toEqual([m.id]);
      expect(next.body.messages_links).toBeUndefined();
      expect(
        (await c.get(`/messages?resource_uuid=${r.body.volume.id}`)).body.messages.map((x: any) => x.id),
      ).toEqual([m.id]);
      expect((await c.at('3.4').get('/messages?limit=1')).body.messages).toHaveLength(2);
      expect((await c.delete(`/messages/${m.id}`)).status).toBe(204);
      expect((await c.get(`/messages/${m.id}`)).body).toEqual(
        notFound(`Message ${m.id} could not be found.`),
      );
    });
  });

  describe('volume actions', () => {
    it('reserves (available → attaching), refuses a second reserve, unreserves; unknown volumes are 404', async () => {
      const v = await volume(member);
      expect((await member.post(`/volumes/${v}/action`, { 'os-reserve': {} })).status).toBe(202);
      expect((await member.get(`/volumes/${v}`)).body.volume.status).toBe('attaching');
      const again = await member.post(`/volumes/${v}/action`, { 'os-reserve': {} });
      expect([again.status, again.body]).toEqual([
        400,
        bad('Invalid volume: Volume status must be available to reserve, but the status is attaching.'),
      ]);
      expect((await member.post(`/volumes/${v}/action`, { 'os-unreserve': {} })).status).toBe(202);
      expect((await member.get(`/volumes/${v}`)).body.volume.status).toBe('available');
      const id = randomUUID();
      for (const action of ['os-reserve', 'os-unreserve', 'os-detach']) {
        expect((await member.post(`/volumes/${id}/action`, { [action]: {} })).body).toEqual(
          notFound(`Volume ${id} could not be found.`),
        );
      }
      expect((await member.post('/volumes/xxx/action', { 'os-detach': {} })).status).toBe(404);
      const begin = await member.post(`/volumes/${v}/action`, { 'os-begin_detaching': {} });
      expect(begin.status).toBe(400);
    });

    it('answers 404 for collection URLs with a trailing slash, like Cinder', async () => {
      expect((await member.get('/volumes/')).body).toEqual(notFound('The resource could not be found.'));
      expect((await member.get('/snapshots/')).status).toBe(404);
      expect((await member.get('/volumes')).status).toBe(200);
    });

    it('retypes in place, moving the per-type quota; refuses the same type and unknown types', async () => {
      const suffix = randomBytes(3).toString('hex');
      const a = (await api.post('/types', { volume_type: { name: `rt-a-${suffix}` } })).body.volume_type;
      const b = (await api.post('/types', { volume_type: { name: `rt-b-${suffix}` } })).body.volume_type;
      const c = api.as(memberOf(newProject()));
      const v = await volume(c, { volume_type: a.name, size: 2 });
      const r = await c.post(`/volumes/${v}/action`, {
        'os-retype': { new_type: b.name, migration_policy: 'never' },
      });
      expect(r.status).toBe(202);
      const shown = (await api.get(`/volumes/${v}`)).body.volume;
      expect([shown.volume_type, shown.status, shown.migration_status]).toEqual([b.name, 'available', null]);
      const quota = (await api.get(`/os-quota-sets/${c.caller.project}?usage=true`)).body.quota_set;
      expect([quota[`volumes_${a.name}`].in_use, quota[`gigabytes_${a.name}`].in_use]).toEqual([0, 0]);
      expect([
        quota[`volumes_${b.name}`].in_use,
        quota[`gigabytes_${b.name}`].in_use,
        quota.volumes.in_use,
        quota.gigabytes.in_use,
      ]).toEqual([1, 2, 1, 2]);
      const same = await c.post(`/volumes/${v}/action`, { 'os-retype': { new_type: b.id } });
      expect(same.status).toBe(400);
      expect(same.body.badRequest.message).toMatch(
        /^Invalid volume: Retype needs volume to be in available or in-use state/,
      );
      expect(
        (await c.post(`/volumes/${v}/action`, { 'os-retype': { new_type: 'no-such-type' } })).body,
      ).toEqual(notFound('Volume type with name no-such-type could not be found.'));
      expect(
        (
          await c.post(`/volumes/${v}/action`, {
            'os-retype': { new_type: b.name, migration_policy: 'sometimes' },
          })
        ).status,
      ).toBe(400);
      expect((await c.post(`/volumes/${v}/action`, { 'os-retype': {} })).status).toBe(400);
    });

    it('leaves the type when no back end can satisfy the new type (policy never or on-demand); quota over the new type is 413', async () => {
      const suffix = randomBytes(3).toString('hex');
      const odd = (
        await api.post('/types', {
          volume_type: { name: `rt-odd-${suffix}`, extra_specs: { storage_protocol: 'carrier-pigeon' } },
        })
      ).body.volume_type;
      const full = (await api.post('/types', { volume_type: { name: `rt-full-${suffix}` } })).body
        .volume_type;
      const c = api.as(memberOf(newProject()));
      const v = await volume(c);
      const before = (await c.get(`/volumes/${v}`)).body.volume.volume_type;
      expect((await c.post(`/volumes/${v}/action`, { 'os-retype': { new_type: odd.name } })).status).toBe(
        202,
      );
      expect((await c.get(`/volumes/${v}`)).body.volume).toMatchObject({
        volume_type: before,
        status: 'available',
      });
      // on-demand, but no pool anywhere satisfies the type: Cinder's scheduler finds no valid host
      // and the type stays (no migration starts).
      expect(
        (
          await c.post(`/volumes/${v}/action`, {
            'os-retype': { new_type: odd.name, migration_policy: 'on-demand' },
          })
        ).status,
      ).toBe(202);
      expect((await api.get(`/volumes/${v}`)).body.volume).toMatchObject({
        volume_type: before,
        status: 'available',
        migration_status: null,
      });
      expect(
        (await api.put(`/os-quota-sets/${c.caller.project}`, { quota_set: { [`volumes_${full.name}`]: 0 } }))
          .status,
      ).toBe(200);
      expect((await c.post(`/volumes/${v}/action`, { 'os-retype': { new_type: full.name } })).status).toBe(
        413,
      );
      expect((await c.get(`/volumes/${v}`)).body.volume).toMatchObject({
        volume_type: before,
        status: 'available',
      });
    });

    it('reverts a volume to its latest snapshot with the snapshot bytes (3.40)', async () => {
      const c = member.at('3.40');
      const v = await volume(c);
      const file = path.join(bs.volumeDir, `volume-${v}`);
      const original = randomBytes(4096);
      let fh = await open(file, 'r+');
      await fh.write(original, 0, original.length, 8192);
      await fh.close();
      const s = await snapshot(c, v);
      fh = await open(file, 'r+');
      await fh.write(randomBytes(4096), 0, 4096, 8192);
      await fh.close();
      expect((await c.at('3.39').post(`/volumes/${v}/action`, { revert: { snapshot_id: s } })).body).toEqual(
        notFound('API version 3.39 is not supported on this method.'),
      );
      const notLatest = await c.post(`/volumes/${v}/action`, { revert: { snapshot_id: randomUUID() } });
      expect(notLatest.status).toBe(400);
      expect((await c.post(`/volumes/${v}/action`, { revert: { snapshot_id: s } })).status).toBe(202);
      await c.waitFor('volumes', v, ['available'], 90000);
      await c.waitFor('snapshots', s, ['available'], 90000);
      fh = await open(file, 'r');
      const after = Buffer.alloc(4096);
      await fh.read(after, 0, 4096, 8192);
      const size = (await fh.stat()).size;
      await fh.close();
      expect(after.equals(original)).toBe(true);
      expect(size).toBe(1024 ** 3);
      // A reserved (attaching) volume cannot be reverted: 409.
      await c.post(`/volumes/${v}/action`, { 'os-reserve': {} });
      const busy = await c.post(`/volumes/${v}/action`, { revert: { snapshot_id: s } });
      expect([busy.status, busy.body.conflictingRequest?.message]).toEqual([
        409,
        `Invalid volume: Can't revert volume ${v} to its latest snapshot ${s}. Volume's status must be 'available'.`,
      ]);
      await c.post(`/volumes/${v}/action`, { 'os-unreserve': {} });
    });
  });

  describe('snapshot actions', () => {
    it('answers 404 for a snapshot create without volume_id', async () => {
      const r = await member.post('/snapshots', { snapshot: { volume_id: null, name: 'x' } });
      expect([r.status, r.body]).toEqual([404, notFound('Volume None could not be found.')]);
    });

    it('force-deletes a snapshot that is already deleting', async () => {
      const v = await volume(member);
      const s = await snapshot(member, v);
      expect(
        (await api.post(`/snapshots/${s}/action`, { 'os-reset_status': { status: 'deleting' } })).status,
      ).toBe(202);
      expect((await api.post(`/snapshots/${s}/action`, { 'os-force_delete': {} })).status).toBe(202);
      await member.waitFor('snapshots', s, ['deleted']);
    });

    it('updates status and progress from creating; refuses other transitions with Cinder messages', async () => {
      const v = await volume(member);
      const s = await snapshot(member, v);
      const fromAvailable = await member.post(`/snapshots/${s}/action`, {
        'os-update_snapshot_status': { status: 'error' },
      });
      expect([fromAvailable.status, fromAvailable.body]).toEqual([
        400,
        bad('Snapshot status available not allowed for update_snapshot_status'),
      ]);
      await api.post(`/snapshots/${s}/action`, { 'os-reset_status': { status: 'creating' } });
      const wrong = await member.post(`/snapshots/${s}/action`, {
        'os-update_snapshot_status': { status: 'deleting' },
      });
      expect(wrong.body).toEqual(
        bad('Provided snapshot status deleting not allowed for snapshot with status creating.'),
      );
      expect(
        (
          await member.post(`/snapshots/${s}/action`, {
            'os-update_snapshot_status': { status: 'error', progress: '101%' },
          })
        ).status,
      ).toBe(400);
      expect(
        (
          await member.post(`/snapshots/${s}/action`, {
            'os-update_snapshot_status': { status: 'error', progress: '80%' },
          })
        ).status,
      ).toBe(202);
      const shown = (await api.get(`/snapshots/${s}`)).body.snapshot;
      expect([shown.status, shown['os-extended-snapshot-attributes:progress']]).toEqual(['error', '80%']);
    });
  });
});
