import { type ApiServer, Client, e2eModes, startApiServer } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
} from './support/engine-stack';

jest.setTimeout(60_000);

/**
 * `POST /v2/action_executions` (Mistral's ad-hoc action run) through HTTP, with the engine and its
 * executors running the actions; expectations as observed on the reference (Mistral 15).
 */
const ACTIONS = `
version: '2.0'
ae_greet:
  input:
    - who
    - punct: '!'
  base: std.echo
  base-input:
    output: "hi <% $.who %><% $.punct %>"
ae_wait:
  base: std.async_noop
`;

const WORKFLOW = `
version: '2.0'
ae_wf:
  tasks:
    t:
      action: std.async_noop
`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

/** Polls GET /v2/action_executions/{id} until the state is terminal. */
async function waitForAction(c: Client, id: string, timeoutMs = 20_000): Promise<Record<string, any>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await c.get(`/v2/action_executions/${id}`);
    if (res.status !== 200) throw new Error(`GET action execution ${id}: ${res.status} ${res.text}`);
    if (['SUCCESS', 'ERROR', 'CANCELLED'].includes(res.body.state)) return res.body;
    if (Date.now() > deadline) throw new Error(`action execution ${id} stayed ${res.body.state}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.each(e2eModes())('running actions directly (%s)', (mode) => {
  let stack: EngineStack;
  let api: Client;
  const run = (body: unknown) => postJson(api, '/v2/action_executions', body);
  const rowCount = async (): Promise<number> =>
    Number(
      (
        await stack.testRuntime.runtime.dataSource.query(`SELECT count(*)::int AS n FROM "action_executions"`)
      )[0].n,
    );

  beforeAll(async () => {
    stack = await startEngineStack(mode, { allowActionExecutionDeletion: true });
    api = stack.client;
    const res = await api.post('/v2/actions', ACTIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  it('runs a synchronous action and answers its output without keeping an execution', async () => {
    const before = await rowCount();
    const res = await run({ name: 'std.echo', input: '{"output": "Hello, Mistral!"}' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: null,
      workflow_name: null,
      workflow_namespace: '',
      task_execution_id: null,
      state: 'SUCCESS',
      state_info: null,
      tags: null,
      name: 'std.echo',
      description: null,
      project_id: null,
      accepted: null,
      input: '{"output": "Hello, Mistral!"}',
      output: '{"result": "Hello, Mistral!"}',
      created_at: null,
      updated_at: null,
    });
    expect(await rowCount()).toBe(before);
    const list = await api.get('/v2/action_executions');
    expect(list.body.action_executions).toEqual([]);
  });

  it('answers an action error as an ERROR execution (201)', async () => {
    const res = await run({ name: 'std.fail', description: 'boom' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ id: null, state: 'ERROR', description: 'boom', input: '{}' });
    expect(JSON.parse(res.body.output).result).toMatch(
      /^The action raised an exception \[action=.*msg='Fail action expected exception.'\]$/,
    );
  });

  it('schedules a saved run: RUNNING at once, then completed by an executor', async () => {
    const res = await run({
      name: 'std.echo',
      input: '{"output": "Hello, Mistral!"}',
      params: '{"save_result": true}',
      description: 'kept',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      workflow_name: null,
      workflow_namespace: '',
      task_execution_id: null,
      state: 'RUNNING',
      state_info: null,
      tags: [],
      name: 'std.echo',
      description: 'kept',
      project_id: '<default-project>',
      accepted: false,
      input: '{"output": "Hello, Mistral!"}',
      output: '{}',
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: null,
    });
    const done = await waitForAction(api, res.body.id);
    expect(done).toMatchObject({
      id: res.body.id,
      state: 'SUCCESS',
      accepted: true,
      task_name: null,
      task_execution_id: null,
      workflow_name: null,
      output: '{"result": "Hello, Mistral!"}',
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    const list = await api.get('/v2/action_executions?include_output=true');
    expect(list.status).toBe(200);
    expect(list.body.action_executions.map((a: { id: string }) => a.id)).toContain(res.body.id);
    const listed = list.body.action_executions.find((a: { id: string }) => a.id === res.body.id);
    expect(listed).toMatchObject({
      output: '{"result": "Hello, Mistral!"}',
      task_execution_id: null,
      workflow_name: null,
    });
    const plain = await api.get('/v2/action_executions');
    expect(plain.body.action_executions[0]).not.toHaveProperty('output');
    // a filter on the null task finds it too
    const byName = await api.get('/v2/action_executions?name=std.echo');
    expect(byName.body.action_executions.map((a: { id: string }) => a.id)).toContain(res.body.id);
  });

  it('runs and keeps with run_sync and save_result', async () => {
    const res = await run({
      name: 'std.echo',
      input: { output: [1, 2] },
      params: { save_result: true, run_sync: true },
      description: 'd2',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(UUID),
      state: 'SUCCESS',
      description: 'd2',
      output: '{"result": [1, 2]}',
    });
    expect((await api.get(`/v2/action_executions/${res.body.id}`)).body).toMatchObject({
      state: 'SUCCESS',
      output: '{"result": [1, 2]}',
    });
  });

  it('leaves an asynchronous action RUNNING until PUT completes it', async () => {
    const res = await run({ name: 'std.async_noop' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(UUID),
      state: 'RUNNING',
      name: 'std.async_noop',
    });
    // the executor has run it (claimed) and left it waiting for its result
    await new Promise((r) => setTimeout(r, 300));
    expect((await api.get(`/v2/action_executions/${res.body.id}`)).body.state).toBe('RUNNING');
    const deleteRunning = await api.delete(`/v2/action_executions/${res.body.id}`);
    expect(deleteRunning.status).toBe(403);
    expect(deleteRunning.body.faultstring).toBe('Only completed action execution can be deleted.');
    const paused = await putJson(api, `/v2/action_executions/${res.body.id}`, { state: 'PAUSED' });
    expect(paused.status).toBe(200);
    expect(paused.body.state).toBe('PAUSED');
    const put = await putJson(api, `/v2/action_executions/${res.body.id}`, {
      state: 'SUCCESS',
      output: '{"x": 1}',
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ state: 'SUCCESS', accepted: true, output: '{"result": {"x": 1}}' });
    const again = await putJson(api, `/v2/action_executions/${res.body.id}`, { state: 'ERROR' });
    expect(again.status).toBe(400);
    const sync = await run({ name: 'std.async_noop', params: { run_sync: true } });
    expect(sync.status).toBe(400);
    expect(sync.body.faultstring).toBe('Action does not support synchronous execution.');
  });

  it('refuses PAUSED for a synchronous action', async () => {
    const res = await run({
      name: 'std.echo',
      input: { output: 'slow', delay: 2 },
      params: { save_result: true },
    });
    expect(res.status).toBe(201);
    const paused = await putJson(api, `/v2/action_executions/${res.body.id}`, { state: 'PAUSED' });
    expect(paused.status).toBe(400);
    expect(paused.body.faultstring).toBe(
      'Transition to the PAUSED state is only supported for asynchronous action execution.',
    );
    expect((await waitForAction(api, res.body.id)).state).toBe('SUCCESS');
  });

  it('runs ad-hoc actions of the caller, in a namespace or the default one', async () => {
    const res = await run({ name: 'ae_greet', input: { who: 'bob' }, workflow_namespace: 'zz' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: null,
      name: 'ae_greet',
      workflow_namespace: 'zz',
      state: 'SUCCESS',
      output: '{"result": "hi bob!"}',
    });
    const missing = await run({ name: 'ae_greet', input: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.faultstring).toBe(
      "Invalid input [name=ae_greet, class=mistral.actions.adhoc.AdHocAction, missing=['who']]",
    );
    const async = await run({ name: 'ae_wait' });
    expect(async.status).toBe(201);
    expect(async.body).toMatchObject({ state: 'RUNNING', id: expect.stringMatching(UUID) });
    expect(
      (await putJson(api, `/v2/action_executions/${async.body.id}`, { state: 'CANCELLED' })).body.state,
    ).toBe('CANCELLED');
  });

  it('stops an action at its timeout', async () => {
    const res = await run({ name: 'std.echo', input: { output: 'late', delay: 5 }, params: { timeout: 1 } });
    expect(res.status).toBe(201);
    expect(res.body.state).toBe('ERROR');
    expect(JSON.parse(res.body.output).result).toMatch(/Action timed out/);
  });

  it('answers bad requests with 400 and keeps nothing', async () => {
    const before = await rowCount();
    const cases: [unknown, string | RegExp][] = [
      [{ name: 'std.nope' }, 'Failed to find action [action_name=std.nope]'],
      [
        { name: 'std.echo', input: { bad: 1 } },
        "Invalid input [name=std.echo, class=mistral.actions.std_actions.EchoAction, missing=['output'], unexpected=['bad']]",
      ],
      [{ input: { output: 1 } }, 'Please provide at least action name to run action.'],
      [
        { name: 'std.echo', input: { output: 1 }, bogus: 1 },
        'Unknown attribute for argument action_ex: bogus',
      ],
      [
        { name: 'std.echo', input: { output: 1 }, params: '[1]' },
        'JsonType field value must be a dictionary [actual=[1]]',
      ],
      [
        { name: 'std.echo', input: 'notjson' },
        /^Invalid input for field\/attribute action_ex\. Value: '\{'name': 'std.echo', 'input': 'notjson'\}'\. /,
      ],
      [{ name: 'std.echo', input: [1] }, /the JSON object must be str, bytes or bytearray, not list$/],
      [
        { name: 'std.echo', input: { output: 1 }, params: { timeout: -1 } },
        /timeout must be a positive number/,
      ],
      [[1], 'The request body must be a JSON object.'],
    ];
    for (const [body, message] of cases) {
      const res = await run(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.faultcode).toBe('Client');
      if (typeof message === 'string') expect(res.body.faultstring).toBe(message);
      else expect(res.body.faultstring).toMatch(message);
    }
    expect(await rowCount()).toBe(before);
  });

  it('deletes only completed standalone executions', async () => {
    const saved = await run({ name: 'std.noop', params: { save_result: true, run_sync: true } });
    expect(saved.body.state).toBe('SUCCESS');
    expect((await api.delete(`/v2/action_executions/${saved.body.id}`)).status).toBe(204);
    expect((await api.get(`/v2/action_executions/${saved.body.id}`)).status).toBe(404);
    const missing = await api.delete('/v2/action_executions/nonexist');
    expect(missing.status).toBe(404);
    expect(missing.body.faultstring).toBe('ActionExecution not found [id=nonexist]');

    expect((await api.post('/v2/workflows', WORKFLOW)).status).toBe(201);
    const ex = await postJson(api, '/v2/executions', { workflow_name: 'ae_wf' });
    let taskAction: Record<string, any> | undefined;
    for (let i = 0; i < 200 && !taskAction; i++) {
      const list = await api.get(`/v2/action_executions?workflow_name=ae_wf`);
      taskAction = list.body.action_executions[0];
      if (!taskAction) await new Promise((r) => setTimeout(r, 25));
    }
    expect(taskAction).toMatchObject({
      workflow_name: 'ae_wf',
      task_name: 't',
      task_execution_id: expect.stringMatching(UUID),
    });
    const refused = await api.delete(`/v2/action_executions/${taskAction!.id}`);
    expect(refused.status).toBe(403);
    expect(refused.body.faultstring).toBe('Only ad-hoc action execution can be deleted.');
    await putJson(api, `/v2/action_executions/${taskAction!.id}`, { state: 'SUCCESS' });
    expect((await waitForExecution(api, ex.body.id)).state).toBe('SUCCESS');
  });
});

describe.each(e2eModes())('running actions without executors (%s)', (mode) => {
  let server: ApiServer;
  let api: Client;

  beforeAll(async () => {
    server = await startApiServer(mode);
    api = new Client(server.baseUrl);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it('queues the run for the executors instead of running it in the API', async () => {
    const saved = await postJson(api, '/v2/action_executions', {
      name: 'std.echo',
      input: { output: 1 },
      params: { save_result: true },
    });
    expect(saved.status).toBe(201);
    await new Promise((r) => setTimeout(r, 500));
    expect((await api.get(`/v2/action_executions/${saved.body.id}`)).body.state).toBe('RUNNING');
    // a synchronous run waits for an executor, bounded (timeout + 5 s), then answers 503
    const started = Date.now();
    const sync = await postJson(api, '/v2/action_executions', {
      name: 'std.echo',
      input: { output: 1 },
      params: { timeout: 1 },
    });
    expect(sync.status).toBe(503);
    expect(sync.body.faultstring).toMatch(/did not complete within 6 s/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_500);
    // its transient row is never listed
    const list = await api.get('/v2/action_executions');
    expect(list.body.action_executions.map((a: { id: string }) => a.id)).toEqual([saved.body.id]);
  });

  it('refuses DELETE by default (Mistral: allow_action_execution_deletion = false)', async () => {
    const res = await api.delete('/v2/action_executions/nonexist');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      faultcode: 'Client',
      faultstring: 'Action execution deletion is not allowed.',
      debuginfo: null,
    });
  });
});
