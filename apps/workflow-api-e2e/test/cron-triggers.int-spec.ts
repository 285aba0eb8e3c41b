import { DEFAULT_FIRING, startCronScheduler } from '@osc/cron-scheduler';
import type { RunningApp } from '@osc/platform';
import {
  type ApiServer,
  type Client,
  Client as HttpClient,
  e2eModes,
  startApiServer,
} from './support/api-server';
import { type EngineStack, postJson, startEngineStack, waitForExecution } from './support/engine-stack';

jest.setTimeout(90_000);

const WF = `
version: '2.0'
greet:
  input:
    - who
    - greeting: hello
  tasks:
    say:
      action: std.echo output=<% $.who %>
`;

const TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
const pad = (n: number) => String(n).padStart(2, '0');
const wire = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

/** Polls until `check` returns a value (not undefined) or the deadline passes. */
async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(e2eModes())('cron triggers (%s)', (mode) => {
  let server: ApiServer;
  let scheduler: RunningApp;
  let alice: Client;
  let bob: Client;
  let admin: Client;

  beforeAll(async () => {
    server = await startApiServer(mode, { authMode: 'headers' });
    scheduler = await startCronScheduler(
      {
        health: { port: 0, host: '127.0.0.1' },
        logLevel: 'silent',
        firing: { ...DEFAULT_FIRING, maxSleepMs: 200 },
      },
      server.testRuntime.runtime,
      { http: false },
    );
    const base = new HttpClient(server.baseUrl);
    alice = base.as({ 'x-project-id': 'proj-a', 'x-user-id': 'alice', 'x-roles': 'member' });
    bob = base.as({ 'x-project-id': 'proj-b', 'x-user-id': 'bob', 'x-roles': 'member' });
    admin = base.as({ 'x-project-id': 'proj-admin', 'x-roles': 'admin' });
    expect((await alice.post('/v2/workflows', WF)).status).toBe(201);
  });

  afterAll(async () => {
    await scheduler?.close();
    await server?.close();
  });

  const executionsOf = async (c: Client, triggerId: string) => {
    const res = await c.get('/v2/executions?limit=1000');
    return (res.body.executions as Record<string, any>[]).filter((e) => {
      try {
        return JSON.parse(e['description']).triggered_by.id === triggerId;
      } catch {
        return false;
      }
    });
  };

  it('creates, shows, lists and deletes a pattern trigger with Mistral wire formats', async () => {
    const before = Date.now();
    const res = await postJson(alice, '/v2/cron_triggers', {
      name: 'nightly',
      workflow_name: 'greet',
      workflow_input: { who: 'world' },
      workflow_params: '{"env": {"k": "v"}}',
      pattern: '0 3 * * *',
      remaining_executions: 5,
    });
    expect(res.status).toBe(201);
    const t = res.body;
    expect(Object.keys(t)).toEqual([
      'id',
      'name',
      'workflow_name',
      'workflow_id',
      'workflow_input',
      'workflow_params',
      'project_id',
      'scope',
      'pattern',
      'remaining_executions',
      'first_execution_time',
      'next_execution_time',
      'created_at',
      'updated_at',
    ]);
    expect(t).toMatchObject({
      name: 'nightly',
      workflow_name: 'greet',
      workflow_input: '{"who": "world"}',
      workflow_params: '{"env": {"k": "v"}}',
      project_id: 'proj-a',
      scope: 'private',
      pattern: '0 3 * * *',
      remaining_executions: 5,
      first_execution_time: null,
      updated_at: null,
    });
    expect(t.created_at).toMatch(TS);
    const next = new Date(`${t.next_execution_time.replace(' ', 'T')}Z`);
    expect(next.getUTCHours()).toBe(3);
    expect(next.getUTCMinutes()).toBe(0);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.getTime() - before).toBeLessThanOrEqual(24 * 3600_000);

    expect((await alice.get('/v2/cron_triggers/nightly')).body).toEqual(t);
    expect((await alice.get(`/v2/cron_triggers/${t.id}`)).body).toEqual(t);
    expect((await alice.get('/v2/cron_triggers/nightly?fields=name,pattern')).body).toEqual({
      id: t.id,
      name: 'nightly',
      pattern: '0 3 * * *',
    });
    expect((await alice.get('/v2/cron_triggers')).body).toEqual({ cron_triggers: [t] });
    expect(
      (await alice.get('/v2/cron_triggers?pattern=0 3 * * *&remaining_executions=5')).body.cron_triggers,
    ).toHaveLength(1);
    expect((await alice.get('/v2/cron_triggers?remaining_executions=gt:5')).body.cron_triggers).toHaveLength(
      0,
    );
    expect((await alice.get('/v2/cron_triggers?workflow_name=greet&fields=name')).body).toEqual({
      cron_triggers: [{ id: t.id, name: 'nightly' }],
    });
    expect((await alice.get('/v2/cron_triggers?remaining_executions=abc')).status).toBe(400);

    const wfDelete = await alice.delete('/v2/workflows/greet');
    expect(wfDelete.status).toBe(400);
    expect(wfDelete.body.faultstring).toContain("Can't delete workflow that has cron triggers associated.");

    expect((await alice.send('PUT', '/v2/cron_triggers/nightly', '{}', 'application/json')).status).toBe(404); // no update operation
    expect((await alice.delete('/v2/cron_triggers/nightly')).status).toBe(204);
    expect((await alice.get('/v2/cron_triggers/nightly')).status).toBe(404);
    expect((await alice.delete(`/v2/cron_triggers/${t.id}`)).status).toBe(404);
  });

  it('answers every validation error', async () => {
    const base = { name: 'bad', workflow_name: 'greet', workflow_input: { who: 'x' }, pattern: '* * * * *' };
    const cases: [Record<string, unknown>, number, string][] = [
      [{ ...base, name: undefined }, 400, 'Mandatory field missing'],
      [{ ...base, workflow_name: undefined }, 400, 'Workflow ID or workflow name must be provided.'],
      [{ ...base, workflow_name: 'nope' }, 404, 'Workflow not found [workflow_identifier=nope, namespace=]'],
      [{ ...base, pattern: undefined }, 400, 'Pattern or first_execution_time must be specified.'],
      [
        { ...base, pattern: undefined, remaining_executions: 2 },
        400,
        'Pattern or first_execution_time must be specified.',
      ],
      [{ ...base, pattern: '* * *' }, 400, 'The specified pattern is not valid: * * *'],
      [{ ...base, pattern: '61 * * * *' }, 400, 'The specified pattern is not valid: 61 * * * *'],
      [{ ...base, remaining_executions: 0 }, 400, 'remaining_executions'],
      [{ ...base, remaining_executions: -1 }, 400, 'remaining_executions'],
      [{ ...base, remaining_executions: 'many' }, 400, 'unable to convert to int'],
      [{ ...base, first_execution_time: 'tomorrow' }, 400, 'first_execution_time'],
      [
        { ...base, first_execution_time: '2001-01-01 10:00' },
        400,
        'first_execution_time must be in the future.',
      ],
      [
        { ...base, pattern: undefined, first_execution_time: '4242-12-25 13:37', remaining_executions: 3 },
        400,
        'Pattern must be provided if count is superior to 1.',
      ],
      [{ ...base, workflow_input: {} }, 400, 'Invalid input'],
      [{ ...base, workflow_input: { who: 1, what: 2 } }, 400, 'Invalid input'],
      [{ ...base, workflow_input: '{not json' }, 400, 'Invalid JSON'],
      [{ ...base, workflow_params: [1] }, 400, 'Value should be a dict'],
      [{ ...base, colour: 'red' }, 400, 'Unknown attribute for argument cron_trigger: colour'],
    ];
    for (const [body, status, message] of cases) {
      const res = await postJson(alice, '/v2/cron_triggers', body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.body.faultstring).toContain(message);
    }
    expect((await alice.get('/v2/cron_triggers')).body).toEqual({ cron_triggers: [] });

    const ok = await postJson(alice, '/v2/cron_triggers', { ...base, pattern: '0 0 1 1 *' });
    expect(ok.status).toBe(201);
    const dupName = await postJson(alice, '/v2/cron_triggers', { ...base, pattern: '0 0 2 1 *' });
    expect(dupName.status).toBe(409);
    expect(dupName.body.faultstring).toBe("Duplicate entry for cron trigger bad: ['name', 'project_id']");
    const dupSchedule = await postJson(alice, '/v2/cron_triggers', {
      ...base,
      name: 'bad2',
      pattern: '0 0 1 1 *',
    });
    expect(dupSchedule.status).toBe(409);
    expect(dupSchedule.body.faultstring).toContain('Duplicate entry for cron trigger bad2:');
    expect((await alice.delete('/v2/cron_triggers/bad')).status).toBe(204);
  });

  it('fires a first_execution_time-only trigger once at that time, then removes it', async () => {
    const at = new Date(Math.ceil((Date.now() + 2500) / 1000) * 1000);
    const res = await postJson(alice, '/v2/cron_triggers', {
      name: 'once',
      workflow_id: (await alice.get('/v2/workflows/greet')).body.id,
      workflow_input: { who: 'once' },
      first_execution_time: wire(at),
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      pattern: null,
      remaining_executions: 1,
      first_execution_time: wire(at),
      next_execution_time: wire(at),
    });
    const executions = await eventually(async () => {
      const found = await executionsOf(alice, res.body.id);
      return found.length ? found : undefined;
    });
    expect((await alice.get('/v2/cron_triggers/once')).status).toBe(404);
    expect(executions).toHaveLength(1);
    const ex = executions[0]!;
    expect(new Date(`${ex['created_at'].replace(' ', 'T')}Z`).getTime()).toBeGreaterThanOrEqual(at.getTime());
    expect(JSON.parse(ex['description'])).toEqual({
      description: `Workflow execution created by cron trigger '(${res.body.id})'.`,
      triggered_by: { type: 'cron_trigger', id: res.body.id, name: 'once' },
    });
    expect(JSON.parse(ex['input'])).toEqual({ who: 'once', greeting: 'hello' });
    expect(ex['workflow_name']).toBe('greet');
  });

  it('fires a pattern trigger on its pattern and counts down to removal', async () => {
    const res = await postJson(alice, '/v2/cron_triggers', {
      name: 'every2s',
      workflow_name: 'greet',
      workflow_input: { who: 'tick' },
      workflow_params: { env: { a: 1 } },
      pattern: '* * * * * */2',
      remaining_executions: 3,
    });
    expect(res.status).toBe(201);
    const seen: number[] = [];
    await eventually(async () => {
      const t = await alice.get('/v2/cron_triggers/every2s');
      if (t.status === 200) seen.push(t.body.remaining_executions);
      return t.status === 404 ? true : undefined;
    });
    const executions = await executionsOf(alice, res.body.id);
    expect(executions).toHaveLength(3);
    const times = executions.map((e) => new Date(`${e['created_at'].replace(' ', 'T')}Z`).getTime()).sort();
    for (const t of times) expect(new Date(t).getUTCSeconds() % 2).toBe(0);
    expect(new Set(times).size).toBe(3);
    expect(JSON.parse(executions[0]!['params']).env).toEqual({ a: 1 });
    expect(seen.every((n) => n >= 1 && n <= 3)).toBe(true);
  });

  it('keeps projects apart; admins see all', async () => {
    const a = await postJson(alice, '/v2/cron_triggers', {
      name: 'mine',
      workflow_name: 'greet',
      workflow_input: { who: 'a' },
      pattern: '0 0 * * 0',
    });
    expect(a.status).toBe(201);
    expect(
      (
        await postJson(bob, '/v2/cron_triggers', {
          name: 'theirs',
          workflow_name: 'greet',
          workflow_input: { who: 'b' },
          pattern: '0 0 * * 0',
        })
      ).status,
    ).toBe(404);
    expect((await bob.get('/v2/cron_triggers')).body).toEqual({ cron_triggers: [] });
    expect((await bob.get('/v2/cron_triggers/mine')).status).toBe(404);
    expect((await bob.get(`/v2/cron_triggers/${a.body.id}`)).status).toBe(404);
    expect((await bob.delete('/v2/cron_triggers/mine')).status).toBe(404);
    expect((await bob.get('/v2/cron_triggers?all_projects=true')).status).toBe(403);
    // Mistral 15: for others project_id only filters their own triggers.
    expect(await bob.get('/v2/cron_triggers?project_id=proj-a')).toMatchObject({
      status: 200,
      body: { cron_triggers: [] },
    });
    expect((await admin.get('/v2/cron_triggers')).body).toEqual({ cron_triggers: [] });
    expect(
      (await admin.get('/v2/cron_triggers?all_projects=true')).body.cron_triggers.map((t: any) => t.name),
    ).toEqual(['mine']);
    expect(
      (await admin.get('/v2/cron_triggers?project_id=proj-a')).body.cron_triggers.map((t: any) => t.name),
    ).toEqual(['mine']);
    expect((await admin.get('/v2/cron_triggers/mine')).status).toBe(200);
    // Bob may reuse the name in his own project.
    expect((await bob.post('/v2/workflows', WF)).status).toBe(201);
    expect(
      (
        await postJson(bob, '/v2/cron_triggers', {
          name: 'mine',
          workflow_name: 'greet',
          workflow_input: { who: 'b' },
          pattern: '0 0 * * 0',
        })
      ).status,
    ).toBe(201);
    expect((await alice.delete('/v2/cron_triggers/mine')).status).toBe(204);
    expect((await bob.get('/v2/cron_triggers/mine')).status).toBe(200);
  });
});

describe.each(e2eModes())('cron triggers with the engine (%s)', (mode) => {
  let stack: EngineStack;
  let scheduler: RunningApp;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    scheduler = await startCronScheduler(
      {
        health: { port: 0, host: '127.0.0.1' },
        logLevel: 'silent',
        firing: { ...DEFAULT_FIRING, maxSleepMs: 200 },
      },
      stack.testRuntime.runtime,
      { http: false },
    );
  });

  afterAll(async () => {
    await scheduler?.close();
    await stack?.close();
  });

  it('runs a triggered execution to SUCCESS with the trigger input', async () => {
    const c = stack.client;
    expect((await c.post('/v2/workflows', WF)).status).toBe(201);
    const at = new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000);
    const t = await postJson(c, '/v2/cron_triggers', {
      name: 'run-once',
      workflow_name: 'greet',
      workflow_input: { who: 'engine' },
      first_execution_time: wire(at),
    });
    expect(t.status).toBe(201);
    const ex = await eventually(async () => {
      const res = await c.get('/v2/executions');
      return (res.body.executions as Record<string, any>[]).find((e) => e['description'].includes(t.body.id));
    });
    const done = await waitForExecution(c, ex['id']);
    expect(done['state']).toBe('SUCCESS');
    expect(JSON.parse(done['input'])).toEqual({ who: 'engine', greeting: 'hello' });
    const tasks = await c.get(`/v2/executions/${ex['id']}/tasks`);
    expect(tasks.body.tasks.map((x: any) => [x.name, x.state])).toEqual([['say', 'SUCCESS']]);
  });
});
