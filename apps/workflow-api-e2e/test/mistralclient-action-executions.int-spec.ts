import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { e2eModes } from './support/api-server';
import { type EngineStack, startEngineStack } from './support/engine-stack';

const PYTHON = '/usr/bin/python3';
const hasClient =
  existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import mistralclient'], { stdio: 'ignore' }).status === 0;
// The real client must be installed (.ci/run installs it): a missing client fails, never skips.

const run = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(PYTHON, args, { env: { ...process.env, OS_AUTH_TYPE: '', OS_AUTH_URL: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

/** The real python-mistralclient runs actions directly (`action-execution-create`) and completes one. */
describe.each(e2eModes())('python-mistralclient action executions (%s)', (mode) => {
  let stack: EngineStack;
  beforeAll(async () => {
    stack = await startEngineStack(mode);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('runs, saves, completes and lists action executions through the Python API', async () => {
    expect(hasClient).toBe(true);
    const res = await run([
      path.join(__dirname, 'python', 'mistralclient_action_executions.py'),
      `${stack.baseUrl}/v2`,
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      sync: [null, 'SUCCESS', { result: 'hi' }],
      saved: ['RUNNING', 'SUCCESS', { result: 'kept' }, null, null],
      async: ['RUNNING', 'SUCCESS', { result: { v: 1 } }],
      list: ['std.async_noop', 'std.echo'],
      unknown: [400, 'Failed to find action [action_name=std.nope]'],
    });
  }, 120_000);
});
