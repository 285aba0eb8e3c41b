import { spawn, spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ApiServer, e2eModes, startApiServer } from './support/api-server';
import { simpleWorkflow } from './support/fixtures';

const PYTHON = '/usr/bin/python3';
const hasClient = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import mistralclient'], { stdio: 'ignore' }).status === 0;
// The real client must be installed (.ci/run installs it): a missing client fails, never skips.

const run = (cmd: string, args: string[], input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, OS_AUTH_TYPE: '', OS_AUTH_URL: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin.end(input);
  });

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
    const res = await run(PYTHON, [path.join(__dirname, 'python', 'mistralclient_check.py'), `${server.baseUrl}/v2`]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const report = JSON.parse(res.stdout);
    expect(report).toEqual({
      wf_create: [['pyclient_wf', 'name, greeting="hello"']],
      wf_list: ['pyclient_wf'],
      wf_get: { name: 'pyclient_wf', input: 'name, greeting="hello"', interface: '{"input": ["name", {"greeting": "hello"}], "output": []}', scope: 'private' },
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
    const created = await run('mistral', [...url, 'workflow-create', file, '-f', 'json']);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)[0]).toMatchObject({ Name: 'cli_wf', Scope: 'private' });
    const listed = await run('mistral', [...url, 'workflow-list', '-f', 'json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((w: { Name: string }) => w.Name)).toContain('cli_wf');
    const shown = await run('mistral', [...url, 'workflow-get', 'cli_wf', '-f', 'json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ Name: 'cli_wf' });
    const deleted = await run('mistral', [...url, 'workflow-delete', 'cli_wf']);
    expect(deleted.code).toBe(0);
    const gone = await run('mistral', [...url, 'workflow-get', 'cli_wf']);
    expect(gone.code).not.toBe(0);
    rmSync(file, { force: true });
  });
});
