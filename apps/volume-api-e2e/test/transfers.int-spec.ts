import { randomUUID } from 'node:crypto';
import { Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

/**
 * Volume transfers (BS-7.10) through HTTP: both route families, the auth key shown once, the
 * volume and its snapshots moving to the accepting project with their quota (moved exactly once),
 * and the refusals of a wrong key, a busy volume and a second accept.
 */
describe.each(MODES)('volume transfers (%s)', (mode) => {
  let bs: BlockStorage;
  let donor: Client;
  let recipient: Client;
  let admin: Client;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    admin = new Client(bs.base);
    donor = admin.as(memberOf(newProject()));
    recipient = admin.as(memberOf(newProject()));
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  }, 60000);

  const newVolume = async (c: Client, size = 1): Promise<string> => {
    const r = await c.post('/volumes', { volume: { size } });
    expect(r.status).toBe(202);
    await c.waitFor('volumes', r.body.volume.id, ['available'], 60000);
    return r.body.volume.id;
  };
  const usage = async (project: string): Promise<Record<string, { in_use: number }>> => {
    const r = await admin.get(`/os-quota-sets/${project}?usage=true`);
    expect(r.status).toBe(200);
    return r.body.quota_set;
  };

  it('creates (auth key once), lists, shows and accepts on /os-volume-transfer; the volume, its snapshot and the quota move', async () => {
    const volumeId = await newVolume(donor);
    const snap = await donor.post('/snapshots', { snapshot: { volume_id: volumeId, name: 's1' } });
    await donor.waitFor('snapshots', snap.body.snapshot.id, ['available'], 60000);
    const before = {
      donor: await usage(donor.caller.project),
      recipient: await usage(recipient.caller.project),
    };

    const legacy = donor.at(null);
    const created = await legacy.post('/os-volume-transfer', {
      transfer: { volume_id: volumeId, name: ' t1 ' },
    });
    expect(created.status).toBe(202);
    const t = created.body.transfer;
    expect(Object.keys(t).sort()).toEqual(['auth_key', 'created_at', 'id', 'links', 'name', 'volume_id']);
    expect(t.name).toBe('t1');
    expect(t.auth_key).toMatch(/^[0-9a-f]{16}$/);
    expect(t.links[0].href).toContain(`/os-volume-transfer/${t.id}`);
    expect((await donor.get(`/volumes/${volumeId}`)).body.volume.status).toBe('awaiting-transfer');

    const shown = await legacy.get(`/os-volume-transfer/${t.id}`);
    expect(shown.status).toBe(200);
    expect(Object.keys(shown.body.transfer).sort()).toEqual([
      'created_at',
      'id',
      'links',
      'name',
      'volume_id',
    ]);
    const list = await legacy.get('/os-volume-transfer');
    expect(list.body.transfers).toEqual([{ id: t.id, volume_id: volumeId, name: 't1', links: t.links }]);
    expect((await recipient.get(`/os-volume-transfer/${t.id}`)).status).toBe(404);
    expect((await recipient.get('/os-volume-transfer')).body.transfers).toEqual([]);

    const wrong = await recipient.post(`/os-volume-transfer/${t.id}/accept`, {
      accept: { auth_key: '0000000000000000' },
    });
    expect([wrong.status, wrong.body]).toEqual([
      400,
      {
        badRequest: {
          code: 400,
          message: `Invalid auth key: Attempt to transfer ${t.id} with invalid auth key.`,
        },
      },
    ]);
    const extra = await recipient.post(`/os-volume-transfer/${t.id}/accept`, {
      accept: { auth_key: t.auth_key, x: 1 },
    });
    expect(extra.status).toBe(400);

    const accepted = await recipient.post(`/os-volume-transfer/${t.id}/accept`, {
      accept: { auth_key: t.auth_key },
    });
    expect(accepted.status).toBe(202);
    expect(accepted.body.transfer).toEqual({
      id: t.id,
      name: 't1',
      volume_id: volumeId,
      links: expect.any(Array),
    });
    expect(accepted.body.transfer.links[0].href).toContain(
      `/${recipient.caller.project}/os-volume-transfer/${t.id}`,
    );
    const moved = await recipient.get(`/volumes/${volumeId}`);
    expect(moved.body.volume.status).toBe('available');
    expect(moved.body.volume.user_id).toBe(recipient.caller.user);
    expect((await recipient.get(`/snapshots/${snap.body.snapshot.id}`)).status).toBe(200);
    expect((await donor.get(`/volumes/${volumeId}`)).status).toBe(404);
    expect((await legacy.get(`/os-volume-transfer/${t.id}`)).status).toBe(404);
    const again = await recipient.post(`/os-volume-transfer/${t.id}/accept`, {
      accept: { auth_key: t.auth_key },
    });
    expect(again.status).toBe(404);

    const after = {
      donor: await usage(donor.caller.project),
      recipient: await usage(recipient.caller.project),
    };
    expect(after.donor['volumes']!.in_use).toBe(before.donor['volumes']!.in_use - 1);
    expect(after.donor['gigabytes']!.in_use).toBe(before.donor['gigabytes']!.in_use - 2);
    expect(after.donor['snapshots']!.in_use).toBe(before.donor['snapshots']!.in_use - 1);
    expect(after.recipient['volumes']!.in_use).toBe(before.recipient['volumes']!.in_use + 1);
    expect(after.recipient['gigabytes']!.in_use).toBe(before.recipient['gigabytes']!.in_use + 2);
    expect(after.recipient['snapshots']!.in_use).toBe(before.recipient['snapshots']!.in_use + 1);
  }, 180000);

  it('serves /volume-transfers from 3.55 with no_snapshots (3.57 project fields), and delete returns the volume', async () => {
    const volumeId = await newVolume(donor);
    expect(
      (await donor.at('3.54').post('/volume-transfers', { transfer: { volume_id: volumeId } })).status,
    ).toBe(404);
    const created = await donor
      .at('3.57')
      .post('/volume-transfers', { transfer: { volume_id: volumeId, no_snapshots: true } });
    expect(created.status).toBe(202);
    const t = created.body.transfer;
    expect(t).toMatchObject({
      no_snapshots: true,
      source_project_id: donor.caller.project,
      destination_project_id: null,
      accepted: false,
      name: null,
    });
    const detail = await donor.at('3.55').get('/volume-transfers/detail');
    expect(detail.body.transfers.map((x: { id: string }) => x.id)).toContain(t.id);
    expect(Object.keys(detail.body.transfers[0]).sort()).toEqual([
      'created_at',
      'id',
      'links',
      'name',
      'no_snapshots',
      'volume_id',
    ]);
    const second = await donor.post('/volume-transfers', { transfer: { volume_id: volumeId } });
    expect(second.status).toBe(400);
    expect(second.body.badRequest.message).toMatch(/^Invalid volume: /);
    expect((await donor.delete(`/volume-transfers/${t.id}`)).status).toBe(202);
    expect((await donor.get(`/volumes/${volumeId}`)).body.volume.status).toBe('available');
    expect((await donor.get(`/volume-transfers/${t.id}`)).status).toBe(404);
  }, 180000);

  it('refuses bad bodies and unknown volumes, and an over-quota recipient with 413 Retry-After 0 (nothing moves)', async () => {
    expect((await donor.post('/os-volume-transfer', { transfer: { volume_id: 'x' } })).status).toBe(400);
    expect(
      (await donor.post('/os-volume-transfer', { transfer: { volume_id: randomUUID(), bogus: 1 } })).status,
    ).toBe(400);
    expect(
      (await donor.post('/os-volume-transfer', { transfer: { volume_id: randomUUID(), no_snapshots: true } }))
        .status,
    ).toBe(400);
    const missing = randomUUID();
    const nf = await donor.post('/os-volume-transfer', { transfer: { volume_id: missing } });
    expect([nf.status, nf.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: `Volume ${missing} could not be found.` } },
    ]);

    const volumeId = await newVolume(donor);
    const t = (await donor.post('/os-volume-transfer', { transfer: { volume_id: volumeId } })).body.transfer;
    const poor = admin.as(memberOf(newProject()));
    expect(
      (await admin.put(`/os-quota-sets/${poor.caller.project}`, { quota_set: { volumes: 0 } })).status,
    ).toBe(200);
    const r = await poor.post(`/os-volume-transfer/${t.id}/accept`, { accept: { auth_key: t.auth_key } });
    expect(r.status).toBe(413);
    expect(r.headers.get('retry-after')).toBe('0');
    expect(r.body.overLimit.message).not.toMatch(/^VolumeLimitExceeded/);
    expect((await donor.get(`/volumes/${volumeId}`)).body.volume.status).toBe('awaiting-transfer');
    expect((await donor.get(`/os-volume-transfer/${t.id}`)).status).toBe(200);
  }, 180000);
});
