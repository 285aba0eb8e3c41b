import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import os from 'node:os';
import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

const bad = (message: string) => ({ badRequest: { code: 400, message } });
const notFound = (message: string) => ({ itemNotFound: { code: 404, message } });
const conflict = (message: string) => ({ conflictingRequest: { code: 409, message } });
const TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

/**
 * Cinder's attachments API (3.27/3.44/3.54) and the legacy attach actions, with the volume's
 * state machine (available → reserved → attaching → in-use → available), multiattach, the
 * refusals of attached volumes and the file back end's `local` connection info.
 */
describe.each(MODES)('volume attachments (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let member: Client;
  const machine = os.hostname();

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base, admin);
    member = api.as(memberOf(newProject()));
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
  const statusOf = async (c: Client, id: string) => (await c.get(`/volumes/${id}`)).body.volume.status;

  it('is a 3.27 API, os-complete 3.44', async () => {
    expect((await member.at('3.26').get('/attachments')).body).toEqual(
      notFound('API version 3.26 is not supported on this method.'),
    );
    expect(
      (await member.at('3.26').post('/attachments', { attachment: { volume_uuid: randomUUID() } })).status,
    ).toBe(404);
    const id = randomUUID();
    expect((await member.at('3.43').post(`/attachments/${id}/action`, { 'os-complete': {} })).body).toEqual(
      notFound('API version 3.43 is not supported on this method.'),
    );
    expect((await member.get(`/attachments/${id}`)).body).toEqual(
      notFound(`Volume attachment could not be found with filter: attachment_id = ${id}.`),
    );
    expect((await member.post('/attachments', { attachment: { volume_uuid: id } })).body).toEqual(
      notFound(`Volume ${id} could not be found.`),
    );
    expect((await member.post('/attachments', { attachment: {} })).body).toEqual(
      bad("Invalid input for field/attribute attachment. Value: {}. 'volume_uuid' is a required property"),
    );
    expect(
      (await member.at('3.53').post('/attachments', { attachment: { volume_uuid: id, mode: 'ro' } })).status,
    ).toBe(400);
  });

  it('reserves, connects, completes and deletes an attachment: available → reserved → attaching → in-use → available', async () => {
    const v = await volume(member);
    const server = randomUUID();
    const created = await member.post('/attachments', {
      attachment: { volume_uuid: v, instance_uuid: server },
    });
    expect(created.status).toBe(200);
    const att = created.body.attachment;
    expect(att).toEqual({
      id: expect.any(String),
      status: 'reserved',
      instance: server,
      volume_id: v,
      attached_at: '',
      detached_at: '',
      attach_mode: 'null',
      connection_info: {},
    });
    expect(await statusOf(member, v)).toBe('reserved');
    // a non-multiattach volume takes no second attachment for another server
    const second = await member.post('/attachments', {
      attachment: { volume_uuid: v, instance_uuid: randomUUID() },
    });
    expect(second.body).toEqual(
      bad(
        `Invalid volume: Volume ${v} status must be available or downloading to reserve, but the current status is reserved.`,
      ),
    );
    // a connector on another host cannot be served; nothing changes
    const elsewhere = await member.put(`/attachments/${att.id}`, {
      attachment: { connector: { host: `not-${machine}`, initiator: 'iqn.x' } },
    });
    expect(elsewhere.body).toEqual(
      bad(
        `Invalid input received: Connector doesn't have required information: the back end ${(await api.get(`/volumes/${v}`)).body.volume['os-vol-host-attr:host'].split('#')[0]} serves 'local' connections on host ${machine} only, not on not-${machine}.`,
      ),
    );
    expect((await member.put(`/attachments/${att.id}`, { attachment: { connector: {} } })).status).toBe(400);
    expect(await statusOf(member, v)).toBe('reserved');
    const updated = await member.put(`/attachments/${att.id}`, {
      attachment: { connector: { host: machine, mountpoint: '/dev/vdb', initiator: null } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.attachment).toMatchObject({
      id: att.id,
      status: 'attaching',
      attach_mode: 'rw',
      attached_at: expect.stringMatching(TS),
      detached_at: '',
    });
    const info = updated.body.attachment.connection_info;
    expect(info).toEqual({
      driver_volume_type: 'local',
      device_path: `${bs.volumeDir}/volume-${v}`,
      qos_specs: null,
      access_mode: 'rw',
      encrypted: false,
      cacheable: false,
      attachment_id: att.id,
      enforce_multipath: false,
    });
    expect(existsSync(info.device_path)).toBe(true);
    expect(await statusOf(member, v)).toBe('attaching');
    const done = await member.post(`/attachments/${att.id}/action`, { 'os-complete': null });
    expect([done.status, done.text]).toEqual([204, '']);
    const shown = (await member.get(`/volumes/${v}`)).body.volume;
    expect(shown.status).toBe('in-use');
    expect(shown.attachments).toEqual([
      {
        id: v,
        attachment_id: att.id,
        volume_id: v,
        server_id: server,
        host_name: null,
        device: '/dev/vdb',
        attached_at: expect.stringMatching(TS),
      },
    ]);
    // the database-rendered detail list carries the same attachments (host_name for admins)
    const listed = (await member.get('/volumes/detail')).body.volumes.find((x: any) => x.id === v);
    expect(listed.attachments).toEqual(shown.attachments);
    const adminView = (await api.get(`/volumes/${v}`)).body.volume;
    const adminListed = (await api.get('/volumes/detail?all_tenants=1')).body.volumes.find(
      (x: any) => x.id === v,
    );
    expect(adminView.attachments[0].host_name).toBe(machine);
    expect(adminListed.attachments).toEqual(adminView.attachments);
    // an attached volume refuses delete and (below 3.42) extend
    expect((await member.delete(`/volumes/${v}`)).status).toBe(400);
    expect(
      (await member.at('3.41').post(`/volumes/${v}/action`, { 'os-extend': { new_size: 2 } })).status,
    ).toBe(400);
    expect((await member.get('/attachments')).body.attachments).toEqual([
      { id: att.id, status: 'attached', instance: server, volume_id: v },
    ]);
    expect((await member.get(`/attachments/detail?volume_id=${v}`)).body.attachments).toEqual([
      expect.objectContaining({ id: att.id, status: 'attached', connection_info: info }),
    ]);
    expect((await member.get('/attachments?status=reserved')).body.attachments).toEqual([]);
    // another project sees nothing
    const other = api.as(memberOf(newProject()));
    expect((await other.get(`/attachments/${att.id}`)).status).toBe(404);
    expect((await other.get('/attachments')).body.attachments).toEqual([]);
    const removed = await member.delete(`/attachments/${att.id}`);
    expect([removed.status, removed.body]).toEqual([200, { attachments: [] }]);
    const after = (await member.get(`/volumes/${v}`)).body.volume;
    expect([after.status, after.attachments]).toEqual(['available', []]);
    expect((await member.get(`/attachments/${att.id}`)).status).toBe(404);
    expect((await member.delete(`/volumes/${v}`)).status).toBe(202);
  });

  it('creates with a connector in one call (3.54 mode), refuses error volumes', async () => {
    const v = await volume(member);
    const r = await member
      .at('3.54')
      .post('/attachments', { attachment: { volume_uuid: v, connector: { host: machine }, mode: 'ro' } });
    expect(r.status).toBe(200);
    expect(r.body.attachment).toMatchObject({
      status: 'attaching',
      attach_mode: 'ro',
      instance: null,
      connection_info: { driver_volume_type: 'local', device_path: `${bs.volumeDir}/volume-${v}` },
    });
    expect(await statusOf(member, v)).toBe('attaching');
    expect((await member.delete(`/attachments/${r.body.attachment.id}`)).status).toBe(200);
    expect(await statusOf(member, v)).toBe('available');
    expect((await api.post(`/volumes/${v}/action`, { 'os-reset_status': { status: 'error' } })).status).toBe(
      202,
    );
    expect((await member.post('/attachments', { attachment: { volume_uuid: v } })).body).toEqual(
      bad(
        `Invalid volume: Volume attachments can not be created if the volume is in an error state. The Volume ${v} currently has a status of: error `,
      ),
    );
  });

  it('attaches a multiattach volume twice and stays in-use until the last attachment goes', async () => {
    const type = (
      await api.post('/types', { volume_type: { name: `multi-${randomBytes(3).toString('hex')}` } })
    ).body.volume_type;
    expect(
      (await api.post(`/types/${type.id}/extra_specs`, { extra_specs: { multiattach: '<is> True' } })).status,
    ).toBe(200);
    const v = await volume(member, { volume_type: type.name });
    expect((await member.get(`/volumes/${v}`)).body.volume.multiattach).toBe(true);
    const ids: string[] = [];
    for (const _ of [1, 2]) {
      const r = await member.post('/attachments', {
        attachment: { volume_uuid: v, instance_uuid: randomUUID(), connector: { host: machine } },
      });
      expect([r.status, r.body.badRequest]).toEqual([200, undefined]);
      ids.push(r.body.attachment.id);
      expect(
        (await member.post(`/attachments/${r.body.attachment.id}/action`, { 'os-complete': {} })).status,
      ).toBe(204);
      expect(await statusOf(member, v)).toBe('in-use');
    }
    expect((await member.get(`/volumes/${v}`)).body.volume.attachments).toHaveLength(2);
    const first = await member.delete(`/attachments/${ids[0]}`);
    expect(first.body).toEqual({
      attachments: [expect.objectContaining({ id: ids[1], status: 'attached' })],
    });
    expect(await statusOf(member, v)).toBe('in-use');
    // os-detach without attachment_id cannot tell which; with it, the last one goes
    expect((await member.post(`/volumes/${v}/action`, { 'os-detach': {} })).status).toBe(202);
    expect(await statusOf(member, v)).toBe('available');
  });

  it('legacy os-attach / os-detach, os-initialize_connection and os-force_detach', async () => {
    const v = await volume(member);
    const server = randomUUID();
    expect(
      (await member.post(`/volumes/${v}/action`, { 'os-attach': { mountpoint: '/dev/vdc' } })).body,
    ).toEqual(
      bad(
        'Invalid input for field/attribute os-attach. Value: {"mountpoint":"/dev/vdc"}. \'instance_uuid\' or \'host_name\' is a required property',
      ),
    );
    expect((await member.post(`/volumes/${v}/action`, { 'os-reserve': {} })).status).toBe(202);
    const conn = await member.post(`/volumes/${v}/action`, {
      'os-initialize_connection': { connector: { host: machine } },
    });
    expect(conn.status).toBe(200);
    expect(conn.body).toEqual({
      connection_info: {
        driver_volume_type: 'local',
        data: {
          device_path: `${bs.volumeDir}/volume-${v}`,
          qos_specs: null,
          access_mode: 'rw',
          encrypted: false,
          cacheable: false,
          enforce_multipath: false,
        },
        enforce_multipath: false,
      },
    });
    expect(
      (
        await member.post(`/volumes/${v}/action`, {
          'os-initialize_connection': { connector: 'iqn.1993-08.org.debian' },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await member.post(`/volumes/${v}/action`, {
          'os-attach': { instance_uuid: server, mountpoint: '/dev/vdc' },
        })
      ).status,
    ).toBe(202);
    const attached = (await member.get(`/volumes/${v}`)).body.volume;
    expect(attached).toMatchObject({
      status: 'in-use',
      metadata: { readonly: 'False', attached_mode: 'rw' },
    });
    expect(attached.attachments).toEqual([
      expect.objectContaining({ server_id: server, device: '/dev/vdc' }),
    ]);
    // a second server on a non-multiattach volume is refused by the "volume service"
    expect(
      (
        await member.post(`/volumes/${v}/action`, {
          'os-attach': { instance_uuid: randomUUID(), mountpoint: '/dev/vdd' },
        })
      ).body,
    ).toEqual(
      bad(
        'Error attaching volume - InvalidVolume: Invalid volume: volume is already attached and multiple attachments are not enabled',
      ),
    );
    expect(
      (await member.post(`/volumes/${v}/action`, { 'os-detach': { attachment_id: randomUUID() } })).body,
    ).toEqual(conflict('Detach volume from instance  using the Compute API'));
    expect((await member.post(`/volumes/${v}/action`, { 'os-begin_detaching': {} })).status).toBe(202);
    expect(await statusOf(member, v)).toBe('detaching');
    expect((await member.post(`/volumes/${v}/action`, { 'os-roll_detaching': {} })).status).toBe(202);
    expect(await statusOf(member, v)).toBe('in-use');
    expect((await member.post(`/volumes/${v}/action`, { 'os-detach': {} })).status).toBe(202);
    const detached = (await member.get(`/volumes/${v}`)).body.volume;
    expect([detached.status, detached.attachments, detached.metadata]).toEqual([
      'available',
      [],
      { readonly: 'False' },
    ]);
    // force-detach is admin-only and ends an attachment however far it got
    expect(
      (
        await member.post(`/volumes/${v}/action`, {
          'os-attach': { host_name: machine, mountpoint: '/dev/vde' },
        })
      ).status,
    ).toBe(202);
    expect((await member.post(`/volumes/${v}/action`, { 'os-force_detach': {} })).status).toBe(403);
    expect((await api.post(`/volumes/${v}/action`, { 'os-force_detach': { connector: null } })).status).toBe(
      202,
    );
    expect(await statusOf(member, v)).toBe('available');
    expect(
      (
        await member.post(`/volumes/${v}/action`, {
          'os-terminate_connection': { connector: { host: machine } },
        })
      ).status,
    ).toBe(202);
  });
});
