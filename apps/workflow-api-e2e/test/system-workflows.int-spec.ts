import { type RunningApp, type SchemaPart } from '@osc/platform';
import { type TestRuntime, createTestRuntime } from '@osc/testing';
import * as workflowApi from '@osc/workflow-api';
import * as workflowEngine from '@osc/workflow-engine';
import { Client, e2eModes } from './support/api-server';
import { postJson, waitForExecution } from './support/engine-stack';

jest.setTimeout(120_000);

const apiConfig = (systemWorkflows: boolean): workflowApi.WorkflowApiConfig => ({
  http: { port: 0, host: '127.0.0.1', bodyLimit: 1024 * 1024 },
  authMode: 'headers',
  logLevel: 'silent',
  systemWorkflows,
});

describe.each(e2eModes())('standard system workflows (%s)', (mode) => {
  let rt: TestRuntime;
  const apps: RunningApp[] = [];
  let alice: Client;
  let bob: Client;
  let admin: Client;

  beforeAll(async () => {
    const parts = new Map<string, SchemaPart>();
    for (const p of [...workflowApi.SCHEMA_PARTS, ...workflowEngine.SCHEMA_PARTS]) parts.set(p.name, p);
    rt = await createTestRuntime(mode, [...parts.values()]);
    // Two API replicas starting at once on one database: each workflow must be registered once.
    const [api, second] = await Promise.all([
      workflowApi.startWorkflowApi(apiConfig(true), rt.runtime),
      workflowApi.startWorkflowApi(apiConfig(true), rt.runtime),
    ]);
    apps.push(api, second);
    apps.push(
      await workflowEngine.startWorkflowEngine(
        {
          health: { port: 0, host: '127.0.0.1' },
          logLevel: 'silent',
          role: 'all',
          prefetch: 32,
          executorConcurrency: 20,
          apiUrl: `http://127.0.0.1:${api.port}`,
          notifyExchange: 'mistral',
        },
        rt.runtime,
        { http: false },
      ),
    );
    const base = new Client(`http://127.0.0.1:${api.port}`);
    alice = base.as({ 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member' });
    bob = base.as({ 'x-project-id': 'proj-b', 'x-user-id': 'bob', 'x-roles': 'reader' });
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-user-id': 'root', 'x-roles': 'admin' });
  });

  afterAll(async () => {
    for (const a of apps.reverse()) await a.close().catch(() => undefined);
    await rt?.cleanup();
  });

  it('lists create_instance and delete_instance to every project, once, public and of <default-project>', async () => {
    // A third start (a restart, another replica later) adds nothing either.
    apps.push(await workflowApi.startWorkflowApi(apiConfig(true), rt.runtime));
    for (const c of [alice, bob]) {
      const res = await c.get('/v2/workflows');
      expect(res.status).toBe(200);
      expect(res.body.workflows.map((w: { name: string }) => w.name).sort()).toEqual([
        'create_instance',
        'delete_instance',
      ]);
      expect(res.body.next).toBeUndefined();
    }
    const all = await admin.get('/v2/workflows?all_projects=true&name=in:create_instance,delete_instance');
    expect(all.body.workflows).toHaveLength(2);
    const wf = (await alice.get('/v2/workflows/delete_instance')).body;
    expect(wf).toMatchObject({
      name: 'delete_instance',
      namespace: '',
      scope: 'public',
      project_id: '<default-project>',
      input: 'instance_id',
      tags: [],
    });
    expect(wf.definition).toContain('nova.servers_delete');
    const create = (await alice.get('/v2/workflows/create_instance')).body;
    expect(create.input).toBe(
      'name, image_id, flavor_id, ssh_username="None", ssh_password="None", key_name="None", security_groups="None", nics="None"',
    );
    // tempest's WorkflowTestsV2.test_get_list_workflows_with_pagination: one per page, sorted by name.
    const page = await alice.get('/v2/workflows?limit=1&sort_keys=name&sort_dirs=desc');
    expect(page.body.workflows.map((w: { name: string }) => w.name)).toEqual(['delete_instance']);
    expect(page.body.next).toContain('sort_keys=name,id&sort_dirs=desc,asc&limit=1&marker=');
  });

  it('is read-only for non-admins', async () => {
    const del = await alice.delete('/v2/workflows/delete_instance');
    expect(del.status).toBe(403);
    expect(del.body.faultstring).toMatch(
      /^Can not access WorkflowDefinition resource of other projects, ID: /,
    );
    const put = await alice.put(
      '/v2/workflows',
      "version: '2.0'\ndelete_instance:\n  tasks:\n    t:\n      action: std.noop\n",
    );
    // Updating by name looks in the caller's own project first: there is none, so nothing changes.
    expect([403, 404]).toContain(put.status);
    expect((await alice.get('/v2/workflows/delete_instance')).body.definition).toContain(
      'nova.servers_delete',
    );
  });

  it('fails an execution with a clear error: the nova actions do not exist here', async () => {
    const started = await postJson(alice, '/v2/executions', {
      workflow_name: 'delete_instance',
      input: { instance_id: 'i-1' },
    });
    expect(started.status).toBe(201);
    const done = await waitForExecution(alice, started.body.id);
    expect(done['state']).toBe('ERROR');
    expect(done['state_info']).toContain('Failed to find action [action_name=nova.servers_delete');
  });

  it('stays off when the configuration turns it off', async () => {
    const other = await createTestRuntime(mode, workflowApi.SCHEMA_PARTS);
    try {
      const api = await workflowApi.startWorkflowApi(apiConfig(false), other.runtime);
      try {
        const res = await new Client(`http://127.0.0.1:${api.port}`)
          .as({ 'x-project-id': 'p', 'x-roles': 'member' })
          .get('/v2/workflows');
        expect(res.body.workflows).toEqual([]);
      } finally {
        await api.close();
      }
    } finally {
      await other.cleanup();
    }
  });
});
