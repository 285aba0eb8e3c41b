import { randomUUID } from 'node:crypto';
import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

/**
 * `/v3/{project_id}/os-backup-policies` (ours, issue 21): create, list, show, update, delete with
 * the Cinder API's authentication, policy rules and error bodies; no microversion, no v2 path.
 */
describe.each(MODES)('backup policies API (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let member: Client;
  let volumeId: string;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base, admin);
    member = api.as(memberOf(newProject()));
    const r = await member.post('/volumes', { volume: { size: 1 } });
    expect(r.status).toBe(202);
    volumeId = r.body.volume.id;
    await member.waitFor('volumes', volumeId, ['available']);
  }, 120000);

  afterAll(async () => {
    await bs?.close();
  });

  it('creates, shows, lists, updates and deletes a policy', async () => {
    const c = await member.at(null).post('/os-backup-policies', {
      backup_policy: {
        name: 'nightly',
        volume_id: volumeId,
        schedule: '0 2 * * *',
        retention: 7,
        full_every: 6,
      },
    });
    expect(c.status).toBe(200);
    const p = c.body.backup_policy;
    expect(p).toEqual({
      id: expect.any(String),
      project_id: member.caller.project,
      user_id: member.caller.user,
      name: 'nightly',
      description: null,
      volume_id: volumeId,
      volume_type_id: null,
      schedule: '0 2 * * *',
      retention: 7,
      full_every: 6,
      skip_unchanged: true,
      enabled: true,
      next_run_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT02:00:00\.000000$/),
      last_run_at: null,
      last_run: null,
      last_error: null,
      last_error_at: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/),
      updated_at: null,
    });
    expect((await member.get(`/os-backup-policies/${p.id}`)).body).toEqual({ backup_policy: p });
    const l = await member.get('/os-backup-policies');
    expect(l.status).toBe(200);
    expect(l.body).toEqual({ backup_policies: [p] });

    const u = await member.put(`/os-backup-policies/${p.id}`, {
      backup_policy: { schedule: '*/5 * * * *', enabled: false },
    });
    expect(u.status).toBe(200);
    expect(u.body.backup_policy).toMatchObject({
      schedule: '*/5 * * * *',
      enabled: false,
      next_run_at: null,
      retention: 7,
    });

    // Another project sees nothing of it.
    const other = api.as(memberOf(newProject()));
    const hidden = await other.get(`/os-backup-policies/${p.id}`);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual({
      itemNotFound: { code: 404, message: `Backup policy ${p.id} could not be found.` },
    });

    expect((await member.delete(`/os-backup-policies/${p.id}`)).status).toBe(202);
    expect((await member.get(`/os-backup-policies/${p.id}`)).status).toBe(404);
    expect((await member.delete(`/os-backup-policies/${p.id}`)).status).toBe(404);
  });

  it.each([
    [{ backup_policy: { volume_id: 'VOL', schedule: '* * * * *' } }, /retention/],
    [{ backup_policy: { volume_id: 'VOL', schedule: '* * * * * */10', retention: 3 } }, /schedule/],
    [
      { backup_policy: { schedule: '* * * * *', retention: 3 } },
      /exactly one of volume_id or volume_type_id/,
    ],
    [{ backup_policy: { volume_id: 'VOL', schedule: '* * * * *', retention: 0 } }, /retention/],
    [{ backup_policy: { volume_id: 'VOL', schedule: '* * * * *', retention: 3, colour: 'red' } }, /colour/],
    [{ policy: {} }, /backup_policy/],
  ])("refuses bad input %j with a 400 in Cinder's body", async (body, message) => {
    const r = await member.post(
      '/os-backup-policies',
      JSON.parse(JSON.stringify(body).replace('VOL', volumeId)),
    );
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ badRequest: { code: 400, message: expect.stringMatching(message) } });
  });

  it('answers 404 for an unknown volume and 403 for a reader', async () => {
    const missing = randomUUID();
    const r = await member.post('/os-backup-policies', {
      backup_policy: { volume_id: missing, schedule: '@daily', retention: 2 },
    });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ itemNotFound: { code: 404, message: `Volume ${missing} could not be found.` } });
    const reader = api.as({ ...member.caller, roles: 'reader' });
    const f = await reader.post('/os-backup-policies', {
      backup_policy: { volume_id: volumeId, schedule: '@daily', retention: 2 },
    });
    expect(f.status).toBe(403);
    expect(Object.keys(f.body)).toEqual(['forbidden']);
    expect((await reader.get('/os-backup-policies')).status).toBe(200);
  });

  it('has no v2 path', async () => {
    const r = await member.raw('GET', `${bs.base}/v2/${member.caller.project}/os-backup-policies`);
    expect(r.status).toBe(404);
  });
});
