import { e2eModes } from './support/api-server';
import { type EngineStack, postJson, startEngineStack, waitForExecution } from './support/engine-stack';

jest.setTimeout(60_000);

const DEFINITIONS = `
version: '2.0'
qf_child:
  tasks:
    c1:
      action: std.noop
    c2:
      action: std.fail
      on-error: noop
qf_parent:
  tasks:
    call:
      workflow: qf_child
      on-success: inspect
    inspect:
      publish:
        own: <% tasks(execution().id).select($.name) %>
        recursive: <% tasks(execution().id, true).select($.name) %>
        errors: <% tasks(execution().id, recursive => true, state => ERROR).select($.name) %>
        flat_errors: <% tasks(execution().id, true, ERROR, true).select($.name) %>
        subs: <% executions(root_execution_id => execution().id).select([$.workflow_name, $.state]) %>
qf_other:
  input: [eid]
  tasks:
    look:
      publish:
        tasks: <% let(id => $.eid) -> tasks($id).select([$.name, $.state, $.workflow_execution_id = $id]) %>
        execution: <% executions(id => $.eid).select([$.workflow_name, $.state]) %>
        jinja_count: "{{ tasks(workflow_execution_id=_.eid) | length }}"
        errors_anywhere: <% let(id => $.eid) -> tasks(state => ERROR).where($.workflow_execution_id = $id).select($.name) %>
        since_then: <% execution().id in executions(from_time => execution().created_at).select($.id) %>
        before_2000: <% executions(to_time => '2000-01-01 00:00:00') %>
`;

describe.each(e2eModes())('tasks() and executions() over any execution (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  const run = async (
    client: EngineStack['client'],
    workflow: string,
    input: Record<string, unknown> = {},
  ) => {
    const created = await postJson(client, '/v2/executions', { workflow_name: workflow, input });
    expect(created.status).toBe(201);
    return waitForExecution(client, created.body.id);
  };

  it('a task sees its own execution’s tasks, those of its sub-executions and its sub-executions', async () => {
    const ex = await run(stack.client, 'qf_parent');
    expect(ex.state).toBe('SUCCESS');
    expect(JSON.parse(ex.output)).toEqual({
      own: ['call', 'inspect'],
      recursive: ['call', 'inspect', 'c1', 'c2'],
      errors: ['c2'],
      flat_errors: ['c2'],
      subs: [['qf_child', 'SUCCESS']],
    });
  });

  it('another execution’s tasks and row are visible by id, in YAQL and Jinja', async () => {
    const first = await run(stack.client, 'qf_child');
    expect(first.state).toBe('SUCCESS');
    const ex = await run(stack.client, 'qf_other', { eid: first.id });
    expect([ex.state, ex.state_info]).toEqual(['SUCCESS', null]);
    expect(JSON.parse(ex.output)).toEqual({
      tasks: [
        ['c1', 'SUCCESS', true],
        ['c2', 'ERROR', true],
      ],
      execution: [['qf_child', 'SUCCESS']],
      jinja_count: 2,
      errors_anywhere: ['c2'],
      since_then: true,
      before_2000: [],
    });
  });

  it('executions of another project stay invisible', async () => {
    const other = stack.client.as({ 'x-auth-token': 'eve:other-project' });
    expect((await other.post('/v2/workflows', DEFINITIONS)).status).toBe(201);
    const foreign = await run(other, 'qf_child');
    expect(foreign.project_id).toBe('other-project');
    const ex = await run(stack.client, 'qf_other', { eid: foreign.id });
    expect([ex.state, ex.state_info]).toEqual(['SUCCESS', null]);
    expect(JSON.parse(ex.output)).toMatchObject({
      tasks: [],
      execution: [],
      jinja_count: 0,
      errors_anywhere: [],
    });
  });
});
