import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const MODULE =
  'export class Echo {\n  constructor(input) { this.input = input; }\n  run() { return this.input; }\n}\n';

const json = (c: Client, method: string, path: string, body: unknown) =>
  c.send(method, path, JSON.stringify(body), 'application/json');

/** `/v2/code_sources` and `/v2/dynamic_actions` over HTTP: exact bodies, errors and visibility between projects. */
describe.each(e2eModes())('code sources and dynamic actions (%s)', (mode) => {
  let server: ApiServer;
  let alice: Client;
  let bob: Client;
  let admin: Client;

  beforeAll(async () => {
    server = await startApiServer(mode, { authMode: 'headers' });
    const base = new Client(server.baseUrl);
    alice = base.as({ 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member' });
    bob = base.as({ 'x-project-id': 'proj-b', 'x-user-id': 'bob', 'x-roles': 'member' });
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-user-id': 'ada', 'x-roles': 'admin' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates, shows, lists, updates and deletes code sources with Mistral wire formats', async () => {
    const created = await alice.post('/v2/code_sources?name=echo&scope=private&namespace=', MODULE);
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/json/);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'echo',
      namespace: '',
      content: MODULE,
      version: 1,
      project_id: 'proj-a',
      scope: 'private',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: null,
    });
    const id = created.body.id as string;
    expect((await alice.get(`/v2/code_sources/${id}`)).body).toEqual(created.body);
    expect((await alice.get('/v2/code_sources/echo?namespace=')).body).toEqual(created.body);

    const dup = await alice.post('/v2/code_sources?name=echo', MODULE);
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({
      faultstring: "Duplicate entry for CodeSource ['name', 'namespace', 'project_id']: echo, , proj-a",
    });

    const bad = await alice.post('/v2/code_sources?name=bad', 'export class A {\n  run( {\n}\n');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      faultstring: expect.stringMatching(
        /^Invalid code source bad: SyntaxError: .+ \(line \d+, column \d+\)$/,
      ),
    });
    const unknownParam = await alice.post('/v2/code_sources?name=x&foo=1', MODULE);
    expect(unknownParam.status).toBe(400);
    expect(unknownParam.body).toEqual({ faultstring: 'Unknown argument: "foo"' });
    // Publishing is admin-only.
    const pub = await alice.post('/v2/code_sources?name=pub&scope=public', MODULE);
    expect(pub.status).toBe(403);
    expect(pub.body).toEqual({ faultstring: 'Operation forbidden (insufficient permissions)' });

    const missing = await alice.get('/v2/code_sources/nope?namespace=ns');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      faultcode: 'Client',
      faultstring: 'Code Source not found [name=nope,namespace=ns]',
      debuginfo: null,
    });

    const updated = await alice.put(
      '/v2/code_sources?identifier=echo&scope=private&namespace=',
      `${MODULE}// v2\n`,
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      ...created.body,
      content: `${MODULE}// v2\n`,
      version: 2,
      updated_at: expect.stringMatching(TIMESTAMP),
    });

    const list = await alice.get('/v2/code_sources?fields=name,version&limit=1');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      code_sources: [{ id, name: 'echo', version: 2 }],
      next: `${server.baseUrl}/v2/code_sources?sort_keys=created_at,id&sort_dirs=asc,asc&limit=1&marker=${id}&fields=id,name,version`,
    });
    expect((await bob.get('/v2/code_sources')).body).toEqual({ code_sources: [] });
    expect((await bob.get(`/v2/code_sources/${id}`)).status).toBe(404);

    expect((await alice.delete(`/v2/code_sources/${id}`)).status).toBe(204);
    expect((await alice.get(`/v2/code_sources/${id}`)).status).toBe(404);
  });

  it('creates, updates and deletes dynamic actions; public ones are read-only to other projects', async () => {
    const source = await admin.post('/v2/code_sources?name=shared&scope=public&namespace=n1', MODULE);
    expect(source.status).toBe(201);

    const created = await json(alice, 'POST', '/v2/dynamic_actions', {
      name: 'echo_action',
      class_name: 'Echo',
      code_source_name: 'shared',
      namespace: 'n1',
      scope: 'private',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'echo_action',
      namespace: 'n1',
      code_source_id: source.body.id,
      code_source_name: 'shared',
      class_name: 'Echo',
      project_id: 'proj-a',
      scope: 'private',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: null,
    });

    const noSource = await json(alice, 'POST', '/v2/dynamic_actions', {
      name: 'x',
      class_name: 'Echo',
      namespace: 'n1',
    });
    expect(noSource.status).toBe(400);
    expect(noSource.body).toEqual({
      faultcode: 'Client',
      faultstring: "Either 'code_source_id' or 'code_source_name' must be provided.",
      debuginfo: null,
    });
    const wrongNamespace = await json(alice, 'POST', '/v2/dynamic_actions', {
      name: 'x',
      class_name: 'Echo',
      code_source_name: 'shared',
    });
    expect(wrongNamespace.status).toBe(404);
    expect(wrongNamespace.body.faultstring).toBe('Code Source not found [name=shared,namespace=]');
    const unknownAttr = await json(alice, 'POST', '/v2/dynamic_actions', { name: 'x', colour: 'red' });
    expect(unknownAttr.status).toBe(400);
    expect(unknownAttr.body.faultstring).toBe('Unknown attribute for argument dyn_action: colour');
    const dup = await json(alice, 'POST', '/v2/dynamic_actions', {
      name: 'echo_action',
      class_name: 'Echo',
      code_source_id: source.body.id,
      namespace: 'n1',
    });
    expect(dup.status).toBe(409);
    expect(dup.body.faultstring).toBe(
      'Duplicate entry for dynamic action definition [name=echo_action, namespace=n1, project_id=proj-a]',
    );

    const updated = await json(alice, 'PUT', '/v2/dynamic_actions', {
      name: 'echo_action',
      namespace: 'n1',
      class_name: 'Other',
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({
      ...created.body,
      class_name: 'Other',
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    const byId = await json(alice, 'PUT', '/v2/dynamic_actions', {});
    expect(byId.status).toBe(400);
    expect(byId.body.faultstring).toBe("Either 'name' or 'id' must be provided.");

    // Another project sees neither the private action nor can it change the public code source.
    expect((await bob.get('/v2/dynamic_actions/echo_action?namespace=n1')).status).toBe(404);
    expect((await bob.get(`/v2/code_sources/${source.body.id}`)).status).toBe(200);
    const foreign = await bob.put('/v2/code_sources?identifier=shared&namespace=n1', MODULE);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({
      faultstring: `Can not access CodeSource resource of other projects, ID: ${source.body.id}`,
    });

    const listed = await alice.get('/v2/dynamic_actions?namespace=n1');
    expect(listed.body).toEqual({ dynamic_actions: [updated.body] });
    const missing = await alice.delete('/v2/dynamic_actions/nope?namespace=n1');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      faultcode: 'Client',
      faultstring: 'Dynamic Action not found [name=nope,namespace=n1]',
      debuginfo: null,
    });
    expect((await alice.delete(`/v2/dynamic_actions/${created.body.id as string}`)).status).toBe(204);
    expect((await alice.get('/v2/dynamic_actions')).body).toEqual({ dynamic_actions: [] });
  });

  it('lists the API process in /v2/services', async () => {
    const res = await alice.get('/v2/services');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ services: [{ name: expect.stringMatching(/^.+_\d+$/), type: 'api_group' }] });
    expect((await alice.get('/v2/services?limit=1')).status).toBe(400);
  });
});
