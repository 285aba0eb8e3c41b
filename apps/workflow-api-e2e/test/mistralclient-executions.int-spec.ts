import path from 'node:path';
import { hasPythonModule, runClient, SYSTEM_PYTHON } from '@osc/testing';
import { e2eModes } from './support/api-server';
import { type EngineStack, startEngineStack } from './support/engine-stack';

const hasClient = hasPythonModule('mistralclient');

/** The real python-mistralclient starts, waits for, lists, shows, reruns and deletes executions. */
describe.each(e2eModes())('python-mistralclient executions and tasks (%s)', (mode) => {
  let stack: EngineStack;
  beforeAll(async () => {
    stack = await startEngineStack(mode);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('runs the execution lifecycle through the Python API', async () => {
    expect(hasClient).toBe(true);
    const res = await runClient(SYSTEM_PYTHON, [
      path.join(__dirname, 'python', 'mistralclient_executions.py'),
      `${stack.baseUrl}/v2`,
    ]);
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({
      create: ['RUNNING', 'pyclient_run', { n: 21 }, 'from python'],
      get: ['SUCCESS', { doubled: 42 }],
      list: [true],
      tasks: [['double', 'SUCCESS']],
      task_get: ['double', 42, { d: 42 }],
      failed: 'ERROR',
      rerun: 'boom',
      after_rerun: ['ERROR', 2],
      rerun_with_env: ['ERROR', 'flaky', 'SUCCESS', 'SUCCESS', [false, true], { fixed: true }],
      nested: ['SUCCESS', ['pyclient_parent', 'pyclient_run'], ['pyclient_run'], 2, ['call']],
      filters: [['pyclient_fail'], ['boom']],
      control: ['PAUSED', 'RUNNING', 403],
      after_delete: [],
    });
  }, 120_000);
});
