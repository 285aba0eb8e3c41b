import { e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
  waitForTask,
} from './support/engine-stack';

jest.setTimeout(60_000);

/**
 * Deleting a workflow while an execution of it is unfinished (Mistral 15: 204, the execution goes on
 * with the definition it started with). The execution row keeps the spec snapshot, so the engine
 * never needs the deleted definition; a sub-workflow whose definition is gone fails its task cleanly.
 */
const DEFINITIONS = `
version: '2.0'
del_parent:
  tasks:
    wait:
      action: std.async_noop
      publish: {got: <% task().result %>}
      on-success: after
    after:
      action: std.echo output=<% $.got %>
      publish: {r: <% task().result %>}
  output:
    r: <% $.r %>
del_calls_child:
  tasks:
    wait:
      action: std.async_noop
      on-success: call
    call:
      workflow: del_child
del_child:
  tasks:
    t:
      action: std.noop
`;

describe.each(e2eModes())('deleting a workflow with unfinished executions (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const asyncAction = async (executionId: string): Promise<string> => {
    const task = await waitForTask(stack.client, executionId, 'wait', 'RUNNING');
    for (let i = 0; i < 100; i++) {
      const list = await stack.client.get(`/v2/tasks/${task.id}/action_executions`);
      const a = list.body?.action_executions?.[0];
      if (a) return a.id;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no action execution for task wait');
  };

  it('answers 204 and the running execution still finishes with the deleted definition', async () => {
    const ex = await postJson(stack.client, '/v2/executions', { workflow_name: 'del_parent' });
    expect(ex.status).toBe(201);
    const actionId = await asyncAction(ex.body.id);

    const del = await stack.client.delete('/v2/workflows/del_parent');
    expect(del.status).toBe(204);
    expect((await stack.client.get('/v2/workflows/del_parent')).status).toBe(404);
    // the name is free again: a new definition does not disturb the running execution
    const again = await stack.client.post(
      '/v2/workflows',
      "version: '2.0'\ndel_parent:\n  tasks:\n    other:\n      action: std.noop\n",
    );
    expect(again.status).toBe(201);

    const put = await putJson(stack.client, `/v2/action_executions/${actionId}`, {
      state: 'SUCCESS',
      output: '"kept"',
    });
    expect(put.status).toBe(200);
    const done = await waitForExecution(stack.client, ex.body.id);
    expect(done.state).toBe('SUCCESS');
    expect(JSON.parse(done.output)).toEqual({ r: 'kept' });
    const tasks = await stack.client.get(`/v2/executions/${ex.body.id}/tasks`);
    expect(tasks.body.tasks.map((t: { name: string }) => t.name).sort()).toEqual(['after', 'wait']);
    expect((await stack.client.delete('/v2/workflows/del_parent')).status).toBe(204);
  });

  it('fails the task cleanly when a sub-workflow definition was deleted meanwhile', async () => {
    const ex = await postJson(stack.client, '/v2/executions', { workflow_name: 'del_calls_child' });
    expect(ex.status).toBe(201);
    const actionId = await asyncAction(ex.body.id);
    expect((await stack.client.delete('/v2/workflows/del_child')).status).toBe(204);
    expect((await stack.client.delete('/v2/workflows/del_calls_child')).status).toBe(204);

    expect(
      (await putJson(stack.client, `/v2/action_executions/${actionId}`, { state: 'SUCCESS' })).status,
    ).toBe(200);
    const done = await waitForExecution(stack.client, ex.body.id);
    expect(done.state).toBe('ERROR');
    expect(done.state_info).toContain('Failed to find workflow [name=del_child]');
    const call = await waitForTask(stack.client, ex.body.id, 'call', 'ERROR');
    expect(call.state_info).toContain('del_child');
  });
});
