import { type EngineStack, postJson, startEngineStack, waitForExecution } from './support/engine-stack';

jest.setTimeout(180_000);

const OWNER = { 'x-project-id': 'play-a', 'x-user-id': 'alice', 'x-roles': 'member' };
const OTHER = { 'x-project-id': 'play-b', 'x-user-id': 'bob', 'x-roles': 'member' };
const ADMIN = { 'x-project-id': 'play-admin', 'x-user-id': 'root', 'x-roles': 'admin' };

const WF = `
version: '2.0'
playground:
  input: [who]
  vars:
    greeting: hello
  tasks:
    fetch:
      action: std.echo
      input:
        output:
          status: 200
          items: [1, 2, 3]
      publish:
        total: <% task().result.items.sum() %>
      on-success: [use]
    use:
      action: std.echo output=<% $.total %>
`;

/** The playground, POST /v2/executions/{id}/evaluate (our extension): real task contexts, policy, errors with positions. */
describe('expression playground (embedded)', () => {
  let stack: EngineStack;
  let execution: string;
  let fetchTask: string;
  let useTask: string;

  const evaluate = (who: Record<string, string>, id: string, body: unknown) =>
    postJson(stack.client.as(who), `/v2/executions/${id}/evaluate`, body);

  beforeAll(async () => {
    stack = await startEngineStack('embedded', { authMode: 'headers' });
    const created = await stack.client.as(OWNER).post('/v2/workflows', WF);
    expect([created.status, created.text.slice(0, 300)]).toEqual([201, expect.any(String)]);
    const res = await postJson(stack.client.as(OWNER), '/v2/executions', {
      workflow_name: 'playground',
      input: JSON.stringify({ who: 'world' }),
      params: JSON.stringify({ env: { region: 'eu-1' } }),
    });
    expect(res.status).toBe(201);
    execution = String(res.body.id);
    expect((await waitForExecution(stack.client.as(OWNER), execution)).state).toBe('SUCCESS');
    const tasks = (await stack.client.as(OWNER).get(`/v2/executions/${execution}/tasks`)).body.tasks as {
      id: string;
      name: string;
    }[];
    fetchTask = tasks.find((t) => t.name === 'fetch')!.id;
    useTask = tasks.find((t) => t.name === 'use')!.id;
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("evaluates YAQL and Jinja against a task's real context: input, vars, published, env, task(), execution()", async () => {
    const cases: [Record<string, unknown>, unknown][] = [
      [{ expression: 'task().result.items', task_execution_id: fetchTask }, [1, 2, 3]],
      [
        { expression: '[$.who, $.greeting, $.total, env().region]', task_execution_id: useTask },
        ['world', 'hello', 6, 'eu-1'],
      ],
      [{ expression: 'task(fetch).published.total + 1', task_execution_id: useTask }, 7],
      [
        {
          expression: 'execution().input.who ~ "/" ~ task().name',
          language: 'jinja',
          task_execution_id: fetchTask,
        },
        'world/fetch',
      ],
      [
        { expression: 'total <% $.total %> in {{ "x" }}', task_execution_id: fetchTask },
        'total <% $.total %> in x',
      ],
      [{ expression: '$.greeting + " " + $.who' }, 'hello world'],
    ];
    for (const [body, result] of cases) {
      const res = await evaluate(OWNER, execution, body);
      expect([body, res.status, res.body]).toEqual([
        body,
        200,
        { result, task_execution_id: (body['task_execution_id'] as string | undefined) ?? null },
      ]);
    }
  });

  it('answers a failing expression with its message and the position of a syntax error', async () => {
    const syntax = await evaluate(OWNER, execution, {
      expression: '$.total +* 2',
      task_execution_id: useTask,
    });
    expect([syntax.status, syntax.body]).toEqual([
      200,
      {
        error: {
          message:
            "Can not evaluate YAQL expression [expression=$.total +* 2, error=Parse error: unexpected '*' at position 9 of expression '$.total +* 2']",
          language: 'yaql',
          expression: '$.total +* 2',
          position: 9,
        },
        task_execution_id: useTask,
      },
    ]);
    const jinja = await evaluate(OWNER, execution, {
      expression: '{{ task().result.items | sum( }}',
      task_execution_id: fetchTask,
    });
    expect(jinja.body.error).toMatchObject({ language: 'jinja', position: 30 });
    const runtime = await evaluate(OWNER, execution, { expression: '$.nothing.len()' });
    expect(runtime.body.error).toMatchObject({
      language: 'yaql',
      expression: '$.nothing.len()',
      position: null,
    });
    expect(runtime.body.error.message).toMatch(/^Can not evaluate YAQL expression/);
  });

  it('is 404 across projects, 200 for an admin, 400 for bad input, 404 for a task of another execution', async () => {
    expect((await evaluate(OTHER, execution, { expression: 'env()' })).status).toBe(404);
    const admin = await evaluate(ADMIN, execution, {
      expression: 'env().region',
      task_execution_id: useTask,
    });
    expect([admin.status, admin.body.result]).toEqual([200, 'eu-1']);
    for (const bad of [
      {},
      { expression: '' },
      { expression: 1 },
      { expression: '1', language: 'python' },
      { expression: '1', task_execution_id: 'x' },
      { expression: '1', extra: true },
    ]) {
      const res = await evaluate(OWNER, execution, bad);
      expect([bad, res.status, typeof res.body?.faultstring]).toEqual([bad, 400, 'string']);
    }
    const missing = await evaluate(OWNER, execution, {
      expression: '1',
      task_execution_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(missing.status).toBe(404);
  });

  it('is 403 when the policy allows admins only (executions:evaluate), still 200 for the admin', async () => {
    const strict = await startEngineStack('embedded', {
      authMode: 'headers',
      policyOverrides: { 'executions:evaluate': 'rule:admin_only' },
    });
    try {
      expect((await strict.client.as(OWNER).post('/v2/workflows', WF)).status).toBe(201);
      const res = await postJson(strict.client.as(OWNER), '/v2/executions', {
        workflow_name: 'playground',
        input: JSON.stringify({ who: 'x' }),
      });
      const id = String(res.body.id);
      await waitForExecution(strict.client.as(OWNER), id);
      const denied = await postJson(strict.client.as(OWNER), `/v2/executions/${id}/evaluate`, {
        expression: '$.who',
      });
      expect([denied.status, denied.body.faultstring]).toEqual([403, expect.stringMatching(/forbidden/i)]);
      // reading the execution stays allowed: only the playground is closed
      expect((await strict.client.as(OWNER).get(`/v2/executions/${id}`)).status).toBe(200);
      const admin = await postJson(strict.client.as(ADMIN), `/v2/executions/${id}/evaluate`, {
        expression: '$.who',
      });
      expect([admin.status, admin.body.result]).toEqual([200, 'x']);
    } finally {
      await strict.close();
    }
  });
});
