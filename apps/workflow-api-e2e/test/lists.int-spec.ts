import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { simpleWorkflow } from './support/fixtures';

type Wf = { id: string; name: string; tags: string[]; created_at: string };

describe.each(e2eModes())('definition lists (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;
  const created: Wf[] = [];

  beforeAll(async () => {
    server = await startApiServer(mode);
    api = new Client(server.baseUrl);
    const tags = [['a'], ['a', 'b'], ['b'], [], ['a', 'b', 'c']];
    for (let i = 0; i < 5; i++) {
      const res = await api.post(
        '/v2/workflows',
        simpleWorkflow(`lw${i}`, tags[i]!.length ? `  tags: [${tags[i]!.join(', ')}]\n` : ''),
      );
      created.push(res.body.workflows[0]);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  const names = (res: { body: { workflows: Wf[] } }) => res.body.workflows.map((w) => w.name);
  const byCreation = () =>
    [...created].sort((x, y) =>
      x.created_at === y.created_at ? (x.id < y.id ? -1 : 1) : x.created_at < y.created_at ? -1 : 1,
    );

  it('lists in creation order (id breaks ties) without a next link when the page is not full', async () => {
    const res = await api.get('/v2/workflows');
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(byCreation().map((w) => w.name));
    expect(res.body.next).toBeUndefined();
    expect(Object.keys(res.body)).toEqual(['workflows']);
    expect(typeof res.body.workflows[0].interface).toBe('string');
  });

  it('pages with limit and marker and builds the next link as Mistral does', async () => {
    const order = byCreation();
    const first = await api.get('/v2/workflows?limit=2');
    expect(names(first)).toEqual(order.slice(0, 2).map((w) => w.name));
    expect(first.body.next).toBe(
      `${server.baseUrl}/v2/workflows?sort_keys=created_at,id&sort_dirs=asc,asc&limit=2&marker=${order[1]!.id}`,
    );
    const second = await api.get(first.body.next.slice(server.baseUrl.length));
    expect(names(second)).toEqual(order.slice(2, 4).map((w) => w.name));
    const third = await api.get(second.body.next.slice(server.baseUrl.length));
    expect(names(third)).toEqual(order.slice(4).map((w) => w.name));
    expect(third.body.next).toBeUndefined();
  });

  it('sorts by any key and direction, pads directions and keeps paging consistent', async () => {
    const res = await api.get('/v2/workflows?sort_keys=name&sort_dirs=desc&limit=2');
    expect(names(res)).toEqual(['lw4', 'lw3']);
    expect(res.body.next).toBe(
      `${server.baseUrl}/v2/workflows?sort_keys=name,id&sort_dirs=desc,asc&limit=2&marker=${res.body.workflows[1].id}`,
    );
    const seen: string[] = [];
    let path: string | undefined = '/v2/workflows?sort_keys=updated_at,name&sort_dirs=desc&limit=2';
    while (path) {
      const page: { body: { workflows: Wf[]; next?: string } } = await api.get(path);
      seen.push(...page.body.workflows.map((w) => w.name));
      path = page.body.next?.slice(server.baseUrl.length);
    }
    expect(seen).toEqual(['lw0', 'lw1', 'lw2', 'lw3', 'lw4']);
    const upper = await api.get('/v2/workflows?sort_keys=%20NAME%20&sort_dirs=DESC');
    expect(names(upper)).toEqual(['lw4', 'lw3', 'lw2', 'lw1', 'lw0']);
  });

  it('selects fields and carries them in the next link', async () => {
    const res = await api.get('/v2/workflows?fields=name&limit=1');
    expect(res.body.workflows).toEqual([{ id: byCreation()[0]!.id, name: byCreation()[0]!.name }]);
    expect(res.body.next).toMatch(/&fields=id,name$/);
    const bad = await api.get('/v2/workflows?fields=name,bogus');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      faultcode: 'Client',
      faultstring:
        'Some fields do not exist  [bogus], please choose from [id, name, namespace, input, interface, definition, checksum, tags, scope, project_id, created_at, updated_at]',
      debuginfo: null,
    });
  });

  it('filters with plain values, operators and tags', async () => {
    expect(names(await api.get('/v2/workflows?name=lw1'))).toEqual(['lw1']);
    expect(names(await api.get('/v2/workflows?name=eq:lw1'))).toEqual(['lw1']);
    expect(names(await api.get('/v2/workflows?name=in:lw1,lw3&sort_keys=name'))).toEqual(['lw1', 'lw3']);
    expect(names(await api.get('/v2/workflows?name=nin:lw1,lw3&sort_keys=name'))).toEqual([
      'lw0',
      'lw2',
      'lw4',
    ]);
    expect(names(await api.get('/v2/workflows?name=neq:lw1&sort_keys=name'))).toEqual([
      'lw0',
      'lw2',
      'lw3',
      'lw4',
    ]);
    expect(names(await api.get('/v2/workflows?name=gt:lw2&sort_keys=name'))).toEqual(['lw3', 'lw4']);
    expect(names(await api.get('/v2/workflows?name=gte:lw2&sort_keys=name'))).toEqual(['lw2', 'lw3', 'lw4']);
    expect(names(await api.get('/v2/workflows?name=lt:lw2&sort_keys=name'))).toEqual(['lw0', 'lw1']);
    expect(names(await api.get('/v2/workflows?name=lte:lw2&sort_keys=name'))).toEqual(['lw0', 'lw1', 'lw2']);
    expect(names(await api.get('/v2/workflows?definition=has:lw3'))).toEqual(['lw3']);
    expect(names(await api.get('/v2/workflows?tags=a&sort_keys=name'))).toEqual(['lw0', 'lw1', 'lw4']);
    expect(names(await api.get('/v2/workflows?tags=a,b&sort_keys=name'))).toEqual(['lw1', 'lw4']);
    expect(names(await api.get('/v2/workflows?scope=private&input=&sort_keys=name'))).toEqual([
      'lw0',
      'lw1',
      'lw2',
      'lw3',
      'lw4',
    ]);
    expect(names(await api.get('/v2/workflows?scope=public'))).toEqual([]);
    const first = byCreation()[0]!;
    expect(
      names(
        await api.get(`/v2/workflows?created_at=gte:${encodeURIComponent(first.created_at)}&sort_keys=name`),
      ),
    ).toHaveLength(5);
    expect(names(await api.get('/v2/workflows?created_at=lt:2000-01-01%2000:00:00'))).toEqual([]);
    expect(names(await api.get('/v2/workflows?updated_at=gt:2000-01-01'))).toEqual([]);
    const withNext = await api.get('/v2/workflows?name=in:lw1,lw3&tags=b&limit=1&sort_keys=name');
    expect(withNext.body.next).toBe(
      `${server.baseUrl}/v2/workflows?sort_keys=name,id&sort_dirs=asc,asc&name=in:lw1,lw3&tags=eq:b&limit=1&marker=${withNext.body.workflows[0].id}`,
    );
  });

  it.each([
    ['limit=0', 'Limit must be positive.'],
    ['limit=-3', 'Limit must be positive.'],
    ['limit=abc', "Invalid input for field/attribute limit. Value: 'abc'. unable to convert to int"],
    ['sort_dirs=up', "Unknown sort direction, must be 'desc' or 'asc'."],
    ['sort_keys=name&sort_dirs=asc,desc', 'Length of sort_keys must be equal or greater than sort_dirs.'],
    ['sort_keys=bogus', 'Sort key supplied is invalid: bogus'],
    ['marker=not-a-uuid', "Invalid input for field/attribute marker. Value: 'not-a-uuid'. Invalid UUID"],
    ['bogus=1', 'Unknown argument: "bogus"'],
    [
      'created_at=gte:yesterday',
      "Invalid input for field/attribute created_at. Value: 'yesterday'. Invalid date/time format",
    ],
    [
      'scope=shared',
      "Invalid input for field/attribute scope. Value: 'shared'. Value should be one of: private, public",
    ],
    [
      'all_projects=maybe',
      "Invalid input for field/attribute all_projects. Value: 'maybe'. Wrong type. Expected a boolean (true or false)",
    ],
  ])('rejects %s with 400', async (q, message) => {
    const res = await api.get(`/v2/workflows?${q}`);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ faultcode: 'Client', faultstring: message, debuginfo: null });
  });

  it('answers 404 for a marker that does not exist', async () => {
    const res = await api.get('/v2/workflows?marker=00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(404);
    expect(res.body.faultstring).toBe(
      'Workflow not found [workflow_id=00000000-0000-4000-8000-000000000000]',
    );
  });

  it('clamps limit to 1000', async () => {
    const res = await api.get('/v2/workflows?limit=5000');
    expect(res.status).toBe(200);
    expect(res.body.workflows).toHaveLength(5);
  });
});
