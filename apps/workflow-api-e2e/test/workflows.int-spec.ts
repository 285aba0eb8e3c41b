import { createHash } from 'node:crypto';
import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { DIRECT_WF, TIMESTAMP, TWO_WORKFLOWS, UUID, simpleWorkflow } from './support/fixtures';

const md5 = (s: string) => createHash('md5').update(s, 'utf8').digest('hex');

describe.each(e2eModes())('workflows API (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;

  beforeAll(async () => {
    server = await startApiServer(mode);
    api = new Client(server.baseUrl);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates a workflow and answers with every field in Mistral formats', async () => {
    const res = await api.post('/v2/workflows', DIRECT_WF);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toContain('application/json');
    const [wf] = res.body.workflows;
    expect(wf).toEqual({
      id: expect.stringMatching(UUID),
      name: 'create_vm',
      namespace: '',
      input: 'vm_name, image_ref, flavor_ref="m1.small", retries="3"',
      interface: {
        input: ['vm_name', 'image_ref', { flavor_ref: 'm1.small' }, { retries: 3 }],
        output: ['vm_id'],
      },
      definition: DIRECT_WF,
      checksum: md5(DIRECT_WF),
      tags: ['vm', 'example'],
      scope: 'private',
      project_id: '<default-project>',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: null,
    });

    const byName = await api.get('/v2/workflows/create_vm');
    expect(byName.status).toBe(200);
    expect(byName.body).toEqual({
      ...wf,
      interface:
        '{"input": ["vm_name", "image_ref", {"flavor_ref": "m1.small"}, {"retries": 3}], "output": ["vm_id"]}',
    });
    const byId = await api.get(`/v2/workflows/${wf.id}`);
    expect(byId.body).toEqual(byName.body);
  });

  it('stores each workflow of a multi-workflow document alone, re-serialised with version', async () => {
    const res = await api.post('/v2/workflows', TWO_WORKFLOWS);
    expect(res.status).toBe(201);
    const names = res.body.workflows.map((w: { name: string }) => w.name);
    expect(names).toEqual(['wf_a', 'wf_b']);
    const b = res.body.workflows[1];
    expect(b.definition).toMatch(/^version: '2.0'\nwf_b:\n/);
    expect(b.definition).not.toContain('wf_a');
    expect(b.checksum).toBe(md5(b.definition));
    expect(b.input).toBe('x, y="2"');
  });

  it('selects fields of a single workflow', async () => {
    const res = await api.get('/v2/workflows/wf_a?fields=name,tags');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: expect.stringMatching(UUID), name: 'wf_a', tags: [] });
    const bad = await api.get('/v2/workflows/wf_a?fields=bogus');
    expect(bad.status).toBe(400);
    expect(bad.body.faultstring).toBe(
      'Some fields do not exist  [bogus], please choose from [id, name, namespace, input, interface, definition, checksum, tags, scope, project_id, created_at, updated_at]',
    );
  });

  it('answers 404 with the reference message for unknown names, ids and namespaces', async () => {
    const res = await api.get('/v2/workflows/nope');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      faultcode: 'Client',
      faultstring: 'Workflow not found [workflow_identifier=nope, namespace=]',
      debuginfo: null,
    });
    const ns = await api.get('/v2/workflows/wf_a?namespace=other');
    expect(ns.status).toBe(404);
    expect(ns.body.faultstring).toBe('Workflow not found [workflow_identifier=wf_a, namespace=other]');
    const id = await api.get('/v2/workflows/00000000-0000-4000-8000-000000000000');
    expect(id.status).toBe(404);
  });

  it('refuses a duplicate name in a namespace with 409, but allows it in another namespace', async () => {
    const dup = await api.post('/v2/workflows', simpleWorkflow('wf_a'));
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({
      faultstring:
        "Duplicate entry for WorkflowDefinition ['name', 'namespace', 'project_id']: wf_a, , <default-project>",
    });
    const other = await api.post('/v2/workflows?namespace=ns1', simpleWorkflow('wf_a'));
    expect(other.status).toBe(201);
    expect(other.body.workflows[0].namespace).toBe('ns1');
    const got = await api.get('/v2/workflows/wf_a?namespace=ns1');
    expect(got.body.id).toBe(other.body.workflows[0].id);
    const list = await api.get('/v2/workflows?namespace=ns1');
    expect(list.body.workflows.map((w: { id: string }) => w.id)).toEqual([other.body.workflows[0].id]);
  });

  it('rejects invalid DSL with 400 naming the path, unless validation is skipped', async () => {
    const broken = `version: '2.0'
skip_me:
  tasks:
    t1:
      action: std.noop
      on-success: [missing_task]
`;
    const res = await api.post('/v2/workflows', broken);
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['faultstring']);
    expect(res.body.faultstring).toContain('missing_task');
    expect(res.body.faultstring).toContain('workflows.skip_me.tasks.t1.on-success');
    const skipped = await api.post('/v2/workflows?skip_validation', broken);
    expect(skipped.status).toBe(201);
    const syntax = await api.post('/v2/workflows', 'version: "2.0"\nwf: [unclosed');
    expect(syntax.status).toBe(400);
    expect(syntax.body.faultstring).toMatch(/^Definition could not be parsed: /);
    const version = await api.post('/v2/workflows', simpleWorkflow('v3').replace("'2.0'", "'3.0'"));
    expect(version.status).toBe(400);
    expect(version.body.faultstring).toMatch(/^Unsupported DSL version: 3\.0/);
  });

  it('validates without storing', async () => {
    const ok = await api.post('/v2/workflows/validate', simpleWorkflow('never_stored'));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true });
    const bad = await api.post('/v2/workflows/validate', 'version: 2.0\nwf:\n  tasks: 5\n');
    expect(bad.status).toBe(200);
    expect(bad.body.valid).toBe(false);
    expect(bad.body.error).toContain('workflows.wf.tasks');
    expect((await api.get('/v2/workflows/never_stored')).status).toBe(404);
  });

  it('checks scope and query parameters of uploads', async () => {
    const scope = await api.post('/v2/workflows?scope=shared', simpleWorkflow('s1'));
    expect(scope.status).toBe(400);
    expect(scope.body.faultstring).toBe(
      'Scope must be one of the following: private, public; actual: shared',
    );
    const unknown = await api.post('/v2/workflows?bogus=1', simpleWorkflow('s1'));
    expect(unknown.status).toBe(400);
    expect(unknown.body.faultstring).toBe('Unknown argument: "bogus"');
    const pub = await api.post('/v2/workflows?scope=public', simpleWorkflow('s_pub'));
    expect(pub.status).toBe(201);
    expect(pub.body.workflows[0].scope).toBe('public');
  });

  it('updates all workflows of a document by name and one workflow by UUID', async () => {
    const created = (await api.post('/v2/workflows', simpleWorkflow('upd1'))).body.workflows[0];
    const newText = simpleWorkflow('upd1', '  description: changed\n  tags: [t1]\n');
    const res = await api.put('/v2/workflows', newText);
    expect(res.status).toBe(200);
    const [wf] = res.body.workflows;
    expect(wf.id).toBe(created.id);
    expect(wf.definition).toBe(newText);
    expect(wf.checksum).toBe(md5(newText));
    expect(wf.tags).toEqual(['t1']);
    expect(wf.updated_at).toMatch(TIMESTAMP);
    expect(wf.created_at).toBe(created.created_at);
    expect(wf.interface).toEqual({ input: [], output: [] });

    const renamed = await api.put(`/v2/workflows/${created.id}`, simpleWorkflow('upd1_renamed'));
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: created.id, name: 'upd1_renamed' });
    expect(renamed.body.workflows).toBeUndefined();

    const two = await api.put(`/v2/workflows/${created.id}`, TWO_WORKFLOWS);
    expect(two.status).toBe(400);
    expect(two.body.faultstring).toBe(
      `More than one workflows are not supported for update with identifier. [identifier: ${created.id}]`,
    );
    const byName = await api.put('/v2/workflows/upd1_renamed', simpleWorkflow('upd1_renamed'));
    expect(byName.status).toBe(400);
    const missing = await api.put('/v2/workflows', simpleWorkflow('never_created'));
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      faultstring: 'Workflow not found [workflow_identifier=never_created, namespace=]',
    });
    const clash = await api.put(`/v2/workflows/${created.id}`, simpleWorkflow('wf_a'));
    expect(clash.status).toBe(409);
  });

  it('deletes by name and by id, in a namespace', async () => {
    await api.post('/v2/workflows?namespace=delns', simpleWorkflow('del1'));
    const wrongNs = await api.delete('/v2/workflows/del1');
    expect(wrongNs.status).toBe(404);
    const res = await api.delete('/v2/workflows/del1?namespace=delns');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get('/v2/workflows/del1?namespace=delns')).status).toBe(404);
    const id = (await api.post('/v2/workflows', simpleWorkflow('del2'))).body.workflows[0].id;
    expect((await api.delete(`/v2/workflows/${id}`)).status).toBe(204);
    const again = await api.delete(`/v2/workflows/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({
      faultcode: 'Client',
      faultstring: `Workflow not found [workflow_identifier=${id}, namespace=]`,
      debuginfo: null,
    });
  });
  it('deletes a workflow with unfinished executions, which keep their row (Mistral: 204)', async () => {
    const wf = (await api.post('/v2/workflows', simpleWorkflow('busy'))).body.workflows[0];
    const db = server.testRuntime.runtime.dataSource;
    const execId = '11111111-1111-4111-8111-111111111111';
    await db.query(
      `INSERT INTO "workflow_executions" ("id", "workflow_id", "workflow_name", "project_id", "state", "spec", "created_at")
       VALUES ($1, $2, 'busy', '<default-project>', 'RUNNING', '{}'::jsonb, now())`,
      [execId, wf.id],
    );
    const res = await api.delete('/v2/workflows/busy');
    expect(res.status).toBe(204);
    expect((await api.get('/v2/workflows/busy')).status).toBe(404);
    const ex = await api.get(`/v2/executions/${execId}`);
    expect(ex.status).toBe(200);
    expect(ex.body).toMatchObject({ workflow_id: wf.id, workflow_name: 'busy', state: 'RUNNING' });
  });
});

describe.each(e2eModes())('upload size limit (%s)', (mode) => {
  let server: ApiServer;

  beforeAll(async () => {
    server = await startApiServer(mode, { bodyLimit: 4096 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('answers a body over the limit with 400', async () => {
    const big = simpleWorkflow('big', `  description: ${'x'.repeat(5000)}\n`);
    const res = await new Client(server.baseUrl).post('/v2/workflows', big);
    expect(res.status).toBe(400);
    expect(res.body.faultstring).toMatch(/too large/);
  });
});
