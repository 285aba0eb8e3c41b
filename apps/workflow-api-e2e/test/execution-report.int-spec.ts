import { e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  startEngineStack,
  waitForExecution,
  waitForTask,
} from './support/engine-stack';
import { TIMESTAMP, UUID } from './support/fixtures';

jest.setTimeout(60_000);

/** Three levels: the grandchild fails after one retry, the child fails with it, the root handles it. */
const DEFINITIONS = `
version: '2.0'
report_root:
  tasks:
    first:
      action: std.noop
      on-success: call
    call:
      workflow: report_child
      on-error: handle
    handle:
      action: std.echo output="handled"
report_child:
  tasks:
    inner_ok:
      action: std.noop
      on-success: go_deeper
    go_deeper:
      workflow: report_grandchild
report_grandchild:
  tasks:
    flaky:
      action: std.fail error_data="deep"
      retry: {count: 1, delay: 0}
report_waiting:
  tasks:
    done:
      action: std.noop
      on-success: hold
    hold:
      action: std.async_noop
`;

type Entry = Record<string, any>;

/** The tree as names: workflow → {task: [sub-workflows]} — keeps the assertions readable. */
const shape = (wf: Entry): unknown => ({
  [wf['name']]:
    wf['task_executions'] === undefined
      ? '(not expanded)'
      : wf['task_executions'].map((t: Entry) =>
          t['workflow_executions'].length ? { [t['name']]: t['workflow_executions'].map(shape) } : t['name'],
        ),
});

describe.each(e2eModes())('GET /v2/executions/{id}/report (%s)', (mode) => {
  let stack: EngineStack;
  let rootId: string;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
    const created = await postJson(stack.client, '/v2/executions', { workflow_name: 'report_root' });
    rootId = created.body.id;
    const ex = await waitForExecution(stack.client, rootId);
    if (ex.state !== 'SUCCESS') throw new Error(`report_root ended ${ex.state}: ${ex.state_info}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  const report = async (query = '') => {
    const res = await stack.client.get(`/v2/executions/${rootId}/report${query}`);
    expect(res.status).toBe(200);
    return res.body as Entry;
  };

  it('reports the whole tree with statistics, entries and retry counts', async () => {
    const body = await report();
    expect(Object.keys(body).sort()).toEqual(['root_workflow_execution', 'statistics']);
    expect(body['statistics']).toEqual({
      total_tasks_count: 6,
      running_tasks_count: 0,
      success_tasks_count: 3,
      error_tasks_count: 3,
      idle_tasks_count: 0,
      paused_tasks_count: 0,
      estimated_time: 0,
    });
    const root = body['root_workflow_execution'];
    expect(shape(root)).toEqual({
      report_root: [
        'first',
        { call: [{ report_child: ['inner_ok', { go_deeper: [{ report_grandchild: ['flaky'] }] }] }] },
        'handle',
      ],
    });
    expect(root).toMatchObject({ id: rootId, name: 'report_root', state: 'SUCCESS', state_info: null });
    expect(root['created_at']).toMatch(TIMESTAMP);
    expect(root['updated_at']).toMatch(TIMESTAMP);

    const [first, call, handle] = root['task_executions'];
    expect(Object.keys(first).sort()).toEqual([
      'action_executions',
      'created_at',
      'id',
      'name',
      'state',
      'state_info',
      'updated_at',
      'workflow_executions',
    ]);
    expect(first).toMatchObject({ name: 'first', state: 'SUCCESS', workflow_executions: [] });
    expect(first['id']).toMatch(UUID);
    expect(first['action_executions']).toHaveLength(1);
    expect(first['action_executions'][0]).toMatchObject({
      name: 'std.noop',
      state: 'SUCCESS',
      accepted: true,
      state_info: null,
    });
    expect(first['action_executions'][0]['last_heartbeat']).toMatch(TIMESTAMP);
    expect(handle['action_executions'].map((a: Entry) => a['name'])).toEqual(['std.echo']);

    expect(call).toMatchObject({ name: 'call', state: 'ERROR', action_executions: [] });
    const child = call['workflow_executions'][0];
    expect(child).toMatchObject({ name: 'report_child', state: 'ERROR' });
    expect(child['state_info']).toMatch(/^Failure caused by error in tasks: go_deeper/);
    const grandchild = child['task_executions'][1]['workflow_executions'][0];
    const flaky = grandchild['task_executions'][0];
    expect(flaky).toMatchObject({ name: 'flaky', state: 'ERROR', retry_count: 1 });
    expect(flaky['action_executions'].map((a: Entry) => [a['name'], a['state']])).toEqual([
      ['std.fail', 'ERROR'],
      ['std.fail', 'ERROR'],
    ]);
    // retry_count appears only on tasks that have retried
    expect(first['retry_count']).toBeUndefined();
  });

  it('errors_only keeps the error path and counts only failed tasks', async () => {
    const body = await report('?errors_only=true');
    expect(body['statistics']).toMatchObject({
      total_tasks_count: 3,
      success_tasks_count: 0,
      error_tasks_count: 3,
    });
    expect(shape(body['root_workflow_execution'])).toEqual({
      report_root: [{ call: [{ report_child: [{ go_deeper: [{ report_grandchild: ['flaky'] }] }] }] }],
    });
  });

  it('max_depth lists deeper sub-executions without their tasks and does not count them', async () => {
    const zero = await report('?max_depth=0');
    expect(zero['statistics']).toMatchObject({
      total_tasks_count: 3,
      success_tasks_count: 2,
      error_tasks_count: 1,
    });
    expect(shape(zero['root_workflow_execution'])).toEqual({
      report_root: ['first', { call: [{ report_child: '(not expanded)' }] }, 'handle'],
    });
    const one = await report('?max_depth=1');
    expect(one['statistics']).toMatchObject({
      total_tasks_count: 5,
      success_tasks_count: 3,
      error_tasks_count: 2,
    });
    expect(shape(one['root_workflow_execution'])).toEqual({
      report_root: [
        'first',
        { call: [{ report_child: ['inner_ok', { go_deeper: [{ report_grandchild: '(not expanded)' }] }] }] },
        'handle',
      ],
    });
    expect((await report('?max_depth=-1'))['statistics']['total_tasks_count']).toBe(6);
  });

  it('statistics_only answers the statistics alone, with the other filters applied', async () => {
    expect(await report('?statistics_only=true')).toEqual({
      statistics: {
        total_tasks_count: 6,
        running_tasks_count: 0,
        success_tasks_count: 3,
        error_tasks_count: 3,
        idle_tasks_count: 0,
        paused_tasks_count: 0,
        estimated_time: 0,
      },
    });
    expect((await report('?statistics_only=true&max_depth=0'))['statistics']).toMatchObject({
      total_tasks_count: 3,
    });
    expect((await report('?statistics_only=true&errors_only=true&max_depth=1'))['statistics']).toMatchObject({
      total_tasks_count: 2,
      error_tasks_count: 2,
    });
  });

  it('a running execution counts its running task; the time estimate needs earlier successful runs', async () => {
    const created = await postJson(stack.client, '/v2/executions', { workflow_name: 'report_waiting' });
    await waitForTask(stack.client, created.body.id, 'hold', 'RUNNING');
    const res = await stack.client.get(`/v2/executions/${created.body.id}/report?statistics_only=true`);
    expect(res.body['statistics']).toEqual({
      total_tasks_count: 2,
      running_tasks_count: 1,
      success_tasks_count: 1,
      error_tasks_count: 0,
      idle_tasks_count: 0,
      paused_tasks_count: 0,
      estimated_time: -1,
    });
    const root = (await stack.client.get(`/v2/executions/${created.body.id}/report`)).body[
      'root_workflow_execution'
    ];
    expect(root).toMatchObject({ name: 'report_waiting', state: 'RUNNING' });
    expect(root['task_executions'][1]['action_executions'][0]).toMatchObject({
      name: 'std.async_noop',
      state: 'RUNNING',
    });
    expect((await stack.client.delete(`/v2/executions/${created.body.id}?force=true`)).status).toBe(204);
  });

  it('sub-execution lists of an execution and of a task honour errors_only and max_depth', async () => {
    const names = async (path: string) => {
      const res = await stack.client.get(path);
      expect(res.status).toBe(200);
      return res.body.executions.map((e: Entry) => e['workflow_name']);
    };
    expect(await names(`/v2/executions/${rootId}/executions`)).toEqual([
      'report_root',
      'report_child',
      'report_grandchild',
    ]);
    expect(await names(`/v2/executions/${rootId}/executions?max_depth=1`)).toEqual([
      'report_root',
      'report_child',
    ]);
    expect(await names(`/v2/executions/${rootId}/executions?max_depth=0&errors_only=`)).toEqual([
      'report_root',
    ]);
    expect(await names(`/v2/executions/${rootId}/executions?errors_only=true`)).toEqual([
      'report_root',
      'report_child',
      'report_grandchild',
    ]);
    const root = (await report())['root_workflow_execution'];
    const call = root['task_executions'][1];
    expect(await names(`/v2/tasks/${call['id']}/executions`)).toEqual(['report_child', 'report_grandchild']);
    expect(await names(`/v2/tasks/${call['id']}/executions?max_depth=0`)).toEqual(['report_child']);
    expect(await names(`/v2/tasks/${root['task_executions'][0]['id']}/executions`)).toEqual([]);
    const first = root['task_executions'][0];
    expect(await names(`/v2/tasks/${first['id']}/executions?errors_only=true`)).toEqual([]);
    const child = call['workflow_executions'][0];
    // from the child, errors_only follows the failed go_deeper task down to the grandchild
    const withOutput = await stack.client.get(
      `/v2/executions/${child['id']}/executions?include_output=true&errors_only=true`,
    );
    expect(
      withOutput.body.executions.map((e: Entry) => [
        e['workflow_name'],
        JSON.parse(e['output']).result !== undefined,
      ]),
    ).toEqual([
      ['report_child', true],
      ['report_grandchild', true],
    ]);
  });

  it('answers 404 for an unknown execution and 400 for bad parameters', async () => {
    const ghost = '00000000-0000-4000-8000-000000000000';
    expect(await stack.client.get(`/v2/executions/${ghost}/report`)).toMatchObject({
      status: 404,
      body: { faultstring: `WorkflowExecution not found [id=${ghost}]` },
    });
    expect(await stack.client.get(`/v2/executions/${rootId}/report?max_depth=deep`)).toMatchObject({
      status: 400,
      body: {
        faultstring: "Invalid input for field/attribute max_depth. Value: 'deep'. unable to convert to int",
      },
    });
    expect(await stack.client.get(`/v2/executions/${rootId}/report?depth=1`)).toMatchObject({
      status: 400,
      body: { faultstring: 'Unknown argument: "depth"' },
    });
  });
});
