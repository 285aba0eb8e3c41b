import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import { WORKBOOK, simpleAction, simpleWorkflow } from './support/fixtures';

describe.each(e2eModes())('project isolation with header auth (%s)', (mode) => {
  let server: ApiServer;
  let alice: Client;
  let aliceAdmin: Client;
  let bob: Client;
  let root: Client;

  beforeAll(async () => {
    server = await startApiServer(mode, { authMode: 'headers' });
    const base = new Client(server.baseUrl);
    alice = base.as({ 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member' });
    aliceAdmin = base.as({ 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member,admin' });
    bob = base.as({ 'x-project-id': 'proj-b', 'x-user-id': 'bob', 'x-roles': 'member' });
    root = base.as({ 'x-project-id': 'proj-admin', 'x-roles': 'admin' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('needs a project', async () => {
    const res = await new Client(server.baseUrl).get('/v2/workflows');
    expect(res.status).toBe(401);
  });

  it('keeps private definitions to their project', async () => {
    const created = await alice.post('/v2/workflows', simpleWorkflow('private_wf'));
    expect(created.status).toBe(201);
    expect(created.body.workflows[0].project_id).toBe('proj-a');
    const id = created.body.workflows[0].id;
    expect((await bob.get('/v2/workflows/private_wf')).status).toBe(404);
    expect((await bob.get(`/v2/workflows/${id}`)).status).toBe(404);
    expect((await bob.get('/v2/workflows')).body.workflows).toEqual([]);
    expect((await bob.get(`/v2/workflows?marker=${id}`)).status).toBe(404);
    expect((await bob.delete('/v2/workflows/private_wf')).status).toBe(404);
    expect((await bob.put('/v2/workflows', simpleWorkflow('private_wf'))).status).toBe(404);
    // The same name is free in another project.
    expect((await bob.post('/v2/workflows', simpleWorkflow('private_wf'))).status).toBe(201);
    const mine = await bob.get('/v2/workflows/private_wf');
    expect(mine.body.project_id).toBe('proj-b');
    expect((await alice.get('/v2/workflows/private_wf')).body.project_id).toBe('proj-a');
  });

  it('shows public definitions to everyone but lets only the owner change them', async () => {
    const denied = await alice.post('/v2/workflows?scope=public', simpleWorkflow('pub_wf'));
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ faultstring: 'Operation forbidden (insufficient permissions)' });
    const created = await aliceAdmin.post('/v2/workflows?scope=public', simpleWorkflow('pub_wf'));
    expect(created.status).toBe(201);
    const id = created.body.workflows[0].id;
    const seen = await bob.get('/v2/workflows/pub_wf');
    expect(seen.status).toBe(200);
    expect(seen.body.scope).toBe('public');
    expect(
      (await bob.get('/v2/workflows?scope=public')).body.workflows.map((w: { id: string }) => w.id),
    ).toEqual([id]);
    const put = await bob.put(`/v2/workflows/${id}`, simpleWorkflow('pub_wf'));
    expect(put.status).toBe(403);
    expect(put.body).toEqual({
      faultstring: `Can not access WorkflowDefinition resource of other projects, ID: ${id}`,
    });
    const del = await bob.delete('/v2/workflows/pub_wf');
    expect(del.status).toBe(403);
    expect(del.body).toEqual({
      faultcode: 'Client',
      faultstring: `Can not access WorkflowDefinition resource of other projects, ID: ${id}`,
      debuginfo: null,
    });
    expect((await alice.put(`/v2/workflows/${id}`, simpleWorkflow('pub_wf'))).status).toBe(200);
  });

  it('applies the same rules to workbooks and actions', async () => {
    expect((await aliceAdmin.post('/v2/workbooks?scope=public', WORKBOOK)).status).toBe(201);
    expect((await bob.get('/v2/workbooks/my_wb')).status).toBe(200);
    expect((await bob.delete('/v2/workbooks/my_wb')).status).toBe(403);
    expect((await bob.put('/v2/workbooks', WORKBOOK)).status).toBe(403);
    expect((await alice.post('/v2/actions', simpleAction('secret_action'))).status).toBe(201);
    expect((await bob.get('/v2/actions/secret_action')).status).toBe(404);
    expect((await bob.get('/v2/actions?name=secret_action')).body.actions).toEqual([]);
    const a = await bob.get('/v2/actions/my_wb.greet');
    expect(a.status).toBe(200);
    const del = await bob.delete('/v2/actions/my_wb.greet');
    expect(del.status).toBe(403);
    expect(del.body.faultstring).toBe(
      `Can not access ActionDefinition resource of other projects, ID: ${a.body.id}`,
    );
  });

  it('lets admins list every project and keeps all_projects from others', async () => {
    const all = await root.get('/v2/workflows?all_projects=true&sort_keys=name');
    expect(all.status).toBe(200);
    const projects = new Set(all.body.workflows.map((w: { project_id: string }) => w.project_id));
    expect(projects).toEqual(new Set(['proj-a', 'proj-b']));
    const onlyB = await root.get('/v2/workflows?project_id=proj-b');
    expect(onlyB.body.workflows.map((w: { project_id: string }) => w.project_id)).toEqual(['proj-b']);
    const forbidden = await bob.get('/v2/workflows?all_projects=true');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toEqual({
      faultcode: 'Client',
      faultstring: 'Operation forbidden (insufficient permissions)',
      debuginfo: null,
    });
    // Mistral: for others `project_id` only filters what they see (here proj-a's public workbook's workflows).
    const filtered = await bob.get('/v2/workflows?project_id=proj-a');
    expect(filtered.status).toBe(200);
    const rows = filtered.body.workflows.map((w: { name: string; scope: string; project_id: string }) => [
      w.name,
      w.scope,
      w.project_id,
    ]);
    expect(rows.sort()).toEqual([
      ['my_wb.helper', 'public', 'proj-a'],
      ['my_wb.main', 'public', 'proj-a'],
    ]);
    expect((await bob.get('/v2/workflows?all_projects=false')).status).toBe(200);
    // An admin may change any project's definitions.
    expect((await root.delete('/v2/workflows/private_wf')).status).toBe(204);
  });
});
