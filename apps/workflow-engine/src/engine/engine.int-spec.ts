import type { DataSource } from 'typeorm';
import type { CommandBus, JobQueue } from '@osc/messaging';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  taskStates,
  waitForState,
} from '../../test/engine-harness';

const WORKFLOWS = `
version: '2.0'
seq:
  input:
    - n: 1
  output:
    total: <% $.c %>
  tasks:
    a:
      action: std.echo output=<% $.n %>
      publish: {a: <% task().result %>}
      on-success: b
    b:
      action: std.echo output=<% $.a + 1 %>
      publish: {b: <% task().result %>}
      on-success: c
    c:
      action: std.echo output=<% $.b + 1 %>
      publish: {c: <% task().result %>}
fan:
  tasks:
    l:
      action: std.echo output=1
      publish: {l: <% task().result %>}
      on-success: j
    r:
      action: std.echo output=2
      publish: {r: <% task().result %>}
      on-success: j
    j:
      join: all
      action: std.echo output=<% $.l + $.r %>
      publish: {sum: <% task().result %>}
parent:
  tasks:
    call:
      workflow: child x=21
      publish: {got: <% task().result.doubled %>}
child:
  input: [x]
  output:
    doubled: <% $.x * 2 %>
  tasks:
    one:
      action: std.noop
failing:
  tasks:
    boom:
      action: std.fail
items:
  tasks:
    each:
      with-items: x in <% range(0, 5) %>
      concurrency: 2
      action: std.echo output=<% $.x * 10 %>
      publish: {all: <% task().result %>}
items_failing:
  tasks:
    each:
      with-items: x in <% [1, 2] %>
      action: std.fail
      retry: {count: 1, delay: 0}
items_last_fails:
  tasks:
    each:
      with-items: x in <% [1, 2, 3] %>
      concurrency: 1
      action: "{{ 'std.fail' if _.x == 3 else 'std.noop' }}"
bad_input:
  tasks:
    t:
      action: std.echo wrong=1
adhoc_missing:
  tasks:
    t:
      action: no.such.action
waiting:
  output:
    got: <% $.got %>
  tasks:
    w:
      action: std.async_noop
      publish: {got: <% task().result %>}
`;

describe('engine handler on PostgreSQL (in-process bus and jobs)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let bus: CommandBus;
  let jobs: JobQueue;
  let engine: EngineInstance;

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
    ({ bus, jobs } = inProcessMessaging());
    engine = new EngineInstance(ds, bus, jobs);
    await engine.start();
    await storeWorkflows(ds, WORKFLOWS);
  }, 30_000);

  afterAll(async () => {
    await engine?.stop();
    await bus?.close();
    await jobs?.close();
    await db?.drop();
  });

  it('runs a sequential workflow to SUCCESS with its output', async () => {
    const id = await startExecution(ds, engine.outbox, 'seq', { n: 5 });
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('SUCCESS');
    expect(ex['output']).toEqual({ total: 7 });
    expect(await taskStates(ds, id)).toEqual({ a: 'SUCCESS', b: 'SUCCESS', c: 'SUCCESS' });
  });

  it('joins two branches once', async () => {
    const id = await startExecution(ds, engine.outbox, 'fan');
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('SUCCESS');
    expect(ex['output']).toEqual({ l: 1, r: 2, sum: 3 });
    const joins: unknown[] = await ds.query(
      `SELECT 1 FROM "task_executions" WHERE "workflow_execution_id" = $1 AND "name" = 'j'`,
      [id],
    );
    expect(joins).toHaveLength(1);
  });

  it('runs a nested workflow and resumes the parent with the child output', async () => {
    const id = await startExecution(ds, engine.outbox, 'parent');
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('SUCCESS');
    expect(ex['output']).toEqual({ got: 42 });
    const children: Record<string, unknown>[] = await ds.query(
      `SELECT * FROM "workflow_executions" WHERE "parent_execution_id" = $1`,
      [id],
    );
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ state: 'SUCCESS', root_execution_id: id, workflow_name: 'child' });
  });

  it('fails a workflow whose action fails', async () => {
    const id = await startExecution(ds, engine.outbox, 'failing');
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('ERROR');
    expect(String(ex['state_info'])).toMatch(
      /^Failure caused by error in tasks: boom\n\n {2}boom \[task_ex_id=.*\] -> The action raised an exception \[action=.*msg='Fail action expected exception.'\]\n {4}\[action_ex_id=.*, idx=0\]: The action raised/,
    );
  });

  it('a failed with-items task names every failed item by its position in the task, earlier attempts included', async () => {
    const id = await startExecution(ds, engine.outbox, 'items_failing');
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('ERROR');
    const idx = [...String(ex['state_info']).matchAll(/idx=(\d+)\]/g)].map((m) => Number(m[1]));
    expect(idx).toEqual([0, 1, 2, 3]);
    // the last item fails alone: its decision loads no other item, and still knows its position
    const last = await waitForState(ds, await startExecution(ds, engine.outbox, 'items_last_fails'));
    expect(last['state']).toBe('ERROR');
    expect([...String(last['state_info']).matchAll(/idx=(\d+)\]/g)].map((m) => Number(m[1]))).toEqual([2]);
  });

  it('runs with-items with concurrency and keeps item order', async () => {
    const id = await startExecution(ds, engine.outbox, 'items');
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('SUCCESS');
    expect(ex['output']).toEqual({ all: [0, 10, 20, 30, 40] });
  });

  it('invalid action input fails the task and the workflow at once (DSL-13.6)', async () => {
    const id = await startExecution(ds, engine.outbox, 'bad_input');
    const ex = await waitForState(ds, id);
    expect(ex['state']).toBe('ERROR');
    expect(ex['state_info']).toMatch(
      /^Failed to run task \[error=Invalid input \[name=std.echo, class=.*missing=\['output'\], unexpected=\['wrong'\]\], wf=bad_input, task=t\]$/,
    );
  });

  it('an unknown action is fatal', async () => {
    const id = await startExecution(ds, engine.outbox, 'adhoc_missing');
    const ex = await waitForState(ds, id);
    expect(ex).toMatchObject({
      state: 'ERROR',
      state_info:
        'Failed to run task [error=Failed to find action [action_name=no.such.action, namespace=], wf=adhoc_missing, task=t]',
    });
  });

  it('a redelivered start command changes nothing', async () => {
    const id = await startExecution(ds, engine.outbox, 'seq');
    await waitForState(ds, id);
    const before: unknown[] = await ds.query(
      `SELECT "id" FROM "task_executions" WHERE "workflow_execution_id" = $1`,
      [id],
    );
    const { EngineCommandHandler } = await import('./engine-command.handler');
    await new EngineCommandHandler(ds, engine.outbox).handle({
      id: `start:${id}`,
      type: 'engine.start-execution',
      payload: { executionId: id },
    });
    const after: unknown[] = await ds.query(
      `SELECT "id" FROM "task_executions" WHERE "workflow_execution_id" = $1`,
      [id],
    );
    expect(after).toHaveLength(before.length);
  });

  it('applies one engine.actions-completed holding the results of two executions, and its redelivery changes nothing', async () => {
    const ids = [
      await startExecution(ds, engine.outbox, 'waiting'),
      await startExecution(ds, engine.outbox, 'waiting'),
    ];
    const running = async () =>
      (await ds.query(
        `SELECT "workflow_execution_id" AS "executionId", "task_execution_id" AS "taskExecutionId", "id" AS "actionExecutionId"
           FROM "action_executions" WHERE "workflow_execution_id" = ANY($1::uuid[]) AND "state" = 'RUNNING' AND "claimed_at" IS NOT NULL`,
        [ids],
      )) as { executionId: string; taskExecutionId: string; actionExecutionId: string }[];
    for (let i = 0; (await running()).length < 2; i++) {
      if (i > 500) throw new Error('the async actions were never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    const rows = await running();
    const results = rows.map((r) => ({ ...r, state: 'SUCCESS' as const, result: `for ${r.executionId}` }));
    const { EngineCommandHandler } = await import('./engine-command.handler');
    const handler = new EngineCommandHandler(ds, engine.outbox);
    const msg = { id: 'actions-completed:test', type: 'engine.actions-completed', payload: { results } };
    await handler.handle(msg);
    for (const id of ids) {
      const ex = await waitForState(ds, id);
      expect(ex['state']).toBe('SUCCESS');
      expect(ex['output']).toEqual({ got: `for ${id}` });
    }
    const history = async () =>
      (await ds.query(
        `SELECT count(*)::int AS n FROM "execution_events" WHERE "execution_id" = ANY($1::uuid[])`,
        [ids],
      )) as unknown[];
    const before = await history();
    await handler.handle(msg);
    expect(await history()).toEqual(before);
  });

  it('refuses an engine.actions-completed without results (the bus dead-letters it)', async () => {
    const { EngineCommandHandler } = await import('./engine-command.handler');
    await expect(
      new EngineCommandHandler(ds, engine.outbox).handle({
        id: 'x',
        type: 'engine.actions-completed',
        payload: { results: [] },
      }),
    ).rejects.toThrow('engine.actions-completed needs a non-empty results list');
  });

  it('two engine instances on one queue run 30 executions with no task run twice', async () => {
    const second = new EngineInstance(ds, bus, jobs);
    await second.start();
    try {
      const ids = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          startExecution(ds, i % 2 ? engine.outbox : second.outbox, 'fan'),
        ),
      );
      for (const id of ids) expect((await waitForState(ds, id))['state']).toBe('SUCCESS');
      const dup: unknown[] = await ds.query(
        `SELECT "workflow_execution_id", "name", count(*) FROM "task_executions" WHERE "workflow_execution_id" = ANY($1::uuid[])
         GROUP BY 1, 2 HAVING count(*) > 1`,
        [ids],
      );
      expect(dup).toEqual([]);
      const actions: { n: string }[] = await ds.query(
        `SELECT count(*) AS n FROM "action_executions" WHERE "workflow_execution_id" = ANY($1::uuid[])`,
        [ids],
      );
      expect(Number(actions[0]!.n)).toBe(90);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
