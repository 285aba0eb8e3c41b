import { randomUUID } from 'node:crypto';
import {
  Client,
  memberOf,
  MODES,
  newProject,
  startBlockStorage,
  type BlockStorage,
  type Reply,
} from './harness';

/**
 * Group types (3.11), generic groups (3.13), group snapshots (3.14) and their consistency-group
 * aliases (BS-7.11, BS-7.13, BS-8.4) through HTTP: members are real volumes and snapshots made by
 * the back end, groups count against the `groups` quota, and refusals answer Cinder's faults.
 */
describe.each(MODES)('groups and consistency groups (%s)', (mode) => {
  let bs: BlockStorage;
  let admin: Client;
  let member: Client;

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    admin = new Client(bs.base);
    member = admin.as(memberOf(newProject()));
  }, 120000);
  afterAll(async () => {
    await bs?.close();
  }, 60000);

  const poll = async (
    fetch: () => Promise<Reply>,
    done: (r: Reply) => boolean,
    what: string,
    timeoutMs = 60000,
  ): Promise<Reply> => {
    const until = Date.now() + timeoutMs;
    let last: Reply | null = null;
    while (Date.now() < until) {
      last = await fetch();
      if (done(last)) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`${what}: last ${last?.status} ${last?.text.slice(0, 300)}`);
  };
  const volumeType = async (): Promise<string> => {
    const r = await admin.post('/types', { volume_type: { name: `vt-${randomUUID().slice(0, 8)}` } });
    expect(r.status).toBe(200);
    return r.body.volume_type.id;
  };
  const groupType = async (extra: Record<string, unknown> = {}): Promise<string> => {
    const r = await admin.post('/group_types', {
      group_type: { name: `gt-${randomUUID().slice(0, 8)}`, ...extra },
    });
    expect(r.status).toBe(202);
    return r.body.group_type.id;
  };

  it('manages group types and their specs (admin writes, 3.11 gate, 409 on duplicates, 400 while in use)', async () => {
    expect((await admin.at('3.10').get('/group_types')).status).toBe(404);
    const name = `gt-${randomUUID().slice(0, 8)}`;
    const created = await admin.post('/group_types', {
      group_type: {
        name,
        description: 'd',
        group_specs: { consistent_group_snapshot_enabled: '<is> False' },
      },
    });
    expect(created.status).toBe(202);
    const t = created.body.group_type;
    expect(t).toEqual({
      id: t.id,
      name,
      description: 'd',
      is_public: true,
      group_specs: { consistent_group_snapshot_enabled: '<is> False' },
    });
    const dup = await admin.post('/group_types', { group_type: { name } });
    expect([dup.status, dup.body]).toEqual([
      409,
      { conflictingRequest: { code: 409, message: `Group Type ${name} already exists.` } },
    ]);
    expect((await member.post('/group_types', { group_type: { name: 'x' } })).status).toBe(403);
    expect((await admin.post('/group_types', { group_type: { name: '  ' } })).status).toBe(400);

    const priv = await admin.post('/group_types', { group_type: { name: `a-${name}`, is_public: false } });
    for (const [dir, first, second] of [
      ['desc', name, `a-${name}`],
      ['asc', `a-${name}`, name],
    ] as const) {
      const all = (await admin.get(`/group_types?is_public=None&sort=name:${dir}`)).body.group_types.map(
        (x: { name: string }) => x.name,
      );
      expect(all.indexOf(first)).toBeGreaterThanOrEqual(0);
      expect(all.indexOf(first)).toBeLessThan(all.indexOf(second));
    }
    const pub = (await admin.get('/group_types')).body.group_types.map((x: { id: string }) => x.id);
    expect(pub).toContain(t.id);
    expect(pub).not.toContain(priv.body.group_type.id);
    expect(
      (await admin.get('/group_types?is_public=false')).body.group_types.map((x: { id: string }) => x.id),
    ).toEqual([priv.body.group_type.id]);
    const seen = (await member.get('/group_types')).body.group_types;
    expect(seen.find((x: { id: string }) => x.id === t.id)).toEqual({
      id: t.id,
      name,
      description: 'd',
      is_public: true,
    });

    const updated = await admin.put(`/group_types/${t.id}`, {
      group_type: { name: `${name}-u`, description: 'u' },
    });
    expect([updated.status, updated.body.group_type.name, updated.body.group_type.description]).toEqual([
      200,
      `${name}-u`,
      'u',
    ]);
    expect((await admin.put(`/group_types/${t.id}`, { group_type: {} })).status).toBe(400);

    expect(
      (await admin.post(`/group_types/${t.id}/group_specs`, { group_specs: { k1: 'v1', k2: 'v2' } })).body,
    ).toEqual({ group_specs: { k1: 'v1', k2: 'v2' } });
    expect((await admin.put(`/group_types/${t.id}/group_specs/k2`, { k2: 'v2b' })).body).toEqual({
      k2: 'v2b',
    });
    expect((await admin.put(`/group_types/${t.id}/group_specs/k2`, { k3: 'x' })).status).toBe(400);
    expect((await admin.get(`/group_types/${t.id}/group_specs/k2`)).body).toEqual({ k2: 'v2b' });
    expect((await admin.get(`/group_types/${t.id}/group_specs`)).body.group_specs).toEqual({
      consistent_group_snapshot_enabled: '<is> False',
      k1: 'v1',
      k2: 'v2b',
    });
    expect((await admin.delete(`/group_types/${t.id}/group_specs/k1`)).status).toBe(202);
    const gone = await admin.get(`/group_types/${t.id}/group_specs/k1`);
    expect([gone.status, gone.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: `Group Type ${t.id} has no specs with key k1.` } },
    ]);
    expect((await admin.get('/group_types/default')).status).toBe(404);

    const vt = await volumeType();
    const g = await admin.post('/groups', { group: { group_type: t.id, volume_types: [vt] } });
    expect(g.status).toBe(202);
    expect((await admin.delete(`/group_types/${t.id}`)).status).toBe(400);
    expect(
      (await admin.post(`/groups/${g.body.group.id}/action`, { delete: { 'delete-volumes': false } })).status,
    ).toBe(202);
    await poll(
      () => admin.get(`/groups/${g.body.group.id}`),
      (r) => r.status === 404,
      'group deleted',
    );
    expect((await admin.delete(`/group_types/${t.id}`)).status).toBe(202);
    expect((await admin.get(`/group_types/${t.id}`)).status).toBe(404);
  }, 180000);

  it('creates groups with member volumes, updates membership, snapshots the group, clones it from the snapshot and deletes everything', async () => {
    const vt = await volumeType();
    const gt = await groupType();
    const c = member.at('3.14');
    expect(
      (await c.at('3.12').post('/groups', { group: { group_type: gt, volume_types: [vt] } })).status,
    ).toBe(404);
    const noTypes = await c.post('/groups', { group: { group_type: gt } });
    expect([noTypes.status, noTypes.body.badRequest?.message]).toEqual([
      400,
      "Invalid input received: 'volume_types' must be specified.",
    ]);
    const unknownType = randomUUID();
    const unknown = await c.post('/groups', { group: { group_type: unknownType, volume_types: [vt] } });
    expect([unknown.status, unknown.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: `Group type ${unknownType} could not be found.` } },
    ]);

    const created = await c.post('/groups', { group: { group_type: gt, volume_types: [vt], name: 'g1' } });
    expect(created.status).toBe(202);
    expect(Object.keys(created.body.group).sort()).toEqual(['id', 'name']);
    const gid = created.body.group.id;
    const shown = await c.get(`/groups/${gid}`);
    expect(shown.body.group).toMatchObject({
      id: gid,
      name: 'g1',
      status: 'available',
      group_type: gt,
      volume_types: [vt],
      group_snapshot_id: null,
      source_group_id: null,
    });
    expect(shown.body.group).not.toHaveProperty('project_id');
    expect((await c.at('3.58').get(`/groups/${gid}`)).body.group.project_id).toBe(member.caller.project);

    const wrongType = await c.post('/volumes', { volume: { size: 1, group_id: gid } });
    expect(wrongType.status).toBe(400);
    const vols: string[] = [];
    for (let i = 0; i < 2; i++) {
      const v = await c.post('/volumes', { volume: { size: 1, volume_type: vt, group_id: gid } });
      expect([v.status, v.body.volume.group_id]).toEqual([202, gid]);
      await c.waitFor('volumes', v.body.volume.id, ['available'], 60000);
      vols.push(v.body.volume.id);
    }
    const [v1, v2] = vols as [string, string];
    const refused = await c.delete(`/volumes/${v1}`);
    expect(refused.status).toBe(400);
    expect((await c.at('3.25').get(`/groups/${gid}?list_volume=true`)).body.group.volumes.sort()).toEqual(
      [...vols].sort(),
    );

    expect((await c.put(`/groups/${gid}`, { group: { name: 'g1b', remove_volumes: v2 } })).status).toBe(202);
    expect((await c.get(`/volumes/${v2}`)).body.volume.group_id).toBeNull();
    expect((await c.get(`/groups/${gid}`)).body.group).toMatchObject({ name: 'g1b', status: 'available' });
    expect((await c.put(`/groups/${gid}`, { group: { remove_volumes: v2 } })).status).toBe(400);
    expect((await c.put(`/groups/${gid}`, { group: { add_volumes: v2, remove_volumes: v2 } })).status).toBe(
      400,
    );
    expect((await c.put(`/groups/${gid}`, { group: {} })).status).toBe(400);
    expect((await c.put(`/groups/${gid}`, { group: { add_volumes: v2 } })).status).toBe(202);
    expect((await c.get(`/volumes/${v2}`)).body.volume.group_id).toBe(gid);

    const gsr = await c.post('/group_snapshots', { group_snapshot: { group_id: gid, name: 'gs1' } });
    expect(gsr.status).toBe(202);
    expect(Object.keys(gsr.body.group_snapshot).sort()).toEqual(['group_type_id', 'id', 'name']);
    const gsid = gsr.body.group_snapshot.id;
    const gs = await poll(
      () => c.get(`/group_snapshots/${gsid}`),
      (r) => r.body?.group_snapshot?.status === 'available',
      'group snapshot available',
    );
    expect(gs.body.group_snapshot).toEqual({
      id: gsid,
      group_id: gid,
      status: 'available',
      created_at: expect.any(String),
      name: 'gs1',
      description: null,
      group_type_id: gt,
    });
    const snaps = (await c.get('/snapshots/detail')).body.snapshots.filter(
      (s: { group_snapshot_id: string }) => s.group_snapshot_id === gsid,
    );
    expect(snaps.map((s: { volume_id: string }) => s.volume_id).sort()).toEqual([...vols].sort());
    expect(snaps.every((s: { status: string }) => s.status === 'available')).toBe(true);
    expect((await c.delete(`/snapshots/${snaps[0].id}`)).status).toBe(400);
    expect((await c.get('/group_snapshots')).body.group_snapshots).toEqual([{ id: gsid, name: 'gs1' }]);
    const busy = await c.post(`/groups/${gid}/action`, { delete: { 'delete-volumes': true } });
    expect([busy.status, busy.body.badRequest?.message]).toEqual([
      400,
      'Invalid group: Group has existing snapshots.',
    ]);

    const clone = await c.post('/groups/action', {
      'create-from-src': { group_snapshot_id: gsid, name: 'from-snap' },
    });
    expect(clone.status).toBe(202);
    const cid = clone.body.group.id;
    const cloned = await poll(
      () => c.get(`/groups/${cid}`),
      (r) => r.body?.group?.status === 'available',
      'cloned group available',
    );
    expect(cloned.body.group).toMatchObject({ group_snapshot_id: gsid, group_type: gt, volume_types: [vt] });
    const cloneVols = (await c.get('/volumes/detail')).body.volumes.filter(
      (v: { group_id: string }) => v.group_id === cid,
    );
    expect(cloneVols).toHaveLength(2);
    expect(
      cloneVols.every(
        (v: { status: string; snapshot_id: string }) =>
          v.status === 'available' && snaps.some((s: { id: string }) => s.id === v.snapshot_id),
      ),
    ).toBe(true);
    expect((await c.delete(`/group_snapshots/${gsid}`)).status).toBe(202);
    await poll(
      () => c.get(`/group_snapshots/${gsid}`),
      (r) => r.status === 404,
      'group snapshot deleted',
    );
    for (const s of snaps) expect((await c.get(`/snapshots/${s.id}`)).status).toBe(404);

    const usage = async (): Promise<number> =>
      (await admin.get(`/os-quota-sets/${member.caller.project}?usage=true`)).body.quota_set.groups.in_use;
    const before = await usage();
    for (const g of [gid, cid]) {
      expect((await c.post(`/groups/${g}/action`, { delete: {} })).status).toBe(400);
      expect((await c.post(`/groups/${g}/action`, { delete: { 'delete-volumes': true } })).status).toBe(202);
    }
    for (const g of [gid, cid])
      await poll(
        () => c.get(`/groups/${g}`),
        (r) => r.status === 404,
        'group deleted',
      );
    for (const v of [...vols, ...cloneVols.map((v: { id: string }) => v.id)])
      expect((await c.get(`/volumes/${v}`)).status).toBe(404);
    expect(await usage()).toBe(before - 2);
    expect((await c.get('/groups/detail')).body.groups).toEqual([]);
  }, 180000);

  it('resets group and group snapshot status (admin, 3.20 / 3.19), refuses unknown actions and answers 413 over the groups quota', async () => {
    const vt = await volumeType();
    const gt = await groupType();
    const project = newProject();
    const c = admin.as(memberOf(project)).at('3.20');
    const gid = (await c.post('/groups', { group: { group_type: gt, volume_types: [vt] } })).body.group.id;
    expect((await c.post(`/groups/${gid}/action`, { reset_status: { status: 'error' } })).status).toBe(403);
    const a = admin.at('3.20');
    expect(
      (await a.at('3.19').post(`/groups/${gid}/action`, { reset_status: { status: 'error' } })).status,
    ).toBe(404);
    for (const status of ['creating', 'error', 'available']) {
      expect((await a.post(`/groups/${gid}/action`, { reset_status: { status } })).status).toBe(202);
      expect((await a.get(`/groups/${gid}`)).body.group.status).toBe(status);
    }
    expect((await a.post(`/groups/${gid}/action`, { reset_status: { status: 'bogus' } })).status).toBe(400);
    const gs = await c.post('/group_snapshots', { group_snapshot: { group_id: gid } });
    expect(gs.status).toBe(202);
    for (const status of ['creating', 'error', 'available']) {
      expect(
        (await a.post(`/group_snapshots/${gs.body.group_snapshot.id}/action`, { reset_status: { status } }))
          .status,
      ).toBe(202);
      expect((await a.get(`/group_snapshots/${gs.body.group_snapshot.id}`)).body.group_snapshot.status).toBe(
        status,
      );
    }
    expect((await c.post(`/groups/${gid}/action`, { explode: {} })).status).toBe(400);
    expect((await admin.put(`/os-quota-sets/${project}`, { quota_set: { groups: 1 } })).status).toBe(200);
    const over = await c.post('/groups', { group: { group_type: gt, volume_types: [vt] } });
    expect([over.status, over.body]).toEqual([
      413,
      {
        overLimit: {
          code: 413,
          message: "GroupLimitExceeded: Maximum number of groups allowed (1) exceeded for quota 'groups'.",
        },
      },
    ]);
  }, 180000);

  it('serves consistency groups and cgsnapshots on v2 and v3: create, member volume, cgsnapshot, create_from_src, delete with force', async () => {
    const vt = await volumeType();
    const project = newProject();
    const c = admin.as(memberOf(project)).at(null);
    const v2 = (path: string) => `${bs.base}/v2/${project}${path}`;
    const missing = await c.raw('POST', v2('/consistencygroups'), { consistencygroup: { name: 'cg' } });
    expect(missing.status).toBe(400);
    const created = await c.raw('POST', v2('/consistencygroups'), {
      consistencygroup: { name: 'cg', volume_types: vt, description: 'd' },
    });
    expect(created.status).toBe(202);
    const cg = created.body.consistencygroup;
    expect(cg).toEqual({
      id: cg.id,
      name: 'cg',
      description: 'd',
      status: 'available',
      availability_zone: expect.any(String),
      created_at: expect.any(String),
      volume_types: [vt],
    });
    const vol = await c.post('/volumes', {
      volume: { size: 1, volume_type: vt, consistencygroup_id: cg.id },
    });
    expect([vol.status, vol.body.volume.consistencygroup_id]).toEqual([202, cg.id]);
    await c.waitFor('volumes', vol.body.volume.id, ['available'], 60000);
    expect((await c.raw('GET', v2('/consistencygroups'))).body.consistencygroups).toEqual([
      { id: cg.id, name: 'cg' },
    ]);
    expect((await c.get(`/consistencygroups/${cg.id}`)).body.consistencygroup).toMatchObject({
      id: cg.id,
      status: 'available',
      volume_types: [vt],
    });

    const cgs = await c.raw('POST', v2('/cgsnapshots'), {
      cgsnapshot: { consistencygroup_id: cg.id, name: 'cs' },
    });
    expect(cgs.status).toBe(202);
    expect(cgs.body.cgsnapshot).toMatchObject({ consistencygroup_id: cg.id, name: 'cs', status: 'creating' });
    const csid = cgs.body.cgsnapshot.id;
    await poll(
      () => c.get(`/cgsnapshots/${csid}`),
      (r) => r.body?.cgsnapshot?.status === 'available',
      'cgsnapshot available',
    );
    expect((await c.get('/cgsnapshots/detail')).body.cgsnapshots.map((s: { id: string }) => s.id)).toEqual([
      csid,
    ]);
    const unknownCg = randomUUID();
    const nf = await c.post('/cgsnapshots', { cgsnapshot: { consistencygroup_id: unknownCg } });
    expect([nf.status, nf.body]).toEqual([
      404,
      { itemNotFound: { code: 404, message: `ConsistencyGroup ${unknownCg} could not be found.` } },
    ]);

    const both = await c.post('/consistencygroups/create_from_src', {
      'consistencygroup-from-src': { cgsnapshot_id: csid, source_cgid: cg.id },
    });
    expect(both.status).toBe(400);
    const fromSnap = await c.post('/consistencygroups/create_from_src', {
      'consistencygroup-from-src': { cgsnapshot_id: csid, name: 'cg2' },
    });
    const fromCg = await c.post('/consistencygroups/create_from_src', {
      'consistencygroup-from-src': { source_cgid: cg.id, name: 'cg3' },
    });
    expect([fromSnap.status, fromCg.status]).toEqual([202, 202]);
    for (const id of [fromSnap.body.consistencygroup.id, fromCg.body.consistencygroup.id]) {
      await poll(
        () => c.get(`/consistencygroups/${id}`),
        (r) => r.body?.consistencygroup?.status === 'available',
        'cg from source available',
      );
      const members = (await c.get('/volumes/detail')).body.volumes.filter(
        (v: { consistencygroup_id: string }) => v.consistencygroup_id === id,
      );
      expect(members).toHaveLength(1);
    }
    const inUse = await c.post(`/consistencygroups/${cg.id}/delete`, { consistencygroup: { force: true } });
    expect([inUse.status, inUse.body.badRequest?.message]).toEqual([
      400,
      'Invalid ConsistencyGroup: Group has existing snapshots.',
    ]);
    expect((await c.delete(`/cgsnapshots/${csid}`)).status).toBe(202);
    await poll(
      () => c.get(`/cgsnapshots/${csid}`),
      (r) => r.status === 404,
      'cgsnapshot deleted',
    );
    expect(
      (await c.put(`/consistencygroups/${cg.id}/update`, { consistencygroup: { name: 'renamed' } })).status,
    ).toBe(202);
    expect((await c.get(`/consistencygroups/${cg.id}`)).body.consistencygroup.name).toBe('renamed');
    for (const id of [cg.id, fromSnap.body.consistencygroup.id, fromCg.body.consistencygroup.id]) {
      expect(
        (await c.raw('POST', v2(`/consistencygroups/${id}/delete`), { consistencygroup: { force: true } }))
          .status,
      ).toBe(202);
    }
    for (const id of [cg.id, fromSnap.body.consistencygroup.id, fromCg.body.consistencygroup.id]) {
      await poll(
        () => c.get(`/consistencygroups/${id}`),
        (r) => r.status === 404,
        'cg deleted',
      );
    }
    expect((await c.get(`/volumes/${vol.body.volume.id}`)).status).toBe(404);
  }, 180000);
});
