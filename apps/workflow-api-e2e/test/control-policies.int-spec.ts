import { type RecordedRequest, startHttpServer } from '@osc/testing';
import { e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
  waitForTask,
} from './support/engine-stack';

jest.setTimeout(90_000);

/**
 * Policies in combination, and control operations arriving while a policy timer is pending (DSL-6,
 * DSL-15). Timings assert lower bounds (a delay is never cut short) and generous upper bounds. The
 * receiver counts calls per path: `/hit/<key>?fail=<n>&hang=<n>` answers 500 to the first `fail`
 * calls and holds the first `hang` calls for 3 s before answering. `/hold/<key>/<item>` answers
 * `{"item": <item>}` only once the test releases it (every call is recorded with its time).
 */
const DEFINITIONS = `
version: '2.0'
pol_timeout_retry_wait_after:
  input:
    - url
  tasks:
    t:
      action: std.http url=<% $.url %>
      timeout: 1
      wait-after: 1
      retry: {count: 2, delay: 0}
      publish: {status: <% task().result.status %>}
pol_retry_delay:
  input:
    - url
  tasks:
    t:
      action: std.http url=<% $.url %>
      retry: {count: 1, delay: 2}
      publish: {status: <% task().result.status %>}
pol_pause_before_retry:
  input:
    - url
  tasks:
    t:
      pause-before: true
      action: std.http url=<% $.url %>
      retry: {count: 1, delay: 0}
      publish: {status: <% task().result.status %>}
pol_items_concurrency:
  input:
    - url
  tasks:
    t:
      with-items: x in <% range(6) %>
      concurrency: 2
      action: std.http
      input:
        url: <% $.url + '/' + str($.x) %>
      publish: {items: <% task().result.select($.content.item) %>}
pol_wait_before_timeout:
  tasks:
    t:
      wait-before: 2
      timeout: 1
      action: std.echo output='ok'
      publish: {v: <% task().result %>}
`;

const UPPER_SLACK_MS = 15_000;

describe.each(e2eModes())('policies with control operations over HTTP (%s)', (mode) => {
  let stack: EngineStack;
  let rx: Awaited<ReturnType<typeof startHttpServer>>;
  const hits = new Map<string, number>();
  /** `/hold/` calls in arrival order: key, item, arrival time, and how to answer. */
  const held: { key: string; item: number; at: number; release: () => void }[] = [];
  const autoRelease = new Set<string>();
  let keyNo = 0;
  const key = (name: string) => `${name}-${mode}-${++keyNo}`;

  beforeAll(async () => {
    rx = await startHttpServer((req: RecordedRequest, res) => {
      const u = new URL(req.url, 'http://x');
      const hold = /^\/hold\/([^/]+)\/(\d+)$/.exec(u.pathname);
      if (hold) {
        const [, k, item] = hold;
        const release = () => {
          if (!res.destroyed)
            res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ item: Number(item) }));
        };
        held.push({ key: k!, item: Number(item), at: Date.now(), release });
        if (autoRelease.has(k!)) release();
        return;
      }
      const n = (hits.get(u.pathname) ?? 0) + 1;
      hits.set(u.pathname, n);
      const fail = Number(u.searchParams.get('fail') ?? 0);
      const hang = Number(u.searchParams.get('hang') ?? 0);
      const send = () => {
        if (!res.destroyed)
          res
            .writeHead(n <= fail ? 500 : 200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ n }));
      };
      if (n <= hang) setTimeout(send, 3_000).unref();
      else send();
    });
    stack = await startEngineStack(mode);
    const res = await stack.client.post('/v2/workflows', DEFINITIONS);
    if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${res.text}`);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await rx?.close();
  }, 60_000);

  const start = async (workflow: string, input: Record<string, unknown> = {}) => {
    const res = await postJson(stack.client, '/v2/executions', { workflow_name: workflow, input });
    if (res.status !== 201) throw new Error(`start ${workflow}: ${res.status} ${res.text}`);
    return res.body as Record<string, any>;
  };
  const put = (path: string, body: unknown) => putJson(stack.client, path, body);
  const actionsOf = async (executionId: string): Promise<any[]> => {
    const [t] = (await stack.client.get(`/v2/executions/${executionId}/tasks`)).body.tasks as any[];
    return (await stack.client.get(`/v2/tasks/${t.id}/action_executions`)).body.action_executions;
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('retry + timeout + wait-after: a timed-out attempt waits, is retried with its own timeout, and succeeds', async () => {
    const k = key('combo');
    const began = Date.now();
    const ex = await start('pol_timeout_retry_wait_after', { url: `${rx.url}/hit/${k}?hang=1` });
    const done = await waitForExecution(stack.client, ex.id, ['SUCCESS', 'ERROR', 'CANCELLED'], 40_000);
    const elapsed = Date.now() - began;
    expect(done.state).toBe('SUCCESS');
    expect(JSON.parse(done.output)).toEqual({ status: 200 });
    // timeout 1 s, wait-after 1 s after the failure, the retry, wait-after 1 s after the success
    expect(elapsed).toBeGreaterThanOrEqual(3_000);
    expect(elapsed).toBeLessThan(3_000 + UPPER_SLACK_MS);
    expect(hits.get(`/hit/${k}`)).toBe(2);
    const actions = await actionsOf(ex.id);
    expect(actions.map((a) => [a.state, a.accepted])).toEqual([
      ['ERROR', false],
      ['SUCCESS', true],
    ]);
  });

  it('a retry delay that ends while the execution is PAUSED runs nothing until resume, then once', async () => {
    const k = key('pause-delay');
    const ex = await start('pol_retry_delay', { url: `${rx.url}/hit/${k}?fail=1` });
    const delayed = await waitForTask(stack.client, ex.id, 't', 'DELAYED');
    expect(delayed.state_info).toBe("Delayed by 'retry' policy [delay=2]");
    const pausedAt = Date.now();
    expect((await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
    await sleep(3_000);
    expect(hits.get(`/hit/${k}`)).toBe(1);
    expect((await stack.client.get(`/v2/executions/${ex.id}`)).body.state).toBe('PAUSED');
    // Mistral answers a resume with the state it set, even when the engine is quick to finish.
    expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
    const done = await waitForExecution(stack.client, ex.id);
    expect(done.state).toBe('SUCCESS');
    expect(Date.now() - pausedAt).toBeGreaterThanOrEqual(3_000);
    await sleep(300);
    expect(hits.get(`/hit/${k}`)).toBe(2);
    expect((await actionsOf(ex.id)).length).toBe(2);
  });

  it('a retry delay that ends after a cancel runs nothing', async () => {
    const k = key('cancel-delay');
    const ex = await start('pol_retry_delay', { url: `${rx.url}/hit/${k}?fail=1` });
    await waitForTask(stack.client, ex.id, 't', 'DELAYED');
    expect(
      (await put(`/v2/executions/${ex.id}`, { state: 'CANCELLED', state_info: 'stop' })).body.state,
    ).toBe('CANCELLED');
    await sleep(3_000);
    expect(hits.get(`/hit/${k}`)).toBe(1);
    expect((await actionsOf(ex.id)).length).toBe(1);
    expect((await stack.client.get(`/v2/executions/${ex.id}`)).body).toMatchObject({
      state: 'CANCELLED',
      state_info: 'stop',
    });
  });

  it('pause-before then resume; the retry after a failure does not pause again (DSL-6.8)', async () => {
    const k = key('pause-before-retry');
    const ex = await start('pol_pause_before_retry', { url: `${rx.url}/hit/${k}?fail=1` });
    await waitForExecution(stack.client, ex.id, ['PAUSED']);
    const t = await waitForTask(stack.client, ex.id, 't', 'IDLE');
    expect(t.state_info).toBe("Set by 'pause-before' policy");
    expect(hits.get(`/hit/${k}`)).toBeUndefined();
    // resume twice: the second is a no-op answering the current state
    expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).status).toBe(200);
    expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).status).toBe(200);
    const done = await waitForExecution(stack.client, ex.id, ['SUCCESS', 'ERROR', 'CANCELLED', 'PAUSED']);
    expect(done.state).toBe('SUCCESS');
    expect(hits.get(`/hit/${k}`)).toBe(2);
    expect(
      JSON.parse((await stack.client.get(`/v2/tasks/${t.id}`)).body.runtime_context).retry_task_policy,
    ).toEqual({ retry_no: 1 });
  });

  it('with-items and concurrency: no item starts while PAUSED, running ones finish; resume runs the rest, each once, in item order', async () => {
    const k = key('items-pause');
    const calls = () => held.filter((h) => h.key === k);
    const waitCalls = async (n: number) => {
      const deadline = Date.now() + 20_000;
      while (calls().length < n) {
        if (Date.now() > deadline) throw new Error(`${calls().length} calls, expected ${n}`);
        await sleep(20);
      }
    };
    const ex = await start('pol_items_concurrency', { url: `${rx.url}/hold/${k}` });
    await waitCalls(2);
    expect((await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
    const pausedAt = Date.now();
    // the two running items finish while PAUSED: recorded, and their slots stay empty
    for (const c of calls()) c.release();
    const deadline = Date.now() + 20_000;
    while ((await actionsOf(ex.id)).some((a) => a.state !== 'SUCCESS')) {
      if (Date.now() > deadline) throw new Error('the running items did not finish');
      await sleep(50);
    }
    await sleep(1_500);
    expect(calls().map((c) => c.item)).toEqual([0, 1]);
    expect((await actionsOf(ex.id)).map((a) => a.state)).toEqual(['SUCCESS', 'SUCCESS']);
    expect((await stack.client.get(`/v2/executions/${ex.id}`)).body.state).toBe('PAUSED');
    expect((await stack.client.get(`/v2/executions/${ex.id}/tasks`)).body.tasks[0].state).toBe('RUNNING');

    autoRelease.add(k);
    const resumedAt = Date.now();
    expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
    const done = await waitForExecution(stack.client, ex.id);
    expect(done.state).toBe('SUCCESS');
    expect(JSON.parse(done.output)).toEqual({ items: [0, 1, 2, 3, 4, 5] });
    await sleep(300);
    // each item ran once; none between the pause and the resume
    expect(
      calls()
        .map((c) => c.item)
        .sort(),
    ).toEqual([0, 1, 2, 3, 4, 5]);
    expect(calls().filter((c) => c.at > pausedAt && c.at < resumedAt)).toEqual([]);
    const actions = await actionsOf(ex.id);
    expect(actions.map((a) => [a.state, a.accepted])).toEqual(
      Array.from({ length: 6 }, () => ['SUCCESS', true]),
    );
  });

  it('wait-before 2 s then timeout 1 s: the timeout starts after the wait, the task succeeds, never sooner than 2 s', async () => {
    const began = Date.now();
    const ex = await start('pol_wait_before_timeout');
    const delayed = await waitForTask(stack.client, ex.id, 't', 'DELAYED');
    expect(delayed.state_info).toBe("Delayed by 'wait-before' policy [delay=2]");
    const done = await waitForExecution(stack.client, ex.id);
    const elapsed = Date.now() - began;
    expect(done.state).toBe('SUCCESS');
    expect(JSON.parse(done.output)).toEqual({ v: 'ok' });
    expect(elapsed).toBeGreaterThanOrEqual(2_000);
    expect(elapsed).toBeLessThan(2_000 + UPPER_SLACK_MS);
  });
});
