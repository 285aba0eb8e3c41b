import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hasPythonModule, runClient, SYSTEM_PYTHON } from '@osc/testing';
import { type ApiServer, e2eModes, startApiServer } from './support/api-server';
import { simpleWorkflow } from './support/fixtures';

const hasClient = hasPythonModule('mistralclient');

/** The real python-mistralclient (Debian python3-mistralclient, no auth) against the running app. */
describe.each(e2eModes().slice(0, 1))('python-mistralclient compatibility (%s)', (mode) => {
  let server: ApiServer;

  beforeAll(async () => {
    server = await startApiServer(mode);
  });
  afterAll(async () => {
    await server?.close();
  });

  it('creates, lists, shows, updates and deletes workflows, workbooks and actions through the Python API', async () => {
    expect(hasClient).toBe(true);
    const res = await runClient(SYSTEM_PYTHON, [
      path.join(__dirname, 'python', 'mistralclient_check.py'),
      `${server.baseUrl}/v2`,
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toEqual({
      wf_create: [['pyclient_wf', 'name, greeting="hello"']],
      wf_list: ['pyclient_wf'],
      wf_get: {
        name: 'pyclient_wf',
        input: 'name, greeting="hello"',
        interface: '{"input": ["name", {"greeting": "hello"}], "output": []}',
        scope: 'private',
      },
      wf_update: ['name, greeting="bye"'],
      wf_update_id: 'name, greeting="hello"',
      wf_list_limit: ['pyclient_wf'],
      wf_after_delete: [],
      wb_create: 'pyclient_wb',
      wb_list: ['pyclient_wb'],
      wb_get: true,
      wb_update: 'pyclient_wb',
      wb_member: 'pyclient_wb.inner',
      wb_after_delete: [],
      action_create: [['pyclient_action', 'x', 'made by the client']],
      action_get: false,
      action_update: ['changed by the client'],
      action_list_has_std_echo: true,
      action_list_has_own: true,
      action_after_delete: false,
      error: [404, 'Workflow not found [workflow_identifier=does_not_exist, namespace=]'],
    });
  });

  it('works through the mistral CLI', async () => {
    expect(hasClient).toBe(true);
    const url = ['--os-mistral-url', `${server.baseUrl}/v2`];
    const file = path.join(tmpdir(), `cli-wf-${process.pid}.yaml`);
    writeFileSync(file, simpleWorkflow('cli_wf'));
    const created = await runClient('mistral', [...url, 'workflow-create', file, '-f', 'json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)[0]).toMatchObject({ Name: 'cli_wf', Scope: 'private' });
    const listed = await runClient('mistral', [...url, 'workflow-list', '-f', 'json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((w: { Name: string }) => w.Name)).toContain('cli_wf');
    const shown = await runClient('mistral', [...url, 'workflow-get', 'cli_wf', '-f', 'json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ Name: 'cli_wf' });
    const deleted = await runClient('mistral', [...url, 'workflow-delete', 'cli_wf']);
    expect(deleted.code).toBe(0);
    const gone = await runClient('mistral', [...url, 'workflow-get', 'cli_wf']);
    expect(gone.code).not.toBe(0);
    rmSync(file, { force: true });
  });
});
