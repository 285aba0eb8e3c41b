import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  admin,
  Client,
  type Caller,
  memberOf,
  MODES,
  newProject,
  startBlockStorage,
  type BlockStorage,
} from './harness';

/**
 * Block storage under a deployment policy file (VOLUME_API_POLICY_FILE) over Cinder's defaults:
 * overridden rules change who may act, the rules left alone keep Cinder's defaults, and a denial
 * is Cinder's 403.
 */
describe.each(MODES)('block storage policy overrides (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  let dir: string;
  const operatorOf = (project: string): Caller => ({
    project,
    user: `op-${project.slice(0, 6)}`,
    roles: 'operator,member,reader',
  });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'osc-bs-policy-'));
    const file = path.join(dir, 'policy.yaml');
    writeFileSync(
      file,
      [
        '# members may create types; nobody may delete one; operators count as admins',
        '"volume_extension:type_create": "role:member"',
        '"volume_extension:type_delete": "!"',
        '"context_is_admin": "role:admin or role:operator"',
        '"admin_api": "is_admin:True"',
        '"volume:create": "role:member and not role:nocreate"',
        '',
      ].join('\n'),
    );
    bs = await startBlockStorage(mode, { VOLUME_API_POLICY_FILE: file });
    api = new Client(bs.base);
  });
  afterAll(async () => {
    await bs?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lets a member create a type when the file says so, and refuses deletion to everyone', async () => {
    const member = api.as(memberOf(newProject()));
    const created = await member.post('/types', { volume_type: { name: `policy-${mode}-${Date.now()}` } });
    expect(created.status).toBe(200);
    const denied = await api.delete(`/types/${created.body.volume_type.id}`);
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow volume_extension:type_delete to be performed." },
    });
    // Not overridden: type update stays admin-only.
    const update = await member.put(`/types/${created.body.volume_type.id}`, {
      volume_type: { description: 'x' },
    });
    expect(update.status).toBe(403);
    expect(update.body.forbidden.message).toBe(
      "Policy doesn't allow volume_extension:type_update to be performed.",
    );
  });

  it('makes an operator an admin through context_is_admin: all_tenants, admin fields, admin actions', async () => {
    const owner = api.as(memberOf(newProject()));
    const v = (await owner.post('/volumes', { volume: { size: 1, name: 'policy-owned' } })).body.volume;
    await owner.waitFor('volumes', v.id, ['available']);
    const operator = api.as(operatorOf(newProject()));
    const all = await operator.get('/volumes/detail?all_tenants=1');
    expect(all.status).toBe(200);
    const seen = all.body.volumes.find((x: any) => x.id === v.id);
    expect(seen).toBeDefined();
    expect(seen).toHaveProperty('os-vol-host-attr:host');
    expect((await operator.get('/default-types')).status).toBe(200);
    // The owner is still no admin: no host attribute; another member sees only its own project.
    const own = await owner.get(`/volumes/${v.id}`);
    expect(own.body.volume).not.toHaveProperty('os-vol-host-attr:host');
    const other = api.as(memberOf(newProject()));
    const scoped = await other.get('/volumes/detail');
    expect(scoped.body.volumes.map((x: any) => x.id)).not.toContain(v.id);
    expect((await other.get(`/volumes/${v.id}`)).status).toBe(404);
  });

  it('applies a rule with a negated role to volume creation', async () => {
    const p = newProject();
    const denied = await api
      .as({ project: p, user: 'u', roles: 'member,reader,nocreate' })
      .post('/volumes', { volume: { size: 1 } });
    expect(denied.status).toBe(403);
    expect(denied.body.forbidden.message).toBe("Policy doesn't allow volume:create to be performed.");
    expect((await api.as(memberOf(p)).post('/volumes', { volume: { size: 1 } })).status).toBe(202);
  });

  it('keeps the defaults that the file leaves alone', async () => {
    const member = api.as(memberOf(newProject()));
    expect(
      (await member.put(`/os-quota-sets/${member.caller.project}`, { quota_set: { volumes: 5 } })).status,
    ).toBe(403);
    expect((await member.get('/scheduler-stats/get_pools')).status).toBe(403);
    expect((await api.as(admin).get('/scheduler-stats/get_pools')).status).toBe(200);
  });
});
