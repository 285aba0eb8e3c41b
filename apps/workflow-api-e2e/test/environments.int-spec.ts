import { type ApiServer, Client, type HttpResult, e2eModes, startApiServer } from './support/api-server';

const json = (c: Client, method: string, path: string, body: unknown): Promise<HttpResult> =>
  c.send(method, path, JSON.stringify(body), 'application/json');

/** Mistral's WSME error body. */
const fault = (faultstring: string) => ({ faultcode: 'Client', faultstring, debuginfo: null });
const TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `/v2/environments` as Mistral serves it, on both runtimes (header auth: projects and roles). */
describe.each(e2eModes())('environments API (%s)', (mode) => {
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

  it('creates, shows, updates and deletes an environment by name with Mistral wire formats', async () => {
    // python-mistralclient sends variables as a JSON text.
    const created = await json(alice, 'POST', '/v2/environments', {
      name: 'dev',
      description: 'my test settings',
      variables: JSON.stringify({ host: 'localhost', timeout: 600, verbose: true, nested: { a: [1, 2] } }),
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'dev',
      description: 'my test settings',
      variables: expect.any(String),
      scope: 'private',
      project_id: 'proj-a',
      created_at: expect.stringMatching(TS),
      updated_at: null,
    });
    expect(JSON.parse(created.body.variables)).toEqual({
      host: 'localhost',
      timeout: 600,
      verbose: true,
      nested: { a: [1, 2] },
    });
    // Python's json.dumps separators.
    expect(created.body.variables).toContain('"host": "localhost"');

    const shown = await alice.get('/v2/environments/dev');
    expect(shown).toMatchObject({ status: 200, body: created.body });
    expect(await alice.get('/v2/environments/dev?fields=name,scope')).toMatchObject({
      status: 200,
      body: { id: created.body.id, name: 'dev', scope: 'private' },
    });
    expect(Object.keys((await alice.get('/v2/environments/dev?fields=name')).body)).toEqual(['id', 'name']);
    // Mistral looks environments up by name only: the id is a name nobody has.
    expect(await alice.get(`/v2/environments/${created.body.id}`)).toMatchObject({
      status: 404,
      body: fault(`Environment not found [name=${created.body.id}]`),
    });

    // Objects are accepted as well; absent fields are kept, PUT is on the collection.
    const updated = await json(alice, 'PUT', '/v2/environments', {
      name: 'dev',
      variables: { host: '127.0.0.1' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      name: 'dev',
      description: 'my test settings',
      scope: 'private',
      created_at: created.body.created_at,
    });
    expect(updated.body.updated_at).toMatch(TS);
    expect(JSON.parse(updated.body.variables)).toEqual({ host: '127.0.0.1' });
    const cleared = await json(alice, 'PUT', '/v2/environments', {
      name: 'dev',
      description: null,
      scope: 'private',
    });
    expect(cleared.body).toMatchObject({ description: null, variables: updated.body.variables });
    expect((await alice.get('/v2/environments/dev')).body).toEqual(cleared.body);

    const del = await alice.delete('/v2/environments/dev');
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect(await alice.get('/v2/environments/dev')).toMatchObject({
      status: 404,
      body: fault('Environment not found [name=dev]'),
    });
    expect(await alice.delete('/v2/environments/dev')).toMatchObject({
      status: 404,
      body: fault('Environment not found [name=dev]'),
    });
  });

  it("answers Mistral's errors for duplicate, missing and invalid input", async () => {
    expect((await json(alice, 'POST', '/v2/environments', { name: 'dup', variables: { a: 1 } })).status).toBe(
      201,
    );
    expect(await json(alice, 'POST', '/v2/environments', { name: 'dup', variables: { a: 2 } })).toMatchObject(
      {
        status: 409,
        body: fault("Duplicate entry for Environment ['name', 'project_id']: dup, proj-a"),
      },
    );
    // Unique per project: another project may use the name.
    expect((await json(bob, 'POST', '/v2/environments', { name: 'dup', variables: { b: 1 } })).status).toBe(
      201,
    );

    const cases: [string, 'POST' | 'PUT', unknown, string][] = [
      ['no name', 'POST', { variables: { a: 1 } }, 'Name of the environment is not provided.'],
      ['no name on update', 'PUT', { variables: { a: 1 } }, 'Name of the environment is not provided.'],
      ['unknown attribute', 'POST', { name: 'x', bogus: 1 }, 'Unknown attribute for argument env: bogus'],
      [
        'id in a create',
        'POST',
        { name: 'x', id: '123e4567-e89b-12d3-a456-426614174000' },
        "Please, check your environment definition. Only: ['name', 'description', 'variables', 'scope'] are allowed as definition keys.",
      ],
      [
        'created_at in an update',
        'PUT',
        { name: 'dup', created_at: '2020-01-01 00:00:00' },
        "Please, check your environment definition. Only: ['description', 'variables', 'scope'] are allowed as definition keys.",
      ],
      [
        'project_id',
        'POST',
        { name: 'x', project_id: 'other' },
        "Invalid input for field/attribute project_id. Value: 'other'. Cannot set read only field.",
      ],
      [
        'a bad scope',
        'POST',
        { name: 'x', scope: 'bogus' },
        "Invalid input for field/attribute scope. Value: 'bogus'. Value should be one of: private, public",
      ],
      [
        'a number as name',
        'POST',
        { name: 5 },
        "Invalid input for field/attribute name. Value: '5'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'",
      ],
      [
        'variables not a dictionary',
        'POST',
        { name: 'x', variables: [1, 2] },
        'JsonType field value must be a dictionary [actual=[1, 2]]',
      ],
      [
        'variables text not a dictionary',
        'POST',
        { name: 'x', variables: '"text"' },
        'JsonType field value must be a dictionary [actual=text]',
      ],
    ];
    for (const [what, method, body, message] of cases) {
      const res = await json(alice, method, '/v2/environments', body);
      expect({ what, status: res.status, body: res.body }).toEqual({
        what,
        status: 400,
        body: fault(message),
      });
    }
    const badJson = await json(alice, 'POST', '/v2/environments', { name: 'x', variables: '{not json' });
    expect(badJson.status).toBe(400);
    expect(badJson.body.faultstring).toMatch(
      /^Invalid input for field\/attribute variables\. Value: '\{not json'\. /,
    );
    expect(await json(alice, 'POST', '/v2/environments', ['name'])).toMatchObject({ status: 400 });
    expect(await json(alice, 'PUT', '/v2/environments', { name: 'nope', variables: {} })).toMatchObject({
      status: 404,
      body: fault('Environment not found [name=nope]'),
    });
    expect((await alice.get('/v2/environments/x')).status).toBe(404);
  });

  it('shows public environments to every project read-only; publishing is for admins', async () => {
    const denied = fault('Operation forbidden (insufficient permissions)');
    expect(
      await json(alice, 'POST', '/v2/environments', { name: 'pub', scope: 'public', variables: {} }),
    ).toMatchObject({ status: 403, body: denied });
    expect(
      (await json(alice, 'POST', '/v2/environments', { name: 'priv_a', variables: { x: 1 } })).status,
    ).toBe(201);
    expect(await json(alice, 'PUT', '/v2/environments', { name: 'priv_a', scope: 'public' })).toMatchObject({
      status: 403,
      body: denied,
    });
    const shared = await json(admin, 'POST', '/v2/environments', {
      name: 'shared',
      scope: 'public',
      variables: { region: 'eu' },
    });
    expect(shared.status).toBe(201);
    expect(shared.body).toMatchObject({ scope: 'public', project_id: 'proj-admin' });

    // Others read it, in GETs and lists, but may not change or delete it.
    expect(await bob.get('/v2/environments/shared')).toMatchObject({ status: 200, body: shared.body });
    const forbidden = fault(`Can not access Environment resource of other projects, ID: ${shared.body.id}`);
    expect(
      await json(bob, 'PUT', '/v2/environments', { name: 'shared', variables: { region: 'us' } }),
    ).toMatchObject({ status: 403, body: forbidden });
    expect(await bob.delete('/v2/environments/shared')).toMatchObject({ status: 403, body: forbidden });
    expect(JSON.parse((await bob.get('/v2/environments/shared')).body.variables)).toEqual({ region: 'eu' });

    // Private ones stay in their project, for admins too (Mistral's queries have no admin bypass here).
    expect(await bob.get('/v2/environments/priv_a')).toMatchObject({
      status: 404,
      body: fault('Environment not found [name=priv_a]'),
    });
    expect((await bob.delete('/v2/environments/priv_a')).status).toBe(404);
    expect((await admin.get('/v2/environments/priv_a')).status).toBe(404);
    const names = async (c: Client) =>
      ((await c.get('/v2/environments')).body.environments as { name: string }[]).map((e) => e.name).sort();
    expect(await names(bob)).toEqual(['dup', 'shared']);
    expect(await names(alice)).toEqual(['dup', 'priv_a', 'shared']);
    expect(await names(admin)).toEqual(['shared']);

    // A project's own environment wins over a public one of the same name.
    expect(
      (await json(bob, 'POST', '/v2/environments', { name: 'shared', variables: { region: 'local' } }))
        .status,
    ).toBe(201);
    expect(JSON.parse((await bob.get('/v2/environments/shared')).body.variables)).toEqual({
      region: 'local',
    });
    expect((await bob.delete('/v2/environments/shared')).status).toBe(204);
    expect(JSON.parse((await bob.get('/v2/environments/shared')).body.variables)).toEqual({ region: 'eu' });
    expect((await admin.delete('/v2/environments/shared')).status).toBe(204);
  });

  it('lists with marker, limit, sort_keys, sort_dirs, fields and filters', async () => {
    const carol = new Client(server.baseUrl).as({
      'x-project-id': 'proj-c',
      'x-user-id': 'carol',
      'x-roles': 'member',
    });
    const made: { id: string; name: string }[] = [];
    for (const [name, variables, description] of [
      ['e1', { k: 1 }, 'first'],
      ['e2', { k: 2 }, 'second'],
      ['e3', { k: 1 }, null],
    ] as const) {
      const res = await json(carol, 'POST', '/v2/environments', { name, variables, description });
      expect(res.status).toBe(201);
      made.push(res.body);
    }
    const list = async (q: string) => {
      const res = await carol.get(`/v2/environments${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 200 });
      return res.body as { environments: Record<string, unknown>[]; next?: string };
    };
    const names = (b: { environments: Record<string, unknown>[] }) => b.environments.map((e) => e['name']);

    const all = await list('');
    expect(all.next).toBeUndefined();
    expect(new Set(names(all))).toEqual(new Set(['e1', 'e2', 'e3']));
    expect(all.environments.every((e) => typeof e['variables'] === 'string')).toBe(true);

    const byName = await list('?sort_keys=name&sort_dirs=desc&limit=2');
    expect(names(byName)).toEqual(['e3', 'e2']);
    const e2 = made.find((e) => e.name === 'e2')!;
    expect(byName.next).toBe(
      `${server.baseUrl}/v2/environments?sort_keys=name,id&sort_dirs=desc,asc&limit=2&marker=${e2.id}`,
    );
    const rest = await list(`?sort_keys=name,id&sort_dirs=desc,asc&limit=2&marker=${e2.id}`);
    expect(names(rest)).toEqual(['e1']);
    expect(rest.next).toBeUndefined();
    // One direction per key, a repeated one included (Mistral reads sort_dirs as a plain list).
    const twiceDesc = await list('?sort_keys=scope,name&sort_dirs=desc,desc&limit=2');
    expect(names(twiceDesc)).toEqual(['e3', 'e2']);
    expect(twiceDesc.next).toBe(
      `${server.baseUrl}/v2/environments?sort_keys=scope,name,id&sort_dirs=desc,desc,asc&limit=2&marker=${e2.id}`,
    );

    const fields = await list('?fields=name,scope&sort_keys=name');
    expect(fields.environments).toEqual(
      ['e1', 'e2', 'e3'].map((n) => ({ id: made.find((e) => e.name === n)!.id, name: n, scope: 'private' })),
    );
    expect(names(await list('?name=e2'))).toEqual(['e2']);
    expect(names(await list('?name=in:e1,e3&sort_keys=name'))).toEqual(['e1', 'e3']);
    expect(names(await list('?name=neq:e1&sort_keys=name'))).toEqual(['e2', 'e3']);
    expect(names(await list('?description=has:ir&sort_keys=name'))).toEqual(['e1']);
    expect(names(await list(`?variables=${encodeURIComponent('{"k": 1}')}&sort_keys=name`))).toEqual([
      'e1',
      'e3',
    ]);
    expect(names(await list('?scope=private&sort_keys=name'))).toEqual(['e1', 'e2', 'e3']);
    expect(names(await list('?scope=public'))).toEqual([]);
    expect(names(await list('?created_at=gte:2000-01-01 00:00:00&sort_keys=name'))).toEqual([
      'e1',
      'e2',
      'e3',
    ]);
    const filtered = await list('?name=e1&limit=1');
    expect(filtered.next).toBe(
      `${server.baseUrl}/v2/environments?sort_keys=created_at,id&sort_dirs=asc,asc&name=eq:e1&limit=1&marker=${made[0]!.id}`,
    );

    const errors: [string, number, string][] = [
      ['?limit=0', 400, 'Limit must be positive.'],
      ['?limit=x', 400, "Invalid input for field/attribute limit. Value: 'x'. unable to convert to int"],
      ['?sort_dirs=up', 400, "Unknown sort direction, must be 'desc' or 'asc'."],
      [
        '?sort_keys=name&sort_dirs=asc,desc',
        400,
        'Length of sort_keys must be equal or greater than sort_dirs.',
      ],
      [
        '?sort_keys=name&sort_dirs=desc,desc',
        400,
        'Length of sort_keys must be equal or greater than sort_dirs.',
      ],
      ['?sort_keys=bogus', 400, 'Sort key supplied is invalid: bogus'],
      [
        '?fields=bogus',
        400,
        'Some fields do not exist  [bogus], please choose from [id, name, description, variables, scope, project_id, created_at, updated_at]',
      ],
      ['?bogus=1', 400, 'Unknown argument: "bogus"'],
      ['?all_projects=true', 400, 'Unknown argument: "all_projects"'],
      [
        '?scope=eq:public',
        400,
        "Invalid input for field/attribute scope. Value: 'eq:public'. Value should be one of: private, public",
      ],
      [
        '?marker=123e4567-e89b-12d3-a456-426614174000',
        404,
        'Environment not found [id=123e4567-e89b-12d3-a456-426614174000]',
      ],
    ];
    for (const [q, status, message] of errors) {
      const res = await carol.get(`/v2/environments${q}`);
      expect({ q, status: res.status, body: res.body }).toEqual({ q, status, body: fault(message) });
    }
  });
});

/** The `environments:*` rules are enforced before anything else, and a deployment's file replaces them. */
describe.each(e2eModes())('environments policy (%s)', (mode) => {
  let server: ApiServer;

  beforeAll(async () => {
    server = await startApiServer(mode, {
      authMode: 'headers',
      policyOverrides: {
        'environments:create': 'rule:admin_only',
        'environments:delete': 'rule:admin_only',
        'environments:publicize': 'role:member',
      },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("denies what the rules deny with Mistral's 403, whatever the request", async () => {
    const base = new Client(server.baseUrl);
    const member = base.as({ 'x-project-id': 'proj-m', 'x-user-id': 'mia', 'x-roles': 'member' });
    const reader = base.as({ 'x-project-id': 'proj-m', 'x-user-id': 'rex', 'x-roles': 'reader' });
    const admin = base.as({ 'x-project-id': 'proj-m', 'x-user-id': 'ada', 'x-roles': 'admin' });
    const denied = fault('Operation forbidden (insufficient permissions)');
    expect(await json(member, 'POST', '/v2/environments', { name: 'p', variables: {} })).toMatchObject({
      status: 403,
      body: denied,
    });
    // The rule comes first: even an invalid body is refused with the 403.
    expect(await json(member, 'POST', '/v2/environments', { bogus: true })).toMatchObject({
      status: 403,
      body: denied,
    });
    expect((await json(admin, 'POST', '/v2/environments', { name: 'p', variables: {} })).status).toBe(201);
    // Members may publish under this file; readers may read but not delete.
    expect(
      (await json(member, 'PUT', '/v2/environments', { name: 'p', scope: 'public' })).body,
    ).toMatchObject({ scope: 'public' });
    expect((await reader.get('/v2/environments/p')).status).toBe(200);
    expect(await member.delete('/v2/environments/p')).toMatchObject({ status: 403, body: denied });
    expect((await admin.delete('/v2/environments/p')).status).toBe(204);
  });
});
