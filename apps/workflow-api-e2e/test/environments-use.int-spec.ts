import { CronTriggerFiring, type FiredTrigger } from '@osc/cron-scheduler';
import { e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
} from './support/engine-stack';

const WF = `
version: '2.0'
env_reader:
  output:
    greeting: <% $.greeting %>
    target: <% env().target %>
  tasks:
    read:
      action: std.echo output="<% env().greeting %>, <% env().target %>"
      publish:
        greeting: <% task().result %>
`;

/**
 * Environments named in `params.env`: resolved to their variables when an execution starts (the
 * engine's `env()` sees them) and, for cron triggers, when the trigger fires.
 */
describe.each(e2eModes())('named environments in executions and cron triggers (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    expect((await stack.client.post('/v2/workflows', WF)).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  }, 60_000);

  it('starts an execution with the variables of the environment it names', async () => {
    const c = stack.client;
    const env = await postJson(c, '/v2/environments', {
      name: 'exec_env',
      variables: JSON.stringify({ greeting: 'hello', target: 'world' }),
    });
    expect(env.status).toBe(201);
    const started = await postJson(c, '/v2/executions', {
      workflow_name: 'env_reader',
      params: { env: 'exec_env' },
    });
    expect(started.status).toBe(201);
    // The execution keeps the variables, not the name (Mistral stores the resolved env).
    expect(JSON.parse(started.body.params).env).toEqual({ greeting: 'hello', target: 'world' });
    const done = await waitForExecution(c, started.body.id);
    expect(done['state']).toBe('SUCCESS');
    expect(JSON.parse(done['output'])).toEqual({ greeting: 'hello, world', target: 'world' });

    // Changing the environment later does not change the execution that used it.
    expect(
      (
        await putJson(c, '/v2/environments', {
          name: 'exec_env',
          variables: { greeting: 'bye', target: 'moon' },
        })
      ).status,
    ).toBe(200);
    expect(JSON.parse((await c.get(`/v2/executions/${started.body.id}`)).body.params).env).toEqual({
      greeting: 'hello',
      target: 'world',
    });
  });

  it("refuses an execution naming no stored environment with Mistral's message", async () => {
    const res = await postJson(stack.client, '/v2/executions', {
      workflow_name: 'env_reader',
      params: { env: 'no_such_env' },
    });
    expect(res).toMatchObject({
      status: 400,
      body: { faultcode: 'Client', faultstring: 'Environment is not found: no_such_env', debuginfo: null },
    });
  });

  it('resolves the environment a cron trigger names when it fires, not when it is created', async () => {
    const c = stack.client;
    expect(
      (
        await postJson(c, '/v2/environments', {
          name: 'cron_env',
          variables: { greeting: 'early', target: 'cron' },
        })
      ).status,
    ).toBe(201);
    const at = '2099-01-01 00:00';
    const good = await postJson(c, '/v2/cron_triggers', {
      name: 'env_trigger',
      workflow_name: 'env_reader',
      workflow_params: { env: 'cron_env' },
      first_execution_time: at,
    });
    expect(good.status).toBe(201);
    expect(JSON.parse(good.body.workflow_params)).toEqual({ env: 'cron_env' });
    // Mistral does not look the name up at creation: a trigger may name an environment made later (or never).
    const missing = await postJson(c, '/v2/cron_triggers', {
      name: 'missing_env_trigger',
      workflow_name: 'env_reader',
      workflow_params: JSON.stringify({ env: 'made_later' }),
      first_execution_time: at,
    });
    expect(missing.status).toBe(201);
    // What the trigger will see is the environment as it is when it fires.
    expect(
      (
        await putJson(c, '/v2/environments', {
          name: 'cron_env',
          variables: { greeting: 'late', target: 'cron' },
        })
      ).status,
    ).toBe(200);

    // Fire as the scheduler does, on a clock standing at the triggers' time.
    const warnings: string[] = [];
    const fired: FiredTrigger[] = [];
    const runtime = stack.testRuntime.runtime;
    const firing = new CronTriggerFiring(
      runtime.dataSource,
      runtime.outbox,
      { now: () => new Date('2099-01-01T00:00:01Z') },
      {
        batchSize: 10,
        log: (_level, message) => warnings.push(message),
        onFired: (f) => fired.push(...f),
      },
    );
    expect(await firing.fireDue()).toBe(2);
    const byName = new Map(fired.map((f) => [f.triggerName, f]));
    expect(byName.get('missing_env_trigger')?.executionId).toBeNull();
    expect(warnings).toEqual([
      expect.stringContaining('cannot start env_reader: Environment is not found: made_later'),
    ]);
    const executionId = byName.get('env_trigger')?.executionId;
    expect(executionId).toEqual(expect.any(String));

    const done = await waitForExecution(c, executionId!);
    expect(done['state']).toBe('SUCCESS');
    expect(JSON.parse(done['output'])).toEqual({ greeting: 'late, cron', target: 'cron' });
    expect(JSON.parse(done['params']).env).toEqual({ greeting: 'late', target: 'cron' });
  });
});
