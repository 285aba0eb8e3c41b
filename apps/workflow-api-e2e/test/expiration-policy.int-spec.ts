import {
  DEFAULT_FIRING,
  ExpirationPolicy,
  type ExpirationPolicyConfig,
  startCronScheduler,
} from '@osc/cron-scheduler';
import { type RunningApp, systemClock } from '@osc/platform';
import { e2eModes } from './support/api-server';
import {
  type EngineStack,
  postJson,
  putJson,
  startEngineStack,
  waitForExecution,
  waitForTask,
} from './support/engine-stack';

jest.setTimeout(120_000);

const WF = `
version: '2.0'
quick:
  tasks:
    t:
      action: std.echo output=1
failing:
  tasks:
    t:
      action: std.fail
parent:
  tasks:
    call:
      workflow: quick
held:
  tasks:
    a:
      action: std.echo output=1
      on-success: b
    b:
      pause-before: true
      action: std.echo output=2
`;

const silent = { info: () => undefined, warn: () => undefined };

/** Mistral's execution expiration policy over the API's executions, in both modes. */
describe.each(e2eModes())('execution expiration policy (%s)', (mode) => {
  let stack: EngineStack;

  beforeAll(async () => {
    stack = await startEngineStack(mode);
    expect((await stack.client.post('/v2/workflows', WF)).status).toBe(201);
  });
  afterAll(async () => {
    await stack?.close();
  });

  const db = () => stack.testRuntime.runtime.dataSource;
  const run = async (workflow: string, states = ['SUCCESS', 'ERROR']): Promise<string> => {
    const res = await postJson(stack.client, '/v2/executions', { workflow_name: workflow });
    expect(res.status).toBe(201);
    const id = String(res.body.id);
    await waitForExecution(stack.client, id, states);
    return id;
  };
  const exists = async (id: string) => (await stack.client.get(`/v2/executions/${id}`)).status === 200;
  const backdate = (ids: string[], minutes: number) =>
    db().query(
      `UPDATE "workflow_executions" SET "updated_at" = now() - ($2::int * interval '1 minute') WHERE "id" IN (SELECT (jsonb_array_elements_text($1::jsonb))::uuid)`,
      [JSON.stringify(ids), minutes],
    );
  const policy = (c: Partial<ExpirationPolicyConfig>) =>
    new ExpirationPolicy(
      db(),
      systemClock,
      {
        evaluationIntervalMinutes: 1,
        olderThanMinutes: 0,
        maxFinishedExecutions: 0,
        batchSize: 0,
        ignoredStates: [],
        ...c,
      },
      silent,
    );

  it('removes completed executions older than older_than with their sub-executions and tasks; keeps newer, running and ignored ones', async () => {
    const oldOk = await run('quick');
    const oldFailed = await run('failing');
    const oldParent = await run('parent');
    const subs = await db().query(`SELECT "id" FROM "workflow_executions" WHERE "root_execution_id" = $1`, [
      oldParent,
    ]);
    expect(subs).toHaveLength(1);
    const subId = String(subs[0].id);
    const recent = await run('quick');
    const heldRes = await postJson(stack.client, '/v2/executions', { workflow_name: 'held' });
    const held = String(heldRes.body.id);
    await waitForExecution(stack.client, held, ['PAUSED']);
    await backdate([oldOk, oldFailed, oldParent, subId, held], 120);

    // ERROR is an ignored state: the old failed execution stays; two replicas run at once
    const [a, b] = await Promise.all([
      policy({ olderThanMinutes: 60, ignoredStates: ['ERROR'], batchSize: 1 }).runOnce(),
      policy({ olderThanMinutes: 60, ignoredStates: ['ERROR'], batchSize: 1 }).runOnce(),
    ]);
    expect(a + b).toBe(2);
    expect(await exists(oldOk)).toBe(false);
    expect(await exists(oldParent)).toBe(false);
    expect(await exists(subId)).toBe(false);
    expect(
      await db().query(`SELECT 1 FROM "task_executions" WHERE "workflow_execution_id" IN ($1, $2, $3)`, [
        oldOk,
        oldParent,
        subId,
      ]),
    ).toEqual([]);
    expect(await exists(oldFailed)).toBe(true);
    expect(await exists(recent)).toBe(true);
    expect(await exists(held)).toBe(true);

    // without the ignored state the old failed one goes too; the paused one never does
    expect(await policy({ olderThanMinutes: 60 }).runOnce()).toBe(1);
    expect(await exists(oldFailed)).toBe(false);
    expect(await exists(held)).toBe(true);
    expect((await putJson(stack.client, `/v2/executions/${held}`, { state: 'RUNNING' })).status).toBe(200);
    await waitForTask(stack.client, held, 'b', 'SUCCESS');
  });

  it('keeps only the newest max_finished_executions, run by the cron-scheduler app on its interval', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await run('quick'));
    const scheduler: RunningApp = await startCronScheduler(
      {
        health: { port: 0, host: '127.0.0.1' },
        logLevel: 'silent',
        firing: DEFAULT_FIRING,
        expiration: {
          evaluationIntervalMinutes: 0.005,
          olderThanMinutes: 0,
          maxFinishedExecutions: 2,
          batchSize: 10,
          ignoredStates: [],
        },
      },
      stack.testRuntime.runtime,
      { http: false },
    );
    try {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const left: { n: number }[] = await db().query(
          `SELECT count(*)::int AS "n" FROM "workflow_executions" WHERE "task_execution_id" IS NULL AND "state" IN ('SUCCESS', 'ERROR', 'CANCELLED')`,
        );
        if (left[0]?.n === 2) break;
        if (Date.now() > deadline)
          throw new Error(`expected 2 completed executions left, found ${left[0]?.n}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // the two most recently finished ones are the ones kept
      expect(await exists(ids[3] as string)).toBe(true);
      expect(await exists(ids[2] as string)).toBe(true);
      expect(await exists(ids[0] as string)).toBe(false);
    } finally {
      await scheduler.close();
    }
  });
});
