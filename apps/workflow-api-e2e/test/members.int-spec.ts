import { type ApiServer, Client, type HttpResult, e2eModes, startApiServer } from './support/api-server';
import { type EngineStack, startEngineStack, waitForExecution } from './support/engine-stack';
import { TIMESTAMP, UUID, simpleWorkflow } from './support/fixtures';

const json = (c: Client, method: string, path: string, body: unknown): Promise<HttpResult> =>
  c.send(method, path, JSON.stringify(body), 'application/json');

const wsme = (faultstring: string) => ({ faultcode: 'Client', faultstring, debuginfo: null });

/** Workflow sharing (`/v2/workflows/{id}/members`) between projects, acting as each through header auth. */
describe.each(e2eModes())('workflow members (%s)', (mode) => {
  let server: ApiServer;
  let owner: Client;
  let guest: Client;
  let stranger: Client;
  let admin: Client;
  let wfId: string;
  let members: string;

  beforeAll(async () => {
    server = await startApiServer(mode, { authMode: 'headers' });
    const base = new Client(server.baseUrl);
    owner = base.as({ 'x-project-id': 'proj-owner', 'x-user-id': 'olga', 'x-roles': 'member' });
    guest = base.as({ 'x-project-id': 'proj-guest', 'x-user-id': 'gus', 'x-roles': 'member' });
    stranger = base.as({ 'x-project-id': 'proj-other', 'x-user-id': 'sam', 'x-roles': 'member' });
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-roles': 'admin' });
    const created = await owner.post('/v2/workflows', simpleWorkflow('shared_wf'));
    expect(created.status).toBe(201);
    wfId = created.body.workflows[0].id;
    members = `/v2/workflows/${wfId}/members`;
  });
  afterAll(async () => {
    await server?.close();
  });

  const visibleTo = async (c: Client): Promise<string[]> =>
    (await c.get('/v2/workflows')).body.workflows.map((w: { id: string }) => w.id);
  const run = (c: Client, body: Record<string, unknown>) => json(c, 'POST', '/v2/executions', body);

  it('the owner shares a private workflow as pending; duplicates and bad bodies are refused', async () => {
    const added = await json(owner, 'POST', members, { member_id: 'proj-guest' });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: expect.stringMatching(UUID),
      resource_id: wfId,
      resource_type: 'workflow',
      project_id: 'proj-owner',
      member_id: 'proj-guest',
      status: 'pending',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: null,
    });
    const again = await json(owner, 'POST', members, { member_id: 'proj-guest' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(
      wsme(
        `Duplicate entry for ResourceMember ['resource_id', 'resource_type', 'member_id']: ${wfId}, workflow, proj-guest`,
      ),
    );
    expect(await json(owner, 'POST', members, {})).toMatchObject({
      status: 400,
      body: wsme('Member id must be provided.'),
    });
    const list = await owner.get(members);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ members: [added.body] });
    expect((await owner.get(`${members}/proj-guest`)).body).toEqual(added.body);
  });

  it('a pending member sees its membership but not the workflow, and cannot run it', async () => {
    expect((await guest.get(members)).body.members.map((m: { member_id: string }) => m.member_id)).toEqual([
      'proj-guest',
    ]);
    expect((await guest.get(`${members}/proj-guest`)).body.status).toBe('pending');
    expect(await visibleTo(guest)).not.toContain(wfId);
    expect((await guest.get(`/v2/workflows/${wfId}`)).status).toBe(404);
    expect((await run(guest, { workflow_id: wfId })).status).toBe(404);
    expect((await run(guest, { workflow_name: 'shared_wf' })).status).toBe(404);
  });

  it('nobody else learns of the membership or can share the workflow', async () => {
    expect((await stranger.get(members)).body).toEqual({ members: [] });
    const hidden = await stranger.get(`${members}/proj-guest`);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toEqual(
      wsme(`Resource member not found [resource_id=${wfId}, member_id=proj-guest]`),
    );
    const passOn = await json(guest, 'POST', members, { member_id: 'proj-other' });
    expect(passOn.status).toBe(404);
    expect(passOn.body).toEqual(wsme(`Workflow not found [workflow_identifier=${wfId}, namespace=]`));
    expect((await json(stranger, 'POST', members, { member_id: 'proj-other' })).status).toBe(404);
    const missing = '00000000-0000-4000-8000-000000000000';
    const none = await json(owner, 'POST', `/v2/workflows/${missing}/members`, { member_id: 'proj-guest' });
    expect(none).toMatchObject({
      status: 404,
      body: wsme(`Workflow not found [workflow_identifier=${missing}, namespace=]`),
    });
    expect((await owner.get(`/v2/workflows/${missing}/members`)).body).toEqual({ members: [] });
  });

  it('only the member project answers, with a known status', async () => {
    const byOwner = await json(owner, 'PUT', `${members}/proj-guest`, { status: 'accepted' });
    expect(byOwner.status).toBe(404);
    expect(byOwner.body).toEqual(
      wsme(`Resource member not found [resource_id=${wfId}, member_id=proj-guest]`),
    );
    expect((await json(stranger, 'PUT', `${members}/proj-guest`, { status: 'accepted' })).status).toBe(404);
    const bogus = await json(guest, 'PUT', `${members}/proj-guest`, { status: 'bogus' });
    expect(bogus).toMatchObject({
      status: 400,
      body: wsme(
        "Invalid input for field/attribute status. Value: 'bogus'. Value should be one of: pending, accepted, rejected",
      ),
    });
    expect(await json(guest, 'PUT', `${members}/proj-guest`, {})).toMatchObject({
      status: 400,
      body: wsme('Status must be provided.'),
    });
  });

  it('an accepted member sees and runs the workflow but cannot change it', async () => {
    const accepted = await json(guest, 'PUT', `${members}/proj-guest`, { status: 'accepted' });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({
      member_id: 'proj-guest',
      status: 'accepted',
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect((await owner.get(`${members}/proj-guest`)).body.status).toBe('accepted');

    expect(await visibleTo(guest)).toContain(wfId);
    expect(await visibleTo(stranger)).not.toContain(wfId);
    const seen = await guest.get(`/v2/workflows/${wfId}`);
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ id: wfId, project_id: 'proj-owner', scope: 'private' });
    expect((await guest.get('/v2/workflows/shared_wf')).status).toBe(200);

    const byId = await run(guest, { workflow_id: wfId });
    expect(byId.status).toBe(201);
    expect(byId.body).toMatchObject({
      workflow_id: wfId,
      workflow_name: 'shared_wf',
      project_id: 'proj-guest',
    });
    expect((await guest.get(`/v2/executions/${byId.body.id}`)).status).toBe(200);
    expect((await owner.get(`/v2/executions/${byId.body.id}`)).status).toBe(404);
    expect((await run(guest, { workflow_name: 'shared_wf' })).status).toBe(201);
    expect((await run(stranger, { workflow_id: wfId })).status).toBe(404);

    const del = await guest.delete(`/v2/workflows/${wfId}`);
    expect(del.status).toBe(403);
    expect(del.body).toEqual(
      wsme(`Can not access WorkflowDefinition resource of other projects, ID: ${wfId}`),
    );
    expect((await guest.put(`/v2/workflows/${wfId}`, simpleWorkflow('shared_wf'))).status).toBe(403);
  });

  it('a rejected member loses sight of the workflow; only the owner removes members', async () => {
    expect((await json(guest, 'PUT', `${members}/proj-guest`, { status: 'rejected' })).body.status).toBe(
      'rejected',
    );
    expect(await visibleTo(guest)).not.toContain(wfId);
    expect((await run(guest, { workflow_id: wfId })).status).toBe(404);

    expect((await guest.delete(`${members}/proj-guest`)).status).toBe(404);
    const removed = await owner.delete(`${members}/proj-guest`);
    expect(removed.status).toBe(204);
    expect((await owner.get(members)).body).toEqual({ members: [] });
    expect((await guest.get(members)).body).toEqual({ members: [] });
    expect((await owner.delete(`${members}/proj-guest`)).status).toBe(404);
  });

  it('public workflows cannot be shared; deleting a workflow ends its memberships', async () => {
    const pub = await admin.post('/v2/workflows?scope=public', simpleWorkflow('public_wf'));
    expect(pub.status).toBe(201);
    const shared = await json(admin, 'POST', `/v2/workflows/${pub.body.workflows[0].id}/members`, {
      member_id: 'proj-guest',
    });
    expect(shared).toMatchObject({ status: 400, body: wsme('Only private resource could be shared.') });

    const temp = await owner.post('/v2/workflows', simpleWorkflow('temp_wf'));
    const tempId = temp.body.workflows[0].id;
    expect(
      (await json(owner, 'POST', `/v2/workflows/${tempId}/members`, { member_id: 'proj-guest' })).status,
    ).toBe(201);
    expect(
      (await json(guest, 'PUT', `/v2/workflows/${tempId}/members/proj-guest`, { status: 'accepted' })).status,
    ).toBe(200);
    expect(await visibleTo(guest)).toContain(tempId);
    expect((await owner.delete(`/v2/workflows/${tempId}`)).status).toBe(204);
    expect((await guest.get(`/v2/workflows/${tempId}/members`)).body).toEqual({ members: [] });
    expect(await visibleTo(guest)).not.toContain(tempId);
  });

  it('an admin may share a workflow of another project on its owner’s behalf', async () => {
    const added = await json(admin, 'POST', members, { member_id: 'proj-other' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      project_id: 'proj-owner',
      member_id: 'proj-other',
      status: 'pending',
    });
    expect((await owner.get(members)).body.members.map((m: { member_id: string }) => m.member_id)).toEqual([
      'proj-other',
    ]);
  });
});

describe('workflow members without authentication (embedded)', () => {
  let server: ApiServer;
  beforeAll(async () => {
    server = await startApiServer('embedded', { authMode: 'noauth' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('refuses resource sharing as Mistral does with auth disabled', async () => {
    const c = new Client(server.baseUrl);
    const created = await c.post('/v2/workflows', simpleWorkflow('wf'));
    const members = `/v2/workflows/${created.body.workflows[0].id}/members`;
    const message = 'Resource sharing feature can only be supported with authentication enabled.';
    for (const res of [
      await c.get(members),
      await json(c, 'POST', members, { member_id: 'p2' }),
      await c.get(`${members}/p2`),
      await json(c, 'PUT', `${members}/p2`, { status: 'accepted' }),
      await c.delete(`${members}/p2`),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ faultstring: message });
    }
  });
});

/** With the engine: the member's execution of a shared workflow runs to the end in the member's project. */
describe.each(e2eModes())('a shared workflow run by its member (%s)', (mode) => {
  let stack: EngineStack;
  beforeAll(async () => {
    stack = await startEngineStack(mode, { authMode: 'headers' });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("runs to SUCCESS with the member as the execution's project", async () => {
    const owner = stack.client.as({ 'x-project-id': 'proj-owner', 'x-roles': 'member' });
    const guest = stack.client.as({ 'x-project-id': 'proj-guest', 'x-roles': 'member' });
    const wf = `version: '2.0'
greet:
  input: [who]
  tasks:
    say:
      action: std.echo output="hello <% $.who %>"
      publish: {said: <% task().result %>}
  output: {said: <% $.said %>}
`;
    const id = (await owner.post('/v2/workflows', wf)).body.workflows[0].id;
    expect(
      (await json(owner, 'POST', `/v2/workflows/${id}/members`, { member_id: 'proj-guest' })).status,
    ).toBe(201);
    expect(
      (await json(guest, 'POST', '/v2/executions', { workflow_id: id, input: { who: 'guest' } })).status,
    ).toBe(404);
    expect(
      (await json(guest, 'PUT', `/v2/workflows/${id}/members/proj-guest`, { status: 'accepted' })).status,
    ).toBe(200);
    const started = await json(guest, 'POST', '/v2/executions', { workflow_id: id, input: { who: 'guest' } });
    expect(started.status).toBe(201);
    const done = await waitForExecution(guest, started.body.id);
    expect(done).toMatchObject({ state: 'SUCCESS', project_id: 'proj-guest', workflow_id: id });
    expect(JSON.parse(done.output)).toEqual({ said: 'hello guest' });
  });
});
