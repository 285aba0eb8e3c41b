import { type Server, createServer } from 'node:http';
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
 * Task policies, with-items and control operations through the HTTP API. Side effects are counted by a
 * local HTTP receiver hit by std.http: `/item/<key>?delay=<ms>&fail=<n>` answers `{"v": <key>}` after
 * `delay` ms, or 500 for the first `fail` hits of that key.
 */
const DEFINITIONS = `
version: '2.0'
retry_count:
  tasks:
    t:
      action: std.fail
      retry: {count: 2, delay: 0}
retry_delay:
  tasks:
    t:
      action: std.fail
      retry: {count: 1, delay: 1}
retry_break_on:
  tasks:
    t:
      action: std.fail error_data="fatal"
      retry:
        count: 5
        delay: 0
        break-on: <% task().result = 'fatal' %>
retry_continue_on:
  input:
    - url
  tasks:
    t:
      action: std.http url=<% $.url %>
      retry:
        count: 5
        delay: 0
        continue-on: <% task().result.content.n < 3 %>
      publish: {n: <% task().result.content.n %>}
retry_until_ok:
  input:
    - url
  tasks:
    t:
      action: std.http url=<% $.url %>
      retry: {count: 3, delay: 0}
      publish: {v: <% task().result.content.v %>}
wait_before:
  tasks:
    t:
      wait-before: 2
      action: std.echo output=1
      publish: {v: <% task().result %>}
wait_after:
  tasks:
    t:
      wait-after: 1
      action: std.echo output=2
      publish: {v: <% task().result %>}
      on-success: u
    u:
      publish: {after: true}
timeout_only:
  tasks:
    t:
      action: std.sleep seconds=10
      timeout: 1
timeout_each_retry:
  tasks:
    t:
      action: std.sleep seconds=10
      timeout: 1
      retry: {count: 2, delay: 0}
retry_timeout_wait_after:
  input:
    - url
  tasks:
    t:
      action: std.http url=<% $.url %>
      timeout: 5
      wait-after: 1
      retry: {count: 2, delay: 0}
      publish: {v: <% task().result.content.v %>}
pause_before:
  tasks:
    a:
      action: std.echo output=1
      on-success: b
    b:
      pause-before: true
      action: std.echo output=2
      publish: {b: <% task().result %>}
defaults_policies:
  task-defaults:
    retry: {count: 1, delay: 0}
  tasks:
    t:
      action: std.fail
fail_on_false:
  tasks:
    t:
      action: std.echo output=1
      fail-on: <% task().result > 3 %>
      publish: {v: <% task().result %>}
keep_result_published:
  tasks:
    t:
      action: std.echo output=9
      keep-result: false
      publish: {v: <% task().result %>}
items_order:
  input:
    - base
  tasks:
    each:
      with-items: d in [300, 150, 0]
      action: std.http url="<% $.base %>/item/<% $.d %>?delay=<% $.d %>"
      publish: {vs: <% task().result.select($.content.v) %>}
items_multi:
  tasks:
    each:
      with-items:
        - a in [1, 2, 3]
        - b in <% ['x', 'y', 'z'] %>
        - c in <% [true, false, true] %>
      action: std.echo output="<% $.a %><% $.b %><% $.c %>"
      publish: {r: <% task().result %>}
items_concurrency:
  input:
    - base
  tasks:
    each:
      with-items: k in <% range(6) %>
      concurrency: 2
      action: std.http url="<% $.base %>/item/<% $.k %>?delay=150"
      publish: {vs: <% task().result.select($.content.v) %>}
items_partial:
  input:
    - base
    - fail: 1
    - delay: 0
  tasks:
    each:
      with-items: k in <% ['a', 'b', 'c'] %>
      action: std.http url="<% $.base %>/item/<% $.k %>?delay=<% $.delay %>&fail=<% switch($.k = 'b' => $.fail, true => 0) %>"
      publish: {vs: <% task().result.select($.content.v) %>}
items_retry:
  input:
    - base
  tasks:
    each:
      with-items: k in <% ['a', 'b', 'c'] %>
      concurrency: 2
      action: std.http url="<% $.base %>/item/<% $.k %>?fail=<% switch($.k = 'b' => 1, true => 0) %>"
      retry: {count: 2, delay: 0}
      publish: {vs: <% task().result.select($.content.v) %>}
items_many:
  tasks:
    each:
      with-items: i in <% range(300) %>
      concurrency: 40
      action: std.echo output=<% $.i %>
      publish: {r: <% task().result %>}
items_empty:
  tasks:
    each:
      with-items: x in <% [] %>
      action: std.echo output=<% $.x %>
      publish: {r: <% task().result %>}
nest_parent:
  tasks:
    call:
      workflow: nest_child
      publish: {got: <% task().result %>}
nest_child:
  output:
    r: <% $.r %>
  tasks:
    wait:
      action: std.async_noop
      publish: {r: <% task().result %>}
nest_grandparent:
  tasks:
    call:
      workflow: nest_parent
env_after_resume:
  tasks:
    a:
      on-success:
        - pause
        - b
    b:
      action: std.echo output=<% env().who %>
      publish: {who: <% task().result %>}
skip_then:
  tasks:
    t:
      action: std.fail
      on-success: after
      on-error: handler
    after:
      publish: {after: true}
    handler:
      action: std.fail
skip_unhandled:
  tasks:
    t:
      action: std.fail
      on-success: after
    after:
      publish: {after: true}
`;

interface Receiver {
  url: string;
  hits: Map<string, number>;
  maxInFlight: number;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const hits = new Map<string, number>();
  let inFlight = 0;
  const r: Receiver = {
    url: '',
    hits,
    maxInFlight: 0,
    reset() {
      hits.clear();
      r.maxInFlight = 0;
    },
    close: () => new Promise((res) => server.close(() => res())),
  };
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const path = u.pathname;
    const n = (hits.get(path) ?? 0) + 1;
    hits.set(path, n);
    inFlight++;
    r.maxInFlight = Math.max(r.maxInFlight, inFlight);
    const delay = Number(u.searchParams.get('delay') ?? 0);
    const fail = Number(u.searchParams.get('fail') ?? 0);
    setTimeout(() => {
      inFlight--;
      const key = path.split('/').pop();
      if (n <= fail)
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ failed: key }));
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ v: key, n }));
    }, delay);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return r;
}

describe.each(e2eModes())('policies, with-items and control operations over HTTP (%s)', (mode) => {
  let stack: EngineStack;
  let rx: Receiver;
  let keyNo = 0;
  /** A receiver path unique to one test (the hit counters are per path). */
  const key = (name: string) => `${name}-${mode}-${++keyNo}`;

  beforeAll(async () => {
    rx = await startReceiver();
    stack = await startEngineStack(mode);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  }, 60_000);

  const start = async (
    workflow: string,
    input: Record<string, unknown> = {},
    params: Record<string, unknown> = {},
  ) => {
    const res = await postJson(stack.client, '/v2/executions', { workflow_name: workflow, input, params });
    if (res.status !== 201) throw new Error(`start ${workflow}: ${res.status} ${res.text}`);
    return res.body as Record<string, any>;
  };
  const run = async (
    workflow: string,
    input: Record<string, unknown> = {},
    params: Record<string, unknown> = {},
  ) => {
    const created = await start(workflow, input, params);
    return waitForExecution(stack.client, created.id);
  };
  const tasksOf = async (executionId: string): Promise<any[]> =>
    (await stack.client.get(`/v2/executions/${executionId}/tasks`)).body.tasks;
  const actionsOf = async (taskId: string): Promise<any[]> =>
    (await stack.client.get(`/v2/tasks/${taskId}/action_executions`)).body.action_executions;
  const put = (path: string, body: unknown) => putJson(stack.client, path, body);
  /** Polls the action executions of a task until `n` exist; returns them. */
  const actionsAtLeast = async (taskId: string, n: number): Promise<any[]> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = await actionsOf(taskId);
      if (list.length >= n) return list;
      if (Date.now() > deadline)
        throw new Error(`task ${taskId} has ${list.length} action executions, wanted ${n}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const outputOf = (ex: Record<string, any>) => JSON.parse(ex.output);

  describe('retry', () => {
    it('runs count + 1 attempts then fails', async () => {
      const ex = await run('retry_count');
      expect(ex.state).toBe('ERROR');
      const [t] = await tasksOf(ex.id);
      expect(t.state).toBe('ERROR');
      expect((await actionsOf(t.id)).length).toBe(3);
      expect(JSON.parse(t.runtime_context).retry_task_policy).toEqual({ retry_no: 2 });
    });

    it('honours the delay and shows DELAYED in between', async () => {
      const began = Date.now();
      const created = await start('retry_delay');
      const delayed = await waitForTask(stack.client, created.id, 't', 'DELAYED');
      expect(delayed.state_info).toBe("Delayed by 'retry' policy [delay=1]");
      const ex = await waitForExecution(stack.client, created.id);
      expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
      expect(Date.now() - began).toBeLessThan(16_000);
      expect(ex.state).toBe('ERROR');
      const [t] = await tasksOf(ex.id);
      expect((await actionsOf(t.id)).length).toBe(2);
    });

    it('break-on stops retrying at once', async () => {
      const ex = await run('retry_break_on');
      expect(ex.state).toBe('ERROR');
      const [t] = await tasksOf(ex.id);
      expect((await actionsOf(t.id)).length).toBe(1);
    });

    it('continue-on repeats a successful action while the condition holds', async () => {
      const k = key('cont');
      const ex = await run('retry_continue_on', { url: `${rx.url}/item/${k}` });
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ n: 3 });
      expect(rx.hits.get(`/item/${k}`)).toBe(3);
    });

    it('a flaky action succeeds on a retry and only the last attempt is accepted', async () => {
      const k = key('flaky');
      const ex = await run('retry_until_ok', { url: `${rx.url}/item/${k}?fail=2` });
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ v: k });
      expect(rx.hits.get(`/item/${k}`)).toBe(3);
      const [t] = await tasksOf(ex.id);
      expect((await actionsOf(t.id)).map((a) => [a.state, a.accepted])).toEqual([
        ['ERROR', false],
        ['ERROR', false],
        ['SUCCESS', true],
      ]);
    });

    it('task-defaults give every task the retry policy', async () => {
      const ex = await run('defaults_policies');
      const [t] = await tasksOf(ex.id);
      expect(ex.state).toBe('ERROR');
      expect((await actionsOf(t.id)).length).toBe(2);
    });
  });

  describe('wait-before, wait-after and timeout', () => {
    it('wait-before of 2 s: DELAYED first and never sooner', async () => {
      const began = Date.now();
      const created = await start('wait_before');
      const delayed = await waitForTask(stack.client, created.id, 't', 'DELAYED');
      expect(delayed.state_info).toBe("Delayed by 'wait-before' policy [delay=2]");
      const ex = await waitForExecution(stack.client, created.id);
      expect(Date.now() - began).toBeGreaterThanOrEqual(2000);
      expect(Date.now() - began).toBeLessThan(17_000);
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ v: 1 });
    });

    it('wait-after holds the task DELAYED with its result, then routes', async () => {
      const began = Date.now();
      const created = await start('wait_after');
      const delayed = await waitForTask(stack.client, created.id, 't', 'DELAYED');
      expect(delayed.state_info).toBe("Delayed by 'wait-after' policy [delay=1]");
      expect((await tasksOf(created.id)).map((t) => t.name)).toEqual(['t']);
      const ex = await waitForExecution(stack.client, created.id);
      expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
      expect(Date.now() - began).toBeLessThan(16_000);
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ v: 2, after: true });
    });

    it('timeout fails a slow action', async () => {
      const began = Date.now();
      const ex = await run('timeout_only');
      expect(ex.state).toBe('ERROR');
      expect(Date.now() - began).toBeGreaterThanOrEqual(1000);
      expect(Date.now() - began).toBeLessThan(9000);
      const [t] = await tasksOf(ex.id);
      // the engine timer or the executor's own action timeout (whichever fires first) ends the attempt
      expect(t.state_info).toMatch(/Task timed out \[timeout\(s\)=1\]\.|msg='Action timed out'/);
    });

    it('the timeout also applies to every retry', async () => {
      const began = Date.now();
      const ex = await run('timeout_each_retry');
      const elapsed = Date.now() - began;
      expect(ex.state).toBe('ERROR');
      expect(elapsed).toBeGreaterThanOrEqual(3000);
      expect(elapsed).toBeLessThan(9500);
      const [t] = await tasksOf(ex.id);
      // the engine timer or the executor's own action timeout (whichever fires first) ends the attempt
      expect(t.state_info).toMatch(/Task timed out \[timeout\(s\)=1\]\.|msg='Action timed out'/);
      expect((await actionsOf(t.id)).length).toBe(3);
    });

    it('retry + timeout + wait-after together', async () => {
      const k = key('combo');
      const began = Date.now();
      const ex = await run('retry_timeout_wait_after', { url: `${rx.url}/item/${k}?fail=1` });
      expect(ex.state).toBe('SUCCESS');
      // wait-after runs after each completion, the failed one included: two waits of 1 s
      expect(Date.now() - began).toBeGreaterThanOrEqual(2000);
      expect(Date.now() - began).toBeLessThan(17_000);
      expect(outputOf(ex)).toEqual({ v: k });
      expect(rx.hits.get(`/item/${k}`)).toBe(2);
    });
  });

  describe('pause-before, fail-on, keep-result', () => {
    it('pause-before pauses the workflow with the task IDLE until resume', async () => {
      const created = await start('pause_before');
      const paused = await waitForExecution(stack.client, created.id, ['PAUSED']);
      expect(paused.state).toBe('PAUSED');
      const b = await waitForTask(stack.client, created.id, 'b', 'IDLE');
      expect(b.state_info).toBe("Set by 'pause-before' policy");
      expect(await actionsOf(b.id)).toEqual([]);
      const resumed = await put(`/v2/executions/${created.id}`, { state: 'RUNNING' });
      expect(resumed.status).toBe(200);
      // b's inline echo finishes the execution in the resume's own engine transaction; the reply
      // still carries the state the request set, as Mistral's does
      expect(resumed.body.state).toBe('RUNNING');
      const ex = await waitForExecution(stack.client, created.id);
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ b: 2 });
    });

    it('fail-on that does not hold leaves the task SUCCESS', async () => {
      const ex = await run('fail_on_false');
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ v: 1 });
    });

    it('keep-result false still publishes but stores no result', async () => {
      const ex = await run('keep_result_published');
      expect(outputOf(ex)).toEqual({ v: 9 });
      const [t] = await tasksOf(ex.id);
      expect((await stack.client.get(`/v2/tasks/${t.id}`)).body.result).toBe('null');
    });
  });

  describe('with-items', () => {
    it('results come in item order whatever the completion order', async () => {
      const ex = await run('items_order', { base: rx.url });
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ vs: ['300', '150', '0'] });
    });

    it('several arrays are zipped', async () => {
      const ex = await run('items_multi');
      expect(outputOf(ex)).toEqual({ r: ['1xTrue', '2yFalse', '3zTrue'] });
    });

    it('an empty list succeeds with an empty result', async () => {
      const ex = await run('items_empty');
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ r: [] });
    });

    it('concurrency bounds the items in flight', async () => {
      rx.reset();
      const ex = await run('items_concurrency', { base: rx.url });
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ vs: ['0', '1', '2', '3', '4', '5'] });
      expect(rx.maxInFlight).toBe(2);
    });

    it('one failed item fails the task; rerun with reset false reruns only that item', async () => {
      rx.reset();
      const ex = await run('items_partial', { base: rx.url });
      expect(ex.state).toBe('ERROR');
      const [t] = await tasksOf(ex.id);
      expect(t.state).toBe('ERROR');
      expect((await actionsOf(t.id)).map((a) => a.state).sort()).toEqual(['ERROR', 'SUCCESS', 'SUCCESS']);
      expect([...rx.hits.entries()].sort()).toEqual([
        ['/item/a', 1],
        ['/item/b', 1],
        ['/item/c', 1],
      ]);
      const rerun = await put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: false });
      expect(rerun.status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ vs: ['a', 'b', 'c'] });
      expect([...rx.hits.entries()].sort()).toEqual([
        ['/item/a', 1],
        ['/item/b', 2],
        ['/item/c', 1],
      ]);
    });

    it('GET /v2/action_executions filters on workflow_execution_id', async () => {
      rx.reset();
      const ex = await run('items_partial', { base: rx.url });
      const list = await stack.client.get(`/v2/action_executions?workflow_execution_id=${ex.id}`);
      expect(list.status).toBe(200);
      expect(list.body.action_executions.map((a: any) => a.task_name)).toEqual(['each', 'each', 'each']);
      const other = await stack.client.get(
        `/v2/action_executions?workflow_execution_id=${ex.id}&state=ERROR`,
      );
      expect(other.body.action_executions).toHaveLength(1);
    });

    it('rerun with reset true reruns every item', async () => {
      rx.reset();
      const ex = await run('items_partial', { base: rx.url });
      const [t] = await tasksOf(ex.id);
      expect((await put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: true })).status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect([...rx.hits.entries()].sort()).toEqual([
        ['/item/a', 2],
        ['/item/b', 2],
        ['/item/c', 2],
      ]);
    });

    it('with-items + concurrency + retry: only the failed item runs again, then the task succeeds', async () => {
      rx.reset();
      const ex = await run('items_retry', { base: rx.url });
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ vs: ['a', 'b', 'c'] });
      // per-item retry (issue 7): the items that passed keep their result and are not repeated
      expect([...rx.hits.entries()].sort()).toEqual([
        ['/item/a', 1],
        ['/item/b', 2],
        ['/item/c', 1],
      ]);
      expect(rx.maxInFlight).toBeLessThanOrEqual(2);
      const [t] = await tasksOf(ex.id);
      expect(JSON.parse(t.runtime_context).retry_task_policy).toEqual({ retry_no: 1 });
      const actions = await actionsOf(t.id);
      expect(actions.map((a) => [a.state, a.accepted]).sort()).toEqual([
        ['ERROR', false],
        ['SUCCESS', true],
        ['SUCCESS', true],
        ['SUCCESS', true],
      ]);
    });

    it('a large with-items task runs every item once, results in item order', async () => {
      const ex = await run('items_many');
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ r: Array.from({ length: 300 }, (_, i) => i) });
      const [t] = await tasksOf(ex.id);
      expect(await actionsAtLeast(t.id, 300)).toHaveLength(300);
    });
  });

  describe('control operations', () => {
    const subOf = async (parentId: string): Promise<Record<string, any>> => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const tree = (await stack.client.get(`/v2/executions/${parentId}/executions`)).body
          .executions as any[];
        const leaf = tree.find((e) => e.workflow_name === 'nest_child');
        if (leaf) return leaf;
        if (Date.now() > deadline) throw new Error('no sub-execution');
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    const stateOf = async (id: string) =>
      (await stack.client.get(`/v2/executions/${id}`)).body.state as string;
    const asyncAction = async (childId: string) => {
      const t = await waitForTask(stack.client, childId, 'wait', 'RUNNING');
      return (await actionsAtLeast(t.id, 1))[0];
    };

    it('pause and resume of the root propagate down to the sub-workflows', async () => {
      const root = await start('nest_grandparent');
      const leaf = await subOf(root.id);
      const action = await asyncAction(leaf.id);
      expect((await put(`/v2/executions/${root.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      await waitForExecution(stack.client, leaf.id, ['PAUSED']);
      const tree = (await stack.client.get(`/v2/executions/${root.id}/executions`)).body.executions as any[];
      expect(tree.map((e) => e.state)).toEqual(['PAUSED', 'PAUSED', 'PAUSED']);
      // idempotent: a second pause answers the same
      expect((await put(`/v2/executions/${root.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      expect((await put(`/v2/executions/${root.id}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
      await waitForExecution(stack.client, leaf.id, ['RUNNING']);
      expect((await put(`/v2/executions/${root.id}`, { state: 'RUNNING' })).status).toBe(200);
      expect(
        (await put(`/v2/action_executions/${action.id}`, { state: 'SUCCESS', output: '"ok"' })).status,
      ).toBe(200);
      const done = await waitForExecution(stack.client, root.id);
      expect(done.state).toBe('SUCCESS');
      expect(await stateOf(leaf.id)).toBe('SUCCESS');
    });

    it('pausing a sub-workflow pauses its ancestors; resuming it resumes them', async () => {
      const root = await start('nest_parent');
      const leaf = await subOf(root.id);
      const action = await asyncAction(leaf.id);
      expect((await put(`/v2/executions/${leaf.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      await waitForExecution(stack.client, root.id, ['PAUSED']);
      expect((await put(`/v2/executions/${leaf.id}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
      await waitForExecution(stack.client, root.id, ['RUNNING']);
      await put(`/v2/action_executions/${action.id}`, { state: 'SUCCESS', output: '"ok"' });
      const done = await waitForExecution(stack.client, root.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ got: { r: 'ok' } });
    });

    it('cancel of the root cancels the sub-workflows; a second cancel is accepted', async () => {
      const root = await start('nest_grandparent');
      const leaf = await subOf(root.id);
      await asyncAction(leaf.id);
      const res = await put(`/v2/executions/${root.id}`, { state: 'CANCELLED', state_info: 'stop' });
      expect(res.body).toMatchObject({ state: 'CANCELLED', state_info: 'stop' });
      await waitForExecution(stack.client, leaf.id, ['CANCELLED']);
      const again = await put(`/v2/executions/${root.id}`, { state: 'CANCELLED' });
      expect(again.status).toBe(200);
      expect(again.body.state).toBe('CANCELLED');
    });

    it('cancel of a sub-workflow fails its parent task and the parent', async () => {
      const root = await start('nest_parent');
      const leaf = await subOf(root.id);
      await asyncAction(leaf.id);
      expect((await put(`/v2/executions/${leaf.id}`, { state: 'CANCELLED' })).body.state).toBe('CANCELLED');
      const done = await waitForExecution(stack.client, root.id);
      expect(['CANCELLED', 'ERROR']).toContain(done.state);
      const [call] = await tasksOf(root.id);
      expect(['CANCELLED', 'ERROR']).toContain(call.state);
    });

    it('forced SUCCESS with state_info on a running nested workflow', async () => {
      const root = await start('nest_parent');
      const leaf = await subOf(root.id);
      await asyncAction(leaf.id);
      const res = await put(`/v2/executions/${root.id}`, { state: 'SUCCESS', state_info: 'done by hand' });
      expect(res.body).toMatchObject({ state: 'SUCCESS', state_info: 'done by hand' });
      const again = await put(`/v2/executions/${root.id}`, { state: 'SUCCESS', state_info: 'done by hand' });
      expect(again.status).toBe(200);
    });

    it('forced ERROR twice keeps the first message', async () => {
      const root = await start('nest_parent');
      const leaf = await subOf(root.id);
      await asyncAction(leaf.id);
      expect(
        (await put(`/v2/executions/${leaf.id}`, { state: 'ERROR', state_info: 'broken' })).body,
      ).toMatchObject({ state: 'ERROR', state_info: 'broken' });
      const again = await put(`/v2/executions/${leaf.id}`, { state: 'ERROR', state_info: 'broken' });
      expect(again.status).toBe(200);
      const done = await waitForExecution(stack.client, root.id);
      expect(done.state).toBe('ERROR');
      expect(done.state_info).toContain('broken');
    });

    it('env update on resume is seen by the next task', async () => {
      const created = await start('env_after_resume', {}, { env: { who: 'first' } });
      await waitForExecution(stack.client, created.id, ['PAUSED']);
      const res = await put(`/v2/executions/${created.id}`, {
        state: 'RUNNING',
        params: { env: { who: 'second' } },
      });
      expect(res.status).toBe(200);
      const ex = await waitForExecution(stack.client, created.id);
      expect(outputOf(ex)).toEqual({ who: 'second' });
      expect(JSON.parse(ex.params).env).toEqual({ who: 'second' });
    });

    it('skip of a failed task routes on-success and ends the workflow SUCCESS; a second skip is refused', async () => {
      const created = await start('skip_unhandled');
      expect((await waitForExecution(stack.client, created.id)).state).toBe('ERROR');
      const t = await waitForTask(stack.client, created.id, 't', 'ERROR');
      const skipped = await put(`/v2/tasks/${t.id}`, { state: 'SKIPPED' });
      expect(skipped.body).toMatchObject({ state: 'SKIPPED', state_info: 'Task was skipped.' });
      const ex = await waitForExecution(stack.client, created.id);
      expect(ex.state).toBe('SUCCESS');
      expect(outputOf(ex)).toEqual({ after: true });
      const twice = await put(`/v2/tasks/${t.id}`, { state: 'SKIPPED' });
      expect(twice.status).toBe(400);
      expect((await tasksOf(created.id)).map((x) => `${x.name}:${x.state}`).sort()).toEqual([
        'after:SUCCESS',
        't:SKIPPED',
      ]);
    });

    it('skip of a failed error handler ends the workflow SUCCESS, the handled task stays ERROR', async () => {
      const created = await start('skip_then');
      expect((await waitForExecution(stack.client, created.id)).state).toBe('ERROR');
      const h = await waitForTask(stack.client, created.id, 'handler', 'ERROR');
      expect((await put(`/v2/tasks/${h.id}`, { state: 'SKIPPED' })).status).toBe(200);
      const ex = await waitForExecution(stack.client, created.id);
      expect(ex.state).toBe('SUCCESS');
      expect((await tasksOf(created.id)).map((x) => `${x.name}:${x.state}`).sort()).toEqual([
        'handler:SKIPPED',
        't:ERROR',
      ]);
    });

    it('a second rerun while the first runs is refused and runs nothing more', async () => {
      rx.reset();
      const ex = await run('items_partial', { base: rx.url, delay: 400 });
      expect(ex.state).toBe('ERROR');
      const [t] = await tasksOf(ex.id);
      const first = await put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: false });
      expect(first.status).toBe(200);
      const second = await put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: false });
      expect(second.status).toBe(400);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(rx.hits.get('/item/b')).toBe(2);
      expect(rx.hits.get('/item/a')).toBe(1);
    });
  });
});
