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

jest.setTimeout(60_000);

/**
 * Control operations (DSL-15) through the HTTP API on direct, reverse and nested workflows, each
 * checked for idempotency and against a concurrent action result. Side effects are counted by a local
 * HTTP receiver: `/hit/<key>?fail=<n>` answers 500 to the first `n` hits of `<key>`, then 200.
 */
const DEFINITIONS = `
version: '2.0'
ctl_direct:
  tasks:
    a:
      action: std.async_noop
      publish: {a: <% task().result %>}
      on-success: b
    b:
      action: std.echo output=<% $.a %>
      publish: {b: <% task().result %>}
ctl_two_async:
  tasks:
    a:
      action: std.async_noop
      publish: {a: <% task().result %>}
      on-success: b
    b:
      action: std.async_noop
      publish: {b: <% task().result %>}
ctl_flaky:
  input:
    - url
  tasks:
    call:
      action: std.http url=<% $.url %>
      publish: {status: <% task().result.status %>}
ctl_error_while_running:
  tasks:
    bad:
      action: std.fail
    slow:
      action: std.async_noop
ctl_on_skip:
  tasks:
    t:
      action: std.fail
      publish-on-skip: {how: skipped}
      on-skip: after_skip
      on-success: after_success
    after_skip:
      action: std.echo output=<% $.how %>
      publish: {r: <% task().result %>}
    after_success:
      publish: {wrong: true}
ctl_reverse:
  type: reverse
  tasks:
    prep:
      action: std.async_noop
      publish: {p: <% task().result %>}
    target:
      requires: [prep]
      action: std.echo output=<% $.p %>
      publish: {r: <% task().result %>}
ctl_reverse_flaky:
  type: reverse
  input:
    - url
  tasks:
    prep:
      action: std.http url=<% $.url %>
      publish: {p: <% task().result.status %>}
      publish-on-skip: {p: skipped}
    target:
      requires: [prep]
      action: std.echo output=<% $.p %>
      publish: {r: <% task().result %>}
ctl_two_children:
  tasks:
    one:
      workflow: ctl_child
      on-success: joined
    two:
      workflow: ctl_child
      on-success: joined
    joined:
      join: all
      action: std.noop
ctl_child:
  output:
    r: <% $.r %>
  tasks:
    wait:
      action: std.async_noop
      publish: {r: <% task().result %>}
ctl_two_plain:
  tasks:
    one:
      workflow: ctl_plain_child
    two:
      workflow: ctl_plain_child
ctl_plain_child:
  tasks:
    wait:
      action: std.async_noop
ctl_nested_flaky:
  input:
    - url
  tasks:
    call:
      workflow: ctl_flaky
      input:
        url: <% $.url %>
      publish: {got: <% task().result %>}
`;

describe.each(e2eModes())('control operations over HTTP (%s)', (mode) => {
  let stack: EngineStack;
  let rx: Awaited<ReturnType<typeof startHttpServer>>;
  const hits = new Map<string, number>();
  let keyNo = 0;
  const key = (name: string) => `${name}-${mode}-${++keyNo}`;

  beforeAll(async () => {
    rx = await startHttpServer((req: RecordedRequest, res) => {
      const u = new URL(req.url, 'http://x');
      const n = (hits.get(u.pathname) ?? 0) + 1;
      hits.set(u.pathname, n);
      const fail = Number(u.searchParams.get('fail') ?? 0);
      res.writeHead(n <= fail ? 500 : 200, { 'content-type': 'application/json' }).end(JSON.stringify({ n }));
    });
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
  const put = (path: string, body: unknown) => putJson(stack.client, path, body);
  const tasksOf = async (id: string): Promise<any[]> =>
    (await stack.client.get(`/v2/executions/${id}/tasks`)).body.tasks;
  const taskStates = async (id: string) =>
    Object.fromEntries((await tasksOf(id)).map((t) => [t.name, t.state]));
  const outputOf = (ex: Record<string, any>) => JSON.parse(ex.output);
  /** The single action execution of the RUNNING task `name` of execution `id`. */
  const runningAction = async (id: string, name: string): Promise<any> => {
    const t = await waitForTask(stack.client, id, name, 'RUNNING');
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = (await stack.client.get(`/v2/tasks/${t.id}/action_executions`)).body
        .action_executions as any[];
      if (list.length > 0) return list[0];
      if (Date.now() > deadline) throw new Error(`no action execution for ${name}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const complete = (actionId: string, output: unknown) =>
    put(`/v2/action_executions/${actionId}`, { state: 'SUCCESS', output: JSON.stringify(output) });
  const childOf = async (parentId: string, taskName: string): Promise<string> => {
    const t = await waitForTask(stack.client, parentId, taskName, 'RUNNING');
    const deadline = Date.now() + 20_000;
    for (;;) {
      const subs = (await stack.client.get(`/v2/executions?task_execution_id=${t.id}`)).body
        .executions as any[];
      if (subs[0]) return subs[0].id as string;
      if (Date.now() > deadline) throw new Error(`no sub-execution for ${taskName}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  describe('direct', () => {
    it('an action result arriving while PAUSED is recorded, routing waits for resume; pause and resume are idempotent', async () => {
      const ex = await start('ctl_two_async');
      const action = await runningAction(ex.id, 'a');
      expect((await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      expect((await complete(action.id, 'x')).status).toBe(200);
      await waitForTask(stack.client, ex.id, 'a', 'SUCCESS');
      const again = await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' });
      expect(again).toMatchObject({ status: 200, body: { state: 'PAUSED' } });
      expect(await taskStates(ex.id)).toEqual({ a: 'SUCCESS' });
      // two resumes at once: both answer, the routing happens once
      const resumed = await Promise.all([
        put(`/v2/executions/${ex.id}`, { state: 'RUNNING' }),
        put(`/v2/executions/${ex.id}`, { state: 'RUNNING' }),
      ]);
      expect(resumed.map((r) => r.status)).toEqual([200, 200]);
      const b = await runningAction(ex.id, 'b');
      expect((await complete(b.id, 'y')).status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ a: 'x', b: 'y' });
      expect((await tasksOf(ex.id)).map((t) => t.name)).toEqual(['a', 'b']);
    });

    it('a pause racing an action result loses no transition and doubles none', async () => {
      for (let i = 0; i < 3; i++) {
        const ex = await start('ctl_direct');
        const action = await runningAction(ex.id, 'a');
        const [paused, completed] = await Promise.all([
          put(`/v2/executions/${ex.id}`, { state: 'PAUSED' }),
          complete(action.id, `r${i}`),
        ]);
        expect(completed.status).toBe(200);
        // the pause is applied before or after the result; if the result came first, b may even
        // have finished the run before the pause arrived (then the pause is refused or a no-op)
        const settled = await waitForExecution(stack.client, ex.id, ['PAUSED', 'SUCCESS']);
        if (settled.state === 'PAUSED') {
          expect(paused.status).toBe(200);
          await waitForTask(stack.client, ex.id, 'a', 'SUCCESS');
          expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).status).toBe(200);
        }
        const done = await waitForExecution(stack.client, ex.id);
        expect(done.state).toBe('SUCCESS');
        expect(outputOf(done)).toEqual({ a: `r${i}`, b: `r${i}` });
        expect((await tasksOf(ex.id)).map((t) => `${t.name}:${t.state}`)).toEqual(['a:SUCCESS', 'b:SUCCESS']);
      }
    });

    it('an async action moved to PAUSED pauses its task and the execution; back to RUNNING resumes both', async () => {
      const ex = await start('ctl_direct');
      const action = await runningAction(ex.id, 'a');
      expect((await put(`/v2/action_executions/${action.id}`, { state: 'PAUSED' })).status).toBe(200);
      await waitForExecution(stack.client, ex.id, ['PAUSED']);
      await waitForTask(stack.client, ex.id, 'a', 'PAUSED');
      expect((await put(`/v2/action_executions/${action.id}`, { state: 'RUNNING' })).status).toBe(200);
      await waitForExecution(stack.client, ex.id, ['RUNNING']);
      await waitForTask(stack.client, ex.id, 'a', 'RUNNING');
      expect((await complete(action.id, 'go')).status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ a: 'go', b: 'go' });
    });

    it('a result arriving after cancel changes nothing; a second cancel answers the same', async () => {
      const ex = await start('ctl_direct');
      const action = await runningAction(ex.id, 'a');
      const cancelled = await put(`/v2/executions/${ex.id}`, { state: 'CANCELLED', state_info: 'stop' });
      expect(cancelled.body).toMatchObject({ state: 'CANCELLED', state_info: 'stop' });
      await complete(action.id, 'late');
      await new Promise((r) => setTimeout(r, 300));
      const done = await waitForExecution(stack.client, ex.id);
      expect(done).toMatchObject({ state: 'CANCELLED', state_info: 'stop' });
      expect(outputOf(done)).toEqual({ result: 'stop' });
      expect((await tasksOf(ex.id)).map((t) => t.name)).toEqual(['a']);
      const again = await put(`/v2/executions/${ex.id}`, { state: 'CANCELLED' });
      expect(again).toMatchObject({ status: 200, body: { state: 'CANCELLED', state_info: 'stop' } });
    });

    it('two concurrent reruns of a failed task: one is accepted, the other refused, the action runs once more', async () => {
      const k = key('rerun');
      const ex = await start('ctl_flaky', { url: `${rx.url}/hit/${k}?fail=2` });
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      const t = await waitForTask(stack.client, ex.id, 'call', 'ERROR');
      const answers = await Promise.all([
        put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: true }),
        put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: true }),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
      const refused = answers.find((r) => r.status === 400)!;
      expect(refused.body.faultstring).toMatch(/rerun or skip in progress|ERROR/);
      // the rerun fails again (second hit answers 500): the execution ends ERROR after exactly one more run
      const ex2 = await waitForExecution(stack.client, ex.id);
      expect(ex2.state).toBe('ERROR');
      await new Promise((r) => setTimeout(r, 300));
      expect(hits.get(`/hit/${k}`)).toBe(2);
      // a later rerun is accepted again (the claim was released) and succeeds
      expect((await put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: true })).status).toBe(200);
      const ex3 = await waitForExecution(stack.client, ex.id);
      expect(ex3.state).toBe('SUCCESS');
      expect(hits.get(`/hit/${k}`)).toBe(3);
      expect(
        JSON.parse((await stack.client.get(`/v2/tasks/${t.id}`)).body.runtime_context).control_request,
      ).toBeUndefined();
    });

    it('a rerun with env is refused while the execution is RUNNING (403), allowed without env', async () => {
      const ex = await start('ctl_error_while_running');
      const slow = await runningAction(ex.id, 'slow');
      const bad = await waitForTask(stack.client, ex.id, 'bad', 'ERROR');
      expect((await stack.client.get(`/v2/executions/${ex.id}`)).body.state).toBe('RUNNING');
      const refused = await put(`/v2/tasks/${bad.id}`, { state: 'RUNNING', reset: true, env: { x: 1 } });
      expect(refused).toMatchObject({
        status: 403,
        body: {
          faultstring:
            'Updating env to workflow execution is only permitted if it is in IDLE, PAUSED, or ERROR state.',
        },
      });
      // the refused request left no claim behind: a rerun without env is accepted
      expect((await put(`/v2/tasks/${bad.id}`, { state: 'RUNNING', reset: true })).status).toBe(200);
      expect((await complete(slow.id, 'done')).status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id, ['ERROR'], 20_000);
      expect(JSON.parse(done.params).env).toEqual({});
      const actions = (await stack.client.get(`/v2/tasks/${bad.id}/action_executions`)).body
        .action_executions as any[];
      expect(actions).toHaveLength(2);
    });

    it('skip routes on-skip (not on-success) with publish-on-skip, then the workflow succeeds', async () => {
      const ex = await start('ctl_on_skip');
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      const t = await waitForTask(stack.client, ex.id, 't', 'ERROR');
      const skipped = await put(`/v2/tasks/${t.id}`, { state: 'SKIPPED' });
      expect(skipped.body).toMatchObject({
        state: 'SKIPPED',
        state_info: 'Task was skipped.',
        published: '{"how": "skipped"}',
      });
      const done = await waitForExecution(stack.client, ex.id, ['SUCCESS'], 20_000);
      expect(outputOf(done)).toEqual({ how: 'skipped', r: 'skipped' });
      expect(await taskStates(ex.id)).toEqual({ t: 'SKIPPED', after_skip: 'SUCCESS' });
    });

    it('a rerun and a skip of the same task at once: exactly one is accepted', async () => {
      const k = key('rerun-skip');
      const ex = await start('ctl_flaky', { url: `${rx.url}/hit/${k}?fail=1` });
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      const t = await waitForTask(stack.client, ex.id, 'call', 'ERROR');
      const [rerun, skip] = await Promise.all([
        put(`/v2/tasks/${t.id}`, { state: 'RUNNING', reset: true }),
        put(`/v2/tasks/${t.id}`, { state: 'SKIPPED' }),
      ]);
      expect([rerun.status, skip.status].sort()).toEqual([200, 400]);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      const final = (await stack.client.get(`/v2/tasks/${t.id}`)).body;
      expect(final.state).toBe(rerun.status === 200 ? 'SUCCESS' : 'SKIPPED');
      expect(hits.get(`/hit/${k}`)).toBe(rerun.status === 200 ? 2 : 1);
    });
  });

  describe('reverse', () => {
    it('pause defers the target until resume; a result arriving while PAUSED is kept', async () => {
      const ex = await start('ctl_reverse', {}, { task_name: 'target' });
      const action = await runningAction(ex.id, 'prep');
      expect((await put(`/v2/executions/${ex.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      expect((await complete(action.id, 'p1')).status).toBe(200);
      await waitForTask(stack.client, ex.id, 'prep', 'SUCCESS');
      expect(await taskStates(ex.id)).toEqual({ prep: 'SUCCESS' });
      expect((await put(`/v2/executions/${ex.id}`, { state: 'RUNNING' })).status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ p: 'p1', r: 'p1' });
      expect(await taskStates(ex.id)).toEqual({ prep: 'SUCCESS', target: 'SUCCESS' });
    });

    it('cancel and forced SUCCESS end a running reverse workflow with their message', async () => {
      const cancelled = await start('ctl_reverse', {}, { task_name: 'target' });
      await runningAction(cancelled.id, 'prep');
      expect(
        (await put(`/v2/executions/${cancelled.id}`, { state: 'CANCELLED', state_info: 'halt' })).body,
      ).toMatchObject({ state: 'CANCELLED', state_info: 'halt' });
      expect(outputOf(await waitForExecution(stack.client, cancelled.id))).toEqual({ result: 'halt' });

      const forced = await start('ctl_reverse', {}, { task_name: 'target' });
      await runningAction(forced.id, 'prep');
      const res = await put(`/v2/executions/${forced.id}`, { state: 'SUCCESS', state_info: 'enough' });
      expect(res.body).toMatchObject({ state: 'SUCCESS', state_info: 'enough' });
      expect((await put(`/v2/executions/${forced.id}`, { state: 'PAUSED' })).status).toBe(400);
    });

    it('rerun of a failed prerequisite with reset true runs it again and then the target', async () => {
      const k = key('rev-rerun');
      const ex = await start(
        'ctl_reverse_flaky',
        { url: `${rx.url}/hit/${k}?fail=1` },
        { task_name: 'target' },
      );
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      expect(await taskStates(ex.id)).toEqual({ prep: 'ERROR' });
      const prep = await waitForTask(stack.client, ex.id, 'prep', 'ERROR');
      expect((await put(`/v2/tasks/${prep.id}`, { state: 'RUNNING', reset: true })).status).toBe(200);
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ p: 200, r: 200 });
      expect(hits.get(`/hit/${k}`)).toBe(2);
    });

    it('skip of a failed prerequisite publishes publish-on-skip and runs the target', async () => {
      const k = key('rev-skip');
      const ex = await start(
        'ctl_reverse_flaky',
        { url: `${rx.url}/hit/${k}?fail=5` },
        { task_name: 'target' },
      );
      expect((await waitForExecution(stack.client, ex.id)).state).toBe('ERROR');
      const prep = await waitForTask(stack.client, ex.id, 'prep', 'ERROR');
      const skipped = await put(`/v2/tasks/${prep.id}`, { state: 'SKIPPED' });
      expect(skipped.body).toMatchObject({ state: 'SKIPPED', state_info: 'Task was skipped.' });
      const done = await waitForExecution(stack.client, ex.id);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ p: 'skipped', r: 'skipped' });
      expect((await put(`/v2/tasks/${prep.id}`, { state: 'SKIPPED' })).status).toBe(400);
    });
  });

  describe('nested', () => {
    it('pausing one sub-workflow pauses its parent task and the parent; the parent resumes once no task is PAUSED', async () => {
      const root = await start('ctl_two_children');
      const first = await childOf(root.id, 'one');
      const second = await childOf(root.id, 'two');
      const a1 = await runningAction(first, 'wait');
      const a2 = await runningAction(second, 'wait');
      expect((await put(`/v2/executions/${first}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      await waitForExecution(stack.client, root.id, ['PAUSED']);
      // Mistral: the parent pauses, and with it the sibling sub-workflow; both parent tasks are PAUSED
      await waitForExecution(stack.client, second, ['PAUSED']);
      await waitForTask(stack.client, root.id, 'one', 'PAUSED');
      await waitForTask(stack.client, root.id, 'two', 'PAUSED');
      // resuming the first child resumes its task only: the sibling keeps the parent paused
      expect((await put(`/v2/executions/${first}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
      await waitForTask(stack.client, root.id, 'one', 'RUNNING');
      expect((await stack.client.get(`/v2/executions/${root.id}`)).body.state).toBe('PAUSED');
      expect((await stack.client.get(`/v2/executions/${second}`)).body.state).toBe('PAUSED');
      // the first child completes while the parent is paused: its task succeeds, the join waits
      expect((await complete(a1.id, 'one')).status).toBe(200);
      await waitForTask(stack.client, root.id, 'one', 'SUCCESS');
      expect((await stack.client.get(`/v2/executions/${root.id}`)).body.state).toBe('PAUSED');
      expect((await put(`/v2/executions/${second}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
      await waitForExecution(stack.client, root.id, ['RUNNING']);
      expect((await complete(a2.id, 'two')).status).toBe(200);
      const done = await waitForExecution(stack.client, root.id);
      expect(done.state).toBe('SUCCESS');
      expect(await taskStates(root.id)).toEqual({ one: 'SUCCESS', two: 'SUCCESS', joined: 'SUCCESS' });
    });

    it('pausing the root pauses its WORKFLOW tasks and sub-workflows; resume sets them RUNNING', async () => {
      const root = await start('ctl_two_children');
      const first = await childOf(root.id, 'one');
      const second = await childOf(root.id, 'two');
      await runningAction(first, 'wait');
      await runningAction(second, 'wait');
      expect((await put(`/v2/executions/${root.id}`, { state: 'PAUSED' })).body.state).toBe('PAUSED');
      await waitForExecution(stack.client, first, ['PAUSED']);
      await waitForExecution(stack.client, second, ['PAUSED']);
      expect(await taskStates(root.id)).toEqual({ one: 'PAUSED', two: 'PAUSED' });
      expect((await put(`/v2/executions/${root.id}`, { state: 'RUNNING' })).body.state).toBe('RUNNING');
      await waitForExecution(stack.client, first, ['RUNNING']);
      await waitForExecution(stack.client, second, ['RUNNING']);
      expect(await taskStates(root.id)).toEqual({ one: 'RUNNING', two: 'RUNNING' });
      expect((await put(`/v2/executions/${root.id}`, { state: 'CANCELLED' })).status).toBe(200);
      await waitForExecution(stack.client, first, ['CANCELLED']);
      await waitForExecution(stack.client, second, ['CANCELLED']);
    });

    it('forced SUCCESS of a sub-workflow completes its parent task; forcing the root leaves a running child alone (DSL-15.4)', async () => {
      const root = await start('ctl_two_plain');
      const first = await childOf(root.id, 'one');
      const second = await childOf(root.id, 'two');
      await runningAction(first, 'wait');
      const a2 = await runningAction(second, 'wait');
      const forced = await put(`/v2/executions/${first}`, { state: 'SUCCESS', state_info: 'by hand' });
      expect(forced.body).toMatchObject({ state: 'SUCCESS', state_info: 'by hand' });
      await waitForTask(stack.client, root.id, 'one', 'SUCCESS');
      expect((await stack.client.get(`/v2/executions/${root.id}`)).body.state).toBe('RUNNING');
      const rootForced = await put(`/v2/executions/${root.id}`, { state: 'SUCCESS', state_info: 'enough' });
      expect(rootForced.body).toMatchObject({ state: 'SUCCESS', state_info: 'enough' });
      await new Promise((r) => setTimeout(r, 300));
      expect((await stack.client.get(`/v2/executions/${second}`)).body.state).toBe('RUNNING');
      // the child may still finish; its result no longer changes the forced parent
      expect((await complete(a2.id, 'late')).status).toBe(200);
      expect((await waitForExecution(stack.client, second)).state).toBe('SUCCESS');
      await new Promise((r) => setTimeout(r, 300));
      expect((await stack.client.get(`/v2/executions/${root.id}`)).body).toMatchObject({
        state: 'SUCCESS',
        state_info: 'enough',
      });
      expect((await tasksOf(root.id)).map((t) => t.name).sort()).toEqual(['one', 'two']);
    });

    it('cancel of one sub-workflow cancels its parent task; the parent ends CANCELLED once the sibling finishes', async () => {
      const root = await start('ctl_two_plain');
      const first = await childOf(root.id, 'one');
      const second = await childOf(root.id, 'two');
      await runningAction(first, 'wait');
      const a2 = await runningAction(second, 'wait');
      expect(
        (await put(`/v2/executions/${first}`, { state: 'CANCELLED', state_info: 'not this one' })).body.state,
      ).toBe('CANCELLED');
      const one = await waitForTask(stack.client, root.id, 'one', 'CANCELLED');
      expect(one.state_info).toBe('not this one');
      expect((await stack.client.get(`/v2/executions/${root.id}`)).body.state).toBe('RUNNING');
      expect((await stack.client.get(`/v2/executions/${second}`)).body.state).toBe('RUNNING');
      expect((await complete(a2.id, 'ok')).status).toBe(200);
      const done = await waitForExecution(stack.client, root.id);
      expect(done).toMatchObject({ state: 'CANCELLED', state_info: 'Cancelled tasks: one' });
      expect(await taskStates(root.id)).toEqual({ one: 'CANCELLED', two: 'SUCCESS' });
    });

    it('rerun of the failed task inside a sub-workflow reopens the parent, which then succeeds', async () => {
      const k = key('nested-rerun');
      const root = await start('ctl_nested_flaky', { url: `${rx.url}/hit/${k}?fail=1` });
      expect((await waitForExecution(stack.client, root.id)).state).toBe('ERROR');
      const call = await waitForTask(stack.client, root.id, 'call', 'ERROR');
      const child = (
        (await stack.client.get(`/v2/executions?task_execution_id=${call.id}`)).body.executions as any[]
      )[0];
      expect(child.state).toBe('ERROR');
      const inner = await waitForTask(stack.client, child.id, 'call', 'ERROR');
      expect((await put(`/v2/tasks/${inner.id}`, { state: 'RUNNING', reset: true })).status).toBe(200);
      // the parent is reopened by a message from the child: wait for SUCCESS, not for any end state
      const done = await waitForExecution(stack.client, root.id, ['SUCCESS'], 20_000);
      expect(done.state).toBe('SUCCESS');
      expect(outputOf(done)).toEqual({ got: { status: 200 } });
      expect((await stack.client.get(`/v2/executions/${child.id}`)).body.state).toBe('SUCCESS');
      expect(hits.get(`/hit/${k}`)).toBe(2);
    });
  });
});
