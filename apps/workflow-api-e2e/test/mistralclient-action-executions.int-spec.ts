import path from 'node:path';
import { hasPythonModule, runClient, SYSTEM_PYTHON } from '@osc/testing';
import { e2eModes } from './support/api-server';
import { type EngineStack, startEngineStack } from './support/engine-stack';

const hasClient = hasPythonModule('mistralclient');

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
    const res = await runClient(SYSTEM_PYTHON, [
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
