import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@osc/workflow-api';
import { type ApiServer, Client, type HttpResult, e2eModes, startApiServer } from './support/api-server';
import { WORKBOOK, simpleAction, simpleWorkflow } from './support/fixtures';

const DENIED = 'Operation forbidden (insufficient permissions)';
const wsmeDenied = { faultcode: 'Client', faultstring: DENIED, debuginfo: null };
const textDenied = { faultstring: DENIED };

const json = (c: Client, method: string, path: string, body: unknown): Promise<HttpResult> =>
  c.send(method, path, JSON.stringify(body), 'application/json');

/** Mistral's default policy as seen by admin, member and reader callers (header auth). */
describe.each(e2eModes())('default policy (%s)', (mode) => {
  let server: ApiServer;
  let admin: Client;
  let member: Client;
  let reader: Client;

  beforeAll(async () => {
    server = await startApiServer(mode, { authMode: 'headers' });
    const base = new Client(server.baseUrl);
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-user-id': 'ada', 'x-roles': 'admin' });
    member = base.as({ 'x-project-id': 'proj-m', 'x-user-id': 'mia', 'x-roles': 'member' });
    reader = base.as({ 'x-project-id': 'proj-r', 'x-user-id': 'rex', 'x-roles': 'reader' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('publishing (scope=public) is for admins, on workflows, workbooks and actions', async () => {
    for (const c of [member, reader]) {
      expect(await c.post('/v2/workflows?scope=public', simpleWorkflow('pub_wf'))).toMatchObject({
        status: 403,
        body: textDenied,
      });
      expect(await c.put('/v2/workflows?scope=public', simpleWorkflow('pub_wf'))).toMatchObject({
        status: 403,
        body: textDenied,
      });
      expect(await c.post('/v2/workbooks?scope=public', WORKBOOK)).toMatchObject({
        status: 403,
        body: textDenied,
      });
      expect(await c.post('/v2/actions?scope=public', simpleAction('pub_action'))).toMatchObject({
        status: 403,
        body: textDenied,
      });
    }
    expect((await admin.post('/v2/workflows?scope=public', simpleWorkflow('pub_wf'))).status).toBe(201);
    expect((await admin.post('/v2/workbooks?scope=public', WORKBOOK)).status).toBe(201);
    expect((await admin.post('/v2/actions?scope=public', simpleAction('pub_action'))).status).toBe(201);
  });

  it('owner rules let members and readers work in their own project', async () => {
    for (const [c, name] of [
      [member, 'm_wf'],
      [reader, 'r_wf'],
    ] as const) {
      expect((await c.post('/v2/workflows', simpleWorkflow(name))).status).toBe(201);
      expect((await c.get(`/v2/workflows/${name}`)).status).toBe(200);
      expect((await json(c, 'POST', '/v2/executions', { workflow_name: name })).status).toBe(201);
      expect((await c.get('/v2/executions')).body.executions).toHaveLength(1);
    }
    expect((await member.delete('/v2/workflows/r_wf')).status).toBe(404);
    const trigger = { name: 'tick', workflow_name: 'm_wf', pattern: '0 0 1 1 *' };
    expect(await json(member, 'POST', '/v2/cron_triggers', { ...trigger, scope: 'public' })).toMatchObject({
      status: 403,
      body: wsmeDenied,
    });
    expect((await json(member, 'POST', '/v2/cron_triggers', trigger)).status).toBe(201);
  });

  it('lists of all projects are for admins', async () => {
    for (const path of [
      '/v2/workflows?all_projects=true',
      '/v2/executions?all_projects=true',
      '/v2/executions?project_id=proj-r',
      '/v2/cron_triggers?all_projects=true',
    ]) {
      expect(await member.get(path)).toMatchObject({ status: 403, body: wsmeDenied });
      expect(await reader.get(path)).toMatchObject({ status: 403, body: wsmeDenied });
      expect((await admin.get(path)).status).toBe(200);
    }
    const all = await admin.get('/v2/executions?all_projects=true');
    expect(new Set(all.body.executions.map((e: { project_id: string }) => e.project_id))).toEqual(
      new Set(['proj-m', 'proj-r']),
    );
    const onlyR = await admin.get('/v2/executions?project_id=proj-r');
    expect(onlyR.body.executions.map((e: { project_id: string }) => e.project_id)).toEqual(['proj-r']);
    // A filter within what a member sees: its own rows of that project (none) and public ones.
    const filtered = await member.get('/v2/workflows?project_id=proj-r');
    expect(filtered.status).toBe(200);
    expect(filtered.body.workflows).toEqual([]);
  });
});

/** A deployment's policy file (WORKFLOW_API_POLICY_FILE) replacing some of Mistral's defaults. */
describe('policy overrides from a file (embedded)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wf-policy-'));
  let server: ApiServer;
  let admin: Client;
  let member: Client;
  let reader: Client;

  beforeAll(async () => {
    const file = join(dir, 'policy.yaml');
    writeFileSync(
      file,
      [
        '# writes need the member role, deletes an admin; members may publish',
        '"member_or_admin": "role:member or rule:admin_only"',
        '"workflows:create": "rule:member_or_admin"',
        '"workflows:update": "rule:member_or_admin"',
        '"workflows:delete": "rule:admin_only"',
        '"workflows:publicize": "role:member"',
        '"executions:create": "!"',
        '',
      ].join('\n'),
    );
    const config = loadConfig({ AUTH_MODE: 'headers', WORKFLOW_API_POLICY_FILE: file, LOG_LEVEL: 'silent' });
    server = await startApiServer('embedded', {
      authMode: 'headers',
      policyOverrides: config.policyOverrides,
    });
    const base = new Client(server.baseUrl);
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-roles': 'admin' });
    member = base.as({ 'x-project-id': 'proj-1', 'x-user-id': 'mia', 'x-roles': 'member' });
    reader = base.as({ 'x-project-id': 'proj-1', 'x-user-id': 'rex', 'x-roles': 'reader' });
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies the overridden rules and keeps the defaults for the rest', async () => {
    expect(await reader.post('/v2/workflows', simpleWorkflow('wf1'))).toMatchObject({
      status: 403,
      body: textDenied,
    });
    const published = await member.post('/v2/workflows?scope=public', simpleWorkflow('wf1'));
    expect(published.status).toBe(201);
    expect(published.body.workflows[0].scope).toBe('public');
    // Reads keep the default owner rule.
    expect((await reader.get('/v2/workflows/wf1')).status).toBe(200);
    expect(await member.delete('/v2/workflows/wf1')).toMatchObject({ status: 403, body: wsmeDenied });
    expect(await json(member, 'POST', '/v2/executions', { workflow_name: 'wf1' })).toMatchObject({
      status: 403,
      body: wsmeDenied,
    });
    expect(await json(admin, 'POST', '/v2/executions', { workflow_name: 'wf1' })).toMatchObject({
      status: 403,
      body: wsmeDenied,
    });
    expect((await admin.delete('/v2/workflows/wf1')).status).toBe(204);
    // Other defaults are untouched: publishing a workbook stays admin-only.
    expect(await member.post('/v2/workbooks?scope=public', WORKBOOK)).toMatchObject({
      status: 403,
      body: textDenied,
    });
  });

  it('refuses a bad file at start, naming the variable', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, '"workflows:create": "role:member or"\n');
    expect(() => loadConfig({ AUTH_MODE: 'headers', WORKFLOW_API_POLICY_FILE: bad })).toThrow(
      /WORKFLOW_API_POLICY_FILE/,
    );
    expect(() =>
      loadConfig({ AUTH_MODE: 'headers', WORKFLOW_API_POLICY_FILE: join(dir, 'missing.yaml') }),
    ).toThrow(/WORKFLOW_API_POLICY_FILE: cannot read/);
  });
});
