import { randomBytes, randomUUID } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';
import { MIB, scratchDir, sha256File, waitBackup, writeAt } from './backup-files';

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(e.name);
  return out;
}

/**
 * Backups over HTTP with real bytes (spec 7.9, 8.3, 9, 11): the worker chunks the volume file into
 * the posix store, incrementals store only changed ranges, restores write the bytes back (sha256
 * equal), quota is reserved then committed and given back on delete, errors use Cinder's faults.
 */
describe.each(MODES)('backups (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let member: Client;
  let project: string;
  let store: ReturnType<typeof scratchDir>;

  beforeAll(async () => {
    store = scratchDir('osc-backups-');
    bs = await startBlockStorage(mode, { BACKUP_STORE_DIR: store.dir, BACKUP_CHUNK_SIZE: String(4 * MIB) });
    api = new Client(bs.base, admin);
    project = newProject();
    member = api.as(memberOf(project));
  }, 120000);

  afterAll(async () => {
    await bs?.close();
    store?.remove();
  });

  const volumeFile = (id: string): string => path.join(bs.volumeDir, `volume-${id}`);

  async function newVolume(c: Client, size = 1): Promise<string> {
    const r = await c.post('/volumes', {
      volume: { size, name: `bk-src-${randomBytes(3).toString('hex')}`, metadata: { origin: 'source' } },
    });
    expect(r.status).toBe(202);
    await c.waitFor('volumes', r.body.volume.id, ['available']);
    return r.body.volume.id;
  }

  async function usage(p: string): Promise<{ backups: any; backup_gigabytes: any }> {
    const q = (await api.get(`/os-quota-sets/${p}?usage=true`)).body.quota_set;
    return { backups: q.backups, backup_gigabytes: q.backup_gigabytes };
  }

  it('backs up, backs up incrementally, restores to new and existing volumes with identical bytes, and deletes', async () => {
    const vol = await newVolume(member);
    await writeAt(volumeFile(vol), 0, randomBytes(MIB + 123));
    await writeAt(volumeFile(vol), 300 * MIB + 7, randomBytes(5 * MIB));
    await writeAt(volumeFile(vol), 1024 * MIB - 4096, randomBytes(4096));
    const original = await sha256File(volumeFile(vol));

    const created = await member.post('/backups', {
      backup: { volume_id: vol, name: 'full', description: 'first' },
    });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({
      backup: { id: expect.any(String), name: 'full', links: expect.any(Array) },
    });
    const full = created.body.backup.id;
    expect(['backing-up', 'available']).toContain((await member.get(`/volumes/${vol}`)).body.volume.status);
    const fullView = await waitBackup(member, full, ['available', 'error']);
    expect(fullView).toMatchObject({
      status: 'available',
      size: 1,
      name: 'full',
      description: 'first',
      volume_id: vol,
      is_incremental: false,
      has_dependent_backups: false,
      fail_reason: null,
      snapshot_id: null,
      metadata: {},
    });
    expect(fullView.object_count).toBeGreaterThan(2);
    // Zero chunks are not stored: 1 GiB of mostly holes becomes a handful of 4 MiB objects.
    expect(fullView.object_count).toBeLessThan(10);
    // Our progress extension: only for a client that asks (tempest's schema forbids extra keys).
    expect(fullView).not.toHaveProperty(['os-backup-progress:progress']);
    const asked = { 'X-OSC-Backup-Progress': 'true' };
    expect((await member.get(`/backups/${full}`, asked)).body.backup['os-backup-progress:progress']).toBe(
      100,
    );
    expect(
      (await member.get('/backups/detail', asked)).body.backups.map(
        (b: any) => b['os-backup-progress:progress'],
      ),
    ).toEqual([100]);
    expect((await member.waitFor('volumes', vol, ['available'])).status).toBe('available');
    expect(await usage(project)).toEqual({
      backups: { limit: 10, in_use: 1, reserved: 0 },
      backup_gigabytes: { limit: 1000, in_use: 1, reserved: 0 },
    });

    await writeAt(volumeFile(vol), 300 * MIB + 100, randomBytes(1000));
    const changed = await sha256File(volumeFile(vol));
    const inc = await member.post('/backups', { backup: { volume_id: vol, incremental: true, name: 'inc' } });
    expect(inc.status).toBe(202);
    const incView = await waitBackup(member, inc.body.backup.id, ['available', 'error']);
    expect(incView).toMatchObject({ status: 'available', is_incremental: true, object_count: 1 });
    expect((await member.get(`/backups/${full}`)).body.backup.has_dependent_backups).toBe(true);
    const refused = await member.delete(`/backups/${full}`);
    expect(refused.status).toBe(400);
    expect(refused.body.badRequest.message).toMatch(/^Invalid backup: /);

    // Restore the incremental into a new volume: full + increment give the changed bytes.
    const r1 = await member.post(`/backups/${inc.body.backup.id}/restore`, { restore: {} });
    expect(r1.status).toBe(202);
    expect(r1.body).toEqual({
      restore: {
        backup_id: inc.body.backup.id,
        volume_id: expect.any(String),
        volume_name: `restore_backup_${inc.body.backup.id}`,
      },
    });
    await member.waitFor('volumes', r1.body.restore.volume_id, ['available', 'error'], 60000);
    expect((await member.get(`/volumes/${r1.body.restore.volume_id}`)).body.volume.status).toBe('available');
    expect(await sha256File(volumeFile(r1.body.restore.volume_id))).toBe(changed);
    // The backed-up volume's metadata comes back on the restored volume.
    expect((await member.get(`/volumes/${r1.body.restore.volume_id}`)).body.volume.metadata).toEqual({
      origin: 'source',
    });
    await waitBackup(member, inc.body.backup.id, ['available']);

    // Restore the full backup over the (changed) source volume: the original bytes come back.
    await writeAt(volumeFile(vol), 700 * MIB, randomBytes(MIB));
    const r2 = await member.post(`/backups/${full}/restore`, { restore: { volume_id: vol } });
    expect(r2.status).toBe(202);
    expect(r2.body.restore).toMatchObject({ backup_id: full, volume_id: vol });
    await member.waitFor('volumes', vol, ['available', 'error_restoring'], 60000);
    expect((await member.get(`/volumes/${vol}`)).body.volume.status).toBe('available');
    expect(await sha256File(volumeFile(vol))).toBe(original);

    // An unknown target volume is 404; a backup that is not available cannot be restored.
    expect(
      (await member.post(`/backups/${full}/restore`, { restore: { volume_id: randomUUID() } })).status,
    ).toBe(404);
    expect((await member.post(`/backups/${full}/restore`, { restore: { bogus: 1 } })).status).toBe(400);

    // Delete the increment, then the full backup: objects and quota are gone.
    expect((await member.delete(`/backups/${inc.body.backup.id}`)).status).toBe(202);
    await waitBackup(member, inc.body.backup.id, ['deleted']);
    expect((await member.delete(`/backups/${full}`)).status).toBe(202);
    await waitBackup(member, full, ['deleted']);
    expect(await filesUnder(store.dir)).toEqual([]);
    expect(await usage(project)).toEqual({
      backups: { limit: 10, in_use: 0, reserved: 0 },
      backup_gigabytes: { limit: 1000, in_use: 0, reserved: 0 },
    });
  }, 180000);

  it('exports and imports a record (admin), resets status and force-deletes', async () => {
    const vol = await newVolume(api);
    await writeAt(volumeFile(vol), 5 * MIB, randomBytes(2 * MIB));
    const digest = await sha256File(volumeFile(vol));
    const b = (await api.post('/backups', { backup: { volume_id: vol, name: 'exp' } })).body.backup.id;
    await waitBackup(api, b, ['available']);
    expect((await member.get(`/backups/${b}/export_record`)).status).toBe(404);
    const exp = await api.get(`/backups/${b}/export_record`);
    expect(exp.status).toBe(200);
    const rec = exp.body['backup-record'];
    expect(rec.backup_service).toMatch(/^cinder\.backup\.drivers\./);
    const doc = JSON.parse(Buffer.from(rec.backup_url, 'base64').toString('utf8'));
    expect(doc).toMatchObject({
      id: b,
      volume_id: vol,
      size: 1,
      display_name: 'exp',
      status: 'available',
      driver_info: {},
    });

    expect((await api.post('/backups/import_record', { 'backup-record': rec })).body).toEqual({
      badRequest: { code: 400, message: expect.stringMatching(/already exists/) },
    });
    expect(
      (
        await api.post('/backups/import_record', {
          'backup-record': { backup_service: rec.backup_service, backup_url: '!!!' },
        })
      ).status,
    ).toBe(400);
    const newId = randomUUID();
    const url = Buffer.from(JSON.stringify({ ...doc, id: newId }), 'utf8').toString('base64');
    const imp = await api.post('/backups/import_record', {
      'backup-record': { backup_service: rec.backup_service, backup_url: url },
    });
    expect(imp.status).toBe(201);
    expect(imp.body.backup).toMatchObject({ id: newId, links: expect.any(Array) });
    const imported = await waitBackup(api, newId, ['available', 'error']);
    expect(imported).toMatchObject({ status: 'available', volume_id: vol, name: 'exp', size: 1 });

    const restored = await api.post(`/backups/${newId}/restore`, { restore: { name: 'from-import' } });
    expect(restored.status).toBe(202);
    expect(restored.body.restore.volume_name).toBe('from-import');
    await api.waitFor('volumes', restored.body.restore.volume_id, ['available'], 60000);
    expect(await sha256File(volumeFile(restored.body.restore.volume_id))).toBe(digest);

    // 3.47: a volume created from a backup holds its bytes.
    const fromBackup = await api
      .at('3.47')
      .post('/volumes', { volume: { backup_id: newId, name: 'from-backup' } });
    expect(fromBackup.status).toBe(202);
    expect(fromBackup.body.volume.size).toBe(1);
    await api.waitFor('volumes', fromBackup.body.volume.id, ['available', 'error'], 60000);
    expect((await api.get(`/volumes/${fromBackup.body.volume.id}`)).body.volume.status).toBe('available');
    expect(await sha256File(volumeFile(fromBackup.body.volume.id))).toBe(digest);

    expect(
      (await api.post(`/backups/${b}/action`, { 'os-reset_status': { status: 'creating' } })).status,
    ).toBe(400);
    expect((await api.post(`/backups/${b}/action`, { 'os-reset_status': { status: 'error' } })).status).toBe(
      202,
    );
    expect((await api.get(`/backups/${b}`)).body.backup.status).toBe('error');
    expect((await api.post(`/backups/${b}/action`, { 'os-bogus': {} })).body.badRequest.message).toMatch(
      /^There is no such action/,
    );
    expect((await api.post(`/backups/${b}/action`, { 'os-force_delete': {} })).status).toBe(202);
    await waitBackup(api, b, ['deleted']);
    expect((await api.delete(`/backups/${newId}`)).status).toBe(202);
    await waitBackup(api, newId, ['deleted']);
  }, 180000);

  it('answers 4xx, never 5xx, to malformed backup requests', async () => {
    const id = randomUUID();
    const bodies: unknown[] = [
      'null',
      '"x"',
      '[]',
      '{}',
      { backup: null },
      { backup: [] },
      { backup: { volume_id: 123 } },
      { backup: { volume_id: id, container: 5, incremental: 'sometimes' } },
      { restore: 5 },
      { restore: { volume_id: 'x' } },
      { 'backup-record': { backup_service: 1, backup_url: 2 } },
      { 'backup-record': { backup_service: 's', backup_url: 'e30=' } },
      { 'os-reset_status': null },
      { 'os-reset_status': { status: 7 } },
      { 'os-force_delete': {}, 'os-reset_status': {} },
      'not json',
    ];
    for (const body of bodies) {
      for (const [method, url] of [
        ['POST', '/backups'],
        ['PUT', `/backups/${id}`],
        ['POST', `/backups/${id}/restore`],
        ['POST', '/backups/import_record'],
        ['POST', `/backups/${id}/action`],
      ] as const) {
        const r = await api.raw(
          method,
          api.url(url),
          typeof body === 'string' ? body : JSON.stringify(body),
          { 'content-type': 'application/json' },
        );
        expect([method, url, body, r.status < 500 && r.status >= 400]).toEqual([method, url, body, true]);
      }
    }
    for (const url of [
      '/backups?limit=x',
      '/backups/detail?sort=bogus',
      '/backups?marker=nope',
      '/backups/nope',
      '/backups/nope/export_record',
      `/backups/detail?status=${'x'.repeat(300)}`,
    ]) {
      const r = await api.get(url);
      expect([url, r.status < 500]).toEqual([url, true]);
    }
  }, 120000);

  it('takes the parent of an incremental from the caller project only', async () => {
    const vol = await newVolume(member);
    const byAdmin = (await api.post('/backups', { backup: { volume_id: vol } })).body.backup.id;
    await waitBackup(api, byAdmin, ['available']);
    const refused = await member.post('/backups', { backup: { volume_id: vol, incremental: true } });
    expect([refused.status, refused.body.badRequest?.message]).toEqual([
      400,
      expect.stringMatching(/^Invalid backup: /),
    ]);
    const inc = await api.post('/backups', { backup: { volume_id: vol, incremental: true } });
    expect(inc.status).toBe(202);
    await waitBackup(api, inc.body.backup.id, ['available']);
    expect((await api.get(`/backups/${byAdmin}`)).body.backup.has_dependent_backups).toBe(true);
    for (const id of [inc.body.backup.id, byAdmin]) {
      expect((await api.delete(`/backups/${id}`)).status).toBe(202);
      await waitBackup(api, id, ['deleted']);
    }
  }, 120000);

  it('answers Cinder faults for unknown, busy and over-quota requests and hides other projects', async () => {
    const unknown = randomUUID();
    expect((await member.post('/backups', { backup: { volume_id: unknown } })).body).toEqual({
      itemNotFound: { code: 404, message: `Volume ${unknown} could not be found.` },
    });
    expect((await member.get(`/backups/${unknown}`)).body).toEqual({
      itemNotFound: { code: 404, message: `Backup ${unknown} could not be found.` },
    });
    expect((await member.post('/backups', { backup: { volume_id: 'nope' } })).status).toBe(400);
    expect(
      (await member.post('/backups', { backup: { volume_id: unknown, bogus: 1 } })).body.badRequest.message,
    ).toMatch(/Additional properties are not allowed/);
    const vol = await newVolume(member);
    const noParent = await member.post('/backups', { backup: { volume_id: vol, incremental: true } });
    expect(noParent.status).toBe(400);
    expect(noParent.body.badRequest.message).toMatch(/^Invalid backup: .*incremental/);
    const b = (await member.post('/backups', { backup: { volume_id: vol } })).body.backup.id;
    // While the first backup runs the volume is backing-up: a second one is refused.
    const busy = await member.post('/backups', { backup: { volume_id: vol } });
    if (busy.status !== 202) expect(busy.body.badRequest.message).toMatch(/^Invalid volume: /);
    else await waitBackup(member, busy.body.backup.id, ['available']);
    await waitBackup(member, b, ['available']);
    const other = api.as(memberOf(newProject()));
    expect((await other.get(`/backups/${b}`)).status).toBe(404);
    expect((await other.get('/backups')).body).toEqual({ backups: [] });
    const listed = await member.get('/backups');
    expect(listed.body.backups.map((x: any) => x.id)).toContain(b);
    expect(Object.keys(listed.body.backups[0]).sort()).toEqual(['id', 'links', 'name']);
    const v2 = await member.raw('GET', `${bs.base}/v2/${project}/backups/detail?volume_id=${vol}`);
    expect(v2.status).toBe(200);
    expect(v2.body.backups[0]).not.toHaveProperty('metadata');
    const paged = await member.at('3.45').get('/backups/detail?limit=1&with_count=true');
    expect(paged.body.count).toBeGreaterThanOrEqual(1);
    expect(paged.body.backups_links[0].rel).toBe('next');
    expect((await member.at('3.8').put(`/backups/${b}`, { backup: { name: 'x' } })).status).toBe(404);
    const upd = await member
      .at('3.43')
      .put(`/backups/${b}`, { backup: { name: 'renamed', metadata: { k: 'v' } } });
    expect([upd.status, upd.body.backup.name]).toEqual([200, 'renamed']);
    expect((await member.at('3.43').get(`/backups/${b}`)).body.backup.metadata).toEqual({ k: 'v' });

    const tight = newProject();
    expect((await api.put(`/os-quota-sets/${tight}`, { quota_set: { backups: 0 } })).status).toBe(200);
    const tc = api.as(memberOf(tight));
    const tv = await newVolume(tc);
    const over = await tc.post('/backups', { backup: { volume_id: tv } });
    expect(over.status).toBe(413);
    expect(over.body.overLimit.message).toMatch(/^BackupLimitExceeded: /);
    expect((await tc.get(`/volumes/${tv}`)).body.volume.status).toBe('available');

    // A restore that must create a volume over the volumes quota: 413 with Retry-After: 0 (BS-9.3).
    expect(
      (await api.put(`/os-quota-sets/${tight}`, { quota_set: { backups: 10, volumes: 1 } })).status,
    ).toBe(200);
    const tb = (await tc.post('/backups', { backup: { volume_id: tv } })).body.backup.id;
    await waitBackup(tc, tb, ['available']);
    const noRoom = await tc.post(`/backups/${tb}/restore`, { restore: {} });
    expect([noRoom.status, noRoom.headers.get('retry-after')]).toEqual([413, '0']);
    expect(noRoom.body.overLimit.message).not.toMatch(/^VolumeLimitExceeded/);
    expect((await tc.get(`/backups/${tb}`)).body.backup.status).toBe('available');
  }, 180000);
});
