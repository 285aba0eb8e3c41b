import { admin, Client, memberOf, MODES, newProject, startBlockStorage, type BlockStorage } from './harness';

/**
 * The volumes detail list is rendered by the database (JSON text), `GET /volumes/{id}` by the
 * domain view: for every microversion that changes the view, admin and member, with and without
 * the project segment, both must describe each volume identically.
 */
describe.each(MODES)('volumes detail list rendered in the database (%s)', (mode) => {
  let bs: BlockStorage;
  let api: Client;
  const project = newProject();
  const ids: string[] = [];

  beforeAll(async () => {
    bs = await startBlockStorage(mode);
    api = new Client(bs.base);
    const member = api.as(memberOf(project));
    const encType = (await api.post('/types', { volume_type: { name: `enc-${mode}-${Date.now()}` } })).body
      .volume_type;
    const e = await api.post(`/types/${encType.id}/encryption`, {
      encryption: {
        provider: 'luks',
        control_location: 'front-end',
        cipher: 'aes-xts-plain64',
        key_size: 256,
      },
    });
    expect(e.status).toBe(200);
    const plainR = await member.post('/volumes', {
      volume: {
        size: 1,
        name: 'plain "quoted" \\ ünï',
        description: 'line\nbreak',
        metadata: { a: '1', 'k.q': 'v"\u0001\\ ü' },
      },
    });
    if (plainR.status !== 202) throw new Error(plainR.text);
    const plain = plainR.body.volume;
    const enc = (await member.post('/volumes', { volume: { size: 2, volume_type: encType.id } })).body.volume;
    const ro = (await member.post('/volumes', { volume: { size: 1 } })).body.volume;
    for (const v of [plain, enc, ro]) {
      if (!v) throw new Error(`create failed: ${JSON.stringify([plain, enc, ro])}`);
      ids.push(v.id);
      await member.waitFor('volumes', v.id, ['available']);
    }
    expect(
      (await member.post(`/volumes/${ro.id}/action`, { 'os-update_readonly_flag': { readonly: true } }))
        .status,
    ).toBe(202);
    expect(
      (await member.post(`/volumes/${ro.id}/action`, { 'os-set_bootable': { bootable: true } })).status,
    ).toBe(200);
    expect(
      (await api.post(`/volumes/${plain.id}/action`, { 'os-reset_status': { status: 'error' } })).status,
    ).toBe(202);
  });
  afterAll(async () => {
    await bs?.close();
  });

  const versions = [null, '3.0', '3.13', '3.21', '3.48', '3.61', '3.63', '3.64', '3.65', '3.69', '3.71'];
  it.each(versions)('matches GET /volumes/{id} at microversion %s', async (mv) => {
    for (const caller of [admin, memberOf(project)]) {
      const c = api.as(caller).at(mv);
      for (const withProject of [true, false]) {
        const query = caller === admin ? `?all_tenants=1&project_id=${project}` : '';
        const list = await c.raw('GET', `${c.url('/volumes/detail', withProject)}${query}`);
        expect(list.status).toBe(200);
        expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
        const listed = new Map<string, unknown>(list.body.volumes.map((v: { id: string }) => [v.id, v]));
        expect([...listed.keys()].sort()).toEqual([...ids].sort());
        for (const id of ids) {
          const shown = await c.raw('GET', c.url(`/volumes/${id}`, withProject));
          expect(shown.status).toBe(200);
          expect(listed.get(id)).toEqual(shown.body.volume);
          expect(Object.keys(listed.get(id) as object)).toEqual(Object.keys(shown.body.volume));
        }
      }
    }
  });

  it('pages with volumes_links and count exactly as before', async () => {
    const member = api.as(memberOf(project));
    const first = await member.get('/volumes/detail?limit=2&with_count=true&sort=created_at:asc');
    expect(first.status).toBe(200);
    expect(Object.keys(first.body)).toEqual(['volumes', 'volumes_links', 'count']);
    expect(first.body.count).toBe(3);
    const last = first.body.volumes[1].id;
    expect(first.body.volumes_links).toEqual([
      {
        rel: 'next',
        href: `${bs.base}/v3/${project}/volumes/detail?limit=2&with_count=true&sort=created_at%3Aasc&marker=${last}`,
      },
    ]);
    const next = await member.raw('GET', first.body.volumes_links[0].href);
    expect(next.body.volumes.map((v: { id: string }) => v.id)).not.toContain(last);
    expect(next.body.volumes).toHaveLength(1);
    expect(Object.keys(next.body)).toEqual(['volumes', 'count']);
    const empty = await api.as(memberOf(newProject())).get('/volumes/detail');
    expect(empty.body).toEqual({ volumes: [] });
  });
});
