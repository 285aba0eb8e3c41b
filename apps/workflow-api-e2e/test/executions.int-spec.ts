import { createServer } from 'node:http';
import { e2eModes } from './support/api-server';

jest.setTimeout(60_000);
import { ADHOC, DEFINITIONS, SCENARIOS } from './support/basic-scenarios';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
  waitForTask,
} from './support/engine-stack';

describe.each(e2eModes())('executions over HTTP (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
    const actions = await stack.client.post('/v2/actions', ADHOC);
    if (actions.status !== 201) throw new Error(`action upload failed: ${actions.status} ${actions.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  const start = async (
    workflow: string,
    input: Record<string, unknown> = {},
    params: Record<string, unknown> = {},
  ) => {
    const res = await postJson(stack.client, '/v2/executions', { workflow_name: workflow, input, params });
    expect(res.status).toBe(201);
    return res.body as Record<string, any>;
  };

  it.each(SCENARIOS.map((s) => [s.name, s] as const))('%s', async (_n, s) => {
    const created = await start(s.workflow, s.input, s.params);
    const ex = await waitForExecution(stack.client, created.id);
    expect(ex.state).toBe(s.state);
    if (s.output !== undefined) expect(JSON.parse(ex.output)).toEqual(s.output);
    if (s.stateInfo instanceof RegExp) expect(ex.state_info).toMatch(s.stateInfo);
    else if (s.stateInfo !== undefined) expect(ex.state_info).toBe(s.stateInfo);
    if (s.tasks) {
      const tasks = (await stack.client.get(`/v2/executions/${created.id}/tasks`)).body.tasks as {
        name: string;
        state: string;
      }[];
      expect(Object.fromEntries(tasks.map((t) => [t.name, t.state]))).toEqual(s.tasks);
    }
  });

  it('POST answers 201 RUNNING with JSON-string fields and the stored input defaults', async () => {
    const res = await postJson(stack.client, '/v2/executions', { workflow_name: 'seq3', description: 'd1' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      workflow_name: 'seq3',
      workflow_namespace: '',
      description: 'd1',
      state: 'RUNNING',
      input: '{"n": 1}',
      output: '{}',
      task_execution_id: null,
      root_execution_id: null,
      project_id: '<default-project>',
    });
    expect(JSON.parse(res.body.params)).toEqual({ env: {}, namespace: '' });
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    await waitForExecution(stack.client, res.body.id);
  });

  it('POST checks the workflow and its input', async () => {
    expect(await postJson(stack.client, '/v2/executions', { workflow_name: 'nope' })).toMatchObject({
      status: 404,
      body: { faultstring: 'Workflow not found [workflow_identifier=nope, namespace=]' },
    });
    expect(
      await postJson(stack.client, '/v2/executions', { workflow_name: 'check', input: { m: 1 } }),
    ).toMatchObject({
      status: 400,
      body: {
        faultstring: "Invalid input [name=check, class=DirectWorkflowSpec, missing=['n'], unexpected=['m']]",
      },
    });
    expect(await postJson(stack.client, '/v2/executions', { workflow_name: 'rev' })).toMatchObject({
      status: 400,
      body: { faultstring: 'Invalid task name [wf_spec=ReverseWorkflowSpec, task_name=None]' },
    });
  });

  it('GET shows published_global and the list omits output unless asked', async () => {
    const created = await start('globals');
    await waitForExecution(stack.client, created.id);
    const one = await stack.client.get(`/v2/executions/${created.id}`);
    expect(JSON.parse(one.body.published_global)).toEqual({ g: 11 });
    expect(one.body.source_execution_id).toBeNull();
    const list = await stack.client.get(`/v2/executions?workflow_name=globals`);
    expect(list.status).toBe(200);
    expect(list.body.executions.length).toBeGreaterThanOrEqual(1);
    expect(list.body.executions[0].output).toBeUndefined();
    const withOutput = await stack.client.get(
      `/v2/executions?workflow_name=globals&include_output=true&limit=1`,
    );
    expect(JSON.parse(withOutput.body.executions[0].output)).toEqual({ b: 2, seen: 11 });
    expect(withOutput.body.next).toContain(
      '/v2/executions?sort_keys=created_at,id&sort_dirs=asc,asc&workflow_name=eq:globals&limit=1&marker=',
    );
  });

  it('tasks and action executions are listed and shown with their fields', async () => {
    const created = await start('seq3', { n: 2 });
    await waitForExecution(stack.client, created.id);
    const tasks = (await stack.client.get(`/v2/executions/${created.id}/tasks`)).body.tasks;
    expect(tasks.map((t: any) => t.name)).toEqual(['a', 'b', 'c']);
    const a = (await stack.client.get(`/v2/tasks/${tasks[0].id}`)).body;
    expect(a).toMatchObject({
      name: 'a',
      type: 'ACTION',
      workflow_name: 'seq3',
      workflow_execution_id: created.id,
      state: 'SUCCESS',
      result: '2',
      published: '{"a": 2}',
      processed: true,
    });
    expect(JSON.parse(a.runtime_context)).toEqual({ triggered_by: [] });
    const actions = (await stack.client.get(`/v2/tasks/${a.id}/action_executions`)).body.action_executions;
    expect(actions).toHaveLength(1);
    const action = (await stack.client.get(`/v2/action_executions/${actions[0].id}`)).body;
    expect(action).toMatchObject({
      name: 'std.echo',
      task_name: 'a',
      state: 'SUCCESS',
      accepted: true,
      input: '{"output": 2}',
      output: '{"result": 2}',
    });
    const filtered = await stack.client.get(`/v2/tasks?workflow_execution_id=${created.id}&name=b`);
    expect(filtered.body.tasks.map((t: any) => t.name)).toEqual(['b']);
    // Mistral filters by the task id as a string: a value that is no task id lists nothing
    for (const id of ['not-a-uuid', a.id.toUpperCase(), 'é%00']) {
      const path = encodeURIComponent(id);
      expect([id, (await stack.client.get(`/v2/tasks/${path}/action_executions`)).body]).toEqual([
        id,
        { action_executions: [] },
      ]);
      expect([id, (await stack.client.get(`/v2/tasks/${path}/workflow_executions`)).body]).toEqual([
        id,
        { executions: [] },
      ]);
    }
  });

  it('an async action completes through PUT /v2/action_executions/{id}', async () => {
    const created = await start('async_wf');
    const task = await waitForTask(stack.client, created.id, 't', 'RUNNING');
    let actions: any[] = [];
    for (let i = 0; i < 100 && actions.length === 0; i++) {
      actions = (await stack.client.get(`/v2/tasks/${task.id}/action_executions`)).body.action_executions;
    }
    const res = await putJson(stack.client, `/v2/action_executions/${actions[0].id}`, {
      state: 'SUCCESS',
      output: '{"x": 1}',
    });
    expect(res.status).toBe(200);
    const ex = await waitForExecution(stack.client, created.id);
    expect(ex.state).toBe('SUCCESS');
    expect(JSON.parse(ex.output)).toEqual({ r: { x: 1 } });
  });

  it('pause, resume and cancel through PUT with the transition rules', async () => {
    const created = await start('async_wf');
    await waitForTask(stack.client, created.id, 't', 'RUNNING');
    const paused = await putJson(stack.client, `/v2/executions/${created.id}`, { state: 'PAUSED' });
    expect(paused.body.state).toBe('PAUSED');
    const bad = await putJson(stack.client, `/v2/executions/${created.id}`, { state: 'BOGUS' });
    expect(bad).toMatchObject({
      status: 400,
      body: {
        faultstring:
          "Cannot change state to BOGUS. Allowed states are: 'RUNNING, PAUSED, SUCCESS, ERROR, CANCELLED",
      },
    });
    const resumed = await putJson(stack.client, `/v2/executions/${created.id}`, { state: 'RUNNING' });
    expect(resumed.body.state).toBe('RUNNING');
    const cancelled = await putJson(stack.client, `/v2/executions/${created.id}`, {
      state: 'CANCELLED',
      state_info: 'enough',
    });
    expect(cancelled.body).toMatchObject({ state: 'CANCELLED', state_info: 'enough' });
    const again = await putJson(stack.client, `/v2/executions/${created.id}`, { state: 'PAUSED' });
    expect(again).toMatchObject({
      status: 400,
      body: {
        faultstring: `Can't change workflow execution state from CANCELLED to PAUSED. [workflow=async_wf, execution_id=${created.id}]`,
      },
    });
    expect(await putJson(stack.client, `/v2/executions/${created.id}`, {})).toMatchObject({
      status: 400,
      body: { faultstring: 'The property state, description, or env is not provided for update.' },
    });
    const described = await putJson(stack.client, `/v2/executions/${created.id}`, { description: 'new' });
    expect(described.body.description).toBe('new');
  });

  it('a pause command stops routing until resume', async () => {
    const created = await start('pausing');
    const ex = await waitForExecution(stack.client, created.id, ['PAUSED']);
    expect(ex.state).toBe('PAUSED');
    await putJson(stack.client, `/v2/executions/${created.id}`, { state: 'RUNNING' });
    const done = await waitForExecution(stack.client, created.id);
    expect(done.state).toBe('SUCCESS');
    expect(JSON.parse(done.output)).toEqual({ b: 'done' });
  });

  it('force ERROR with a message', async () => {
    const created = await start('async_wf');
    await waitForTask(stack.client, created.id, 't', 'RUNNING');
    const res = await putJson(stack.client, `/v2/executions/${created.id}`, {
      state: 'ERROR',
      state_info: 'by hand',
    });
    expect(res.body).toMatchObject({ state: 'ERROR', state_info: 'by hand' });
    expect(JSON.parse((await stack.client.get(`/v2/executions/${created.id}`)).body.output)).toEqual({
      result: 'by hand',
    });
  });

  it('skip of a failed task lets the workflow succeed; rerun reruns it', async () => {
    const created = await start('guarded_complete');
    await waitForExecution(stack.client, created.id);
    const attempt = await waitForTask(stack.client, created.id, 'attempt', 'ERROR');
    const noReset = await putJson(stack.client, `/v2/tasks/${attempt.id}`, { state: 'RUNNING' });
    expect(noReset).toMatchObject({
      status: 400,
      body: { faultstring: 'Reset field is mandatory to rerun task.' },
    });
    const rerun = await putJson(stack.client, `/v2/tasks/${attempt.id}`, { state: 'RUNNING', reset: true });
    expect(rerun.status).toBe(200);
    await waitForExecution(stack.client, created.id);
    const again = await waitForTask(stack.client, created.id, 'attempt', 'ERROR');
    const actions = (await stack.client.get(`/v2/tasks/${again.id}/action_executions`)).body
      .action_executions;
    expect(actions.map((a: any) => a.accepted)).toEqual([false, true]);
    const skipped = await putJson(stack.client, `/v2/tasks/${again.id}`, { state: 'SKIPPED' });
    expect(skipped.body).toMatchObject({ state: 'SKIPPED', state_info: 'Task was skipped.' });
    const ex = await waitForExecution(stack.client, created.id);
    expect(ex.state).toBe('SUCCESS');
  });

  it('DELETE refuses a running execution without force and removes it with force', async () => {
    const created = await start('async_wf');
    await waitForTask(stack.client, created.id, 't', 'RUNNING');
    const refused = await stack.client.delete(`/v2/executions/${created.id}`);
    expect(refused).toMatchObject({
      status: 403,
      body: {
        faultstring: `Only completed executions can be deleted. Use --force to override this. Execution ${created.id} is in RUNNING state`,
      },
    });
    expect((await stack.client.delete(`/v2/executions/${created.id}?force=true`)).status).toBe(204);
    expect((await stack.client.get(`/v2/executions/${created.id}`)).status).toBe(404);
  });

  it('replicates an execution from source_execution_id', async () => {
    const first = await start('seq3', { n: 10 });
    await waitForExecution(stack.client, first.id);
    const copy = await postJson(stack.client, '/v2/executions', { source_execution_id: first.id });
    expect(copy.status).toBe(201);
    expect(copy.body.input).toBe('{"n": 10}');
    const ex = await waitForExecution(stack.client, copy.body.id);
    expect(JSON.parse(ex.output)).toEqual({ total: 12 });
    expect((await stack.client.get(`/v2/executions/${copy.body.id}`)).body.source_execution_id).toBe(
      first.id,
    );
  });

  it('webhook notifications arrive in order with the event payloads', async () => {
    const events: Record<string, any>[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += String(d)));
      req.on('end', () => {
        events.push(JSON.parse(body));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/events`;
      const created = await start('sum_up', {}, { notify: [{ type: 'webhook', url }] });
      await waitForExecution(stack.client, created.id);
      const deadline = Date.now() + 10_000;
      while (events.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(events.map((e) => e.event)).toEqual([
        'WORKFLOW_LAUNCHED',
        'TASK_LAUNCHED',
        'TASK_SUCCEEDED',
        'WORKFLOW_SUCCEEDED',
      ]);
      expect(events[0]).toMatchObject({
        id: created.id,
        name: 'sum_up',
        workflow_name: 'sum_up',
        state: 'RUNNING',
        root_execution_id: null,
      });
      expect(events[1]).toMatchObject({ name: 'add', state: 'RUNNING' });
      expect(events[2]).toMatchObject({
        name: 'add',
        workflow_execution_id: created.id,
        state: 'SUCCESS',
        type: 'ACTION',
      });
      expect(events[3]).toMatchObject({ id: created.id, state: 'SUCCESS' });
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('sub-executions are listed with their root and parent task', async () => {
    const created = await start('parent');
    await waitForExecution(stack.client, created.id);
    const tree = (await stack.client.get(`/v2/executions/${created.id}/executions`)).body.executions;
    expect(tree).toHaveLength(2);
    const child = tree.find((e: any) => e.id !== created.id);
    expect(child).toMatchObject({ workflow_name: 'child', root_execution_id: created.id, state: 'SUCCESS' });
    const byRoot = await stack.client.get(`/v2/executions?root_execution_id=${created.id}`);
    expect(byRoot.body.executions.map((e: any) => e.id)).toEqual([child.id]);
  });
});
