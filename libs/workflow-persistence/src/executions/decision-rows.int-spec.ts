import { randomUUID } from 'node:crypto';
import type { ActionExecution, TaskExecution, WorkflowExecution } from '@osc/workflow-domain';
import { ENGINE_KINDS, type TestDataSource, combineMigrations, createTestDataSource } from '@osc/persistence';
import { type SqlRunner, toWorkflowExecution } from './execution-rows';
import { readSnapshot } from './execution-snapshots';
import { BUILT_PLANS } from './prepared-statements';
import { applyChangesOfMany } from './execution-store';
import { executionMigrations } from './executions.migration';

/** The rows a decision creates are stored as the domain holds them, and read back the same. */
describe.each(ENGINE_KINDS)('applyChangesOfMany: created rows (%s)', (kind) => {
  let t: TestDataSource;

  beforeAll(async () => {
    t = await createTestDataSource(kind, { migrations: combineMigrations(executionMigrations) as never });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  // quotes of every kind, a backslash, an array literal's syntax and the start of a dollar quote's tag
  const ODD = 'it\'s \\ "quoted", {braced}, NULL, $osc$, ünï';
  const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 10, 0, s, 123));
  const execution = async (): Promise<WorkflowExecution> => {
    const id = randomUUID();
    const rows: Record<string, unknown>[] = await t.dataSource.query(
      `INSERT INTO "workflow_executions" ("id", "workflow_id", "workflow_name", "project_id", "state", "spec", "root_execution_id", "created_at")
       VALUES ($1, 'wf-id', 'wf', 'p', 'RUNNING', '{"tasks":{}}', $1, $2::timestamptz) RETURNING *`,
      [id, at(0).toISOString()],
    );
    return toWorkflowExecution(rows[0]!);
  };
  const task = (ex: WorkflowExecution, name: string, over: Partial<TaskExecution>): TaskExecution => ({
    id: randomUUID(),
    name,
    executionId: ex.id,
    type: 'ACTION',
    tags: ['t'],
    state: 'RUNNING',
    stateInfo: null,
    inContext: { a: 1, s: 'it\'s \\ "quoted"' },
    published: {},
    publishedGlobal: {},
    runtimeContext: {},
    result: null,
    processed: false,
    nextTasks: [],
    errorHandled: false,
    startedAt: at(1),
    finishedAt: null,
    createdAt: at(1),
    updatedAt: null,
    ...over,
  });
  const action = (t0: TaskExecution, over: Partial<ActionExecution>): ActionExecution => ({
    id: randomUUID(),
    taskExecutionId: t0.id,
    executionId: t0.executionId,
    name: 'std.noop',
    state: 'RUNNING',
    stateInfo: null,
    input: { x: [1, null, 'y'] },
    output: null,
    accepted: true,
    itemIndex: null,
    createdAt: at(2),
    updatedAt: null,
    ...over,
  });

  /**
   * `n` executions with a first task and action, and for each a decision that completes them, starts
   * a second task and action and updates the execution: every kind of row change, with text that
   * needs quoting in every column (as text, JSON and array elements).
   */
  const decisionsOf = async (n: number) => {
    const odd = ODD;
    const exs = await Promise.all(Array.from({ length: n }, () => execution()));
    const firsts = exs.map((ex) => task(ex, 'first', { inContext: { big: [odd] } }));
    const firstActions = firsts.map((t0) => action(t0, {}));
    await applyChangesOfMany(
      t.dataSource,
      exs.map((ex, i) => ({
        ex,
        changes: {
          tasksCreated: [firsts[i]!],
          tasksUpdated: [],
          actionsCreated: [firstActions[i]!],
          actionsUpdated: [],
        },
      })),
    );
    const before = await Promise.all(exs.map((ex) => readSnapshot(t.dataSource, ex.id)));
    return exs.map((ex, i) => {
      const loaded = before[i]!.tasks[0]!;
      const done: TaskExecution = {
        ...loaded, // the loaded inContext object itself: not written again
        state: 'SUCCESS',
        stateInfo: odd,
        published: { p: null, q: odd },
        result: i % 2 ? null : { r: [i, null] },
        processed: true,
        nextTasks: [['second', 'on-success']],
        finishedAt: at(5),
        updatedAt: at(5),
      };
      const second = task(ex, 'second', { inContext: { from: odd, n: i } });
      const actionDone: ActionExecution = {
        ...firstActions[i]!,
        state: 'SUCCESS',
        output: i === 0 ? null : { out: [odd, null] },
        stateInfo: null,
        updatedAt: at(5),
      };
      const execution: WorkflowExecution = {
        ...ex,
        context: { odd, i },
        output: i % 2 ? {} : { o: odd },
        stateInfo: odd,
        updatedAt: at(6),
      };
      return {
        ex,
        before: before[i]!,
        changes: {
          execution,
          tasksCreated: [second],
          tasksUpdated: [done],
          actionsCreated: [action(second, { input: { odd } })],
          actionsUpdated: [actionDone],
        },
      };
    });
  };

  /** The statements built at run time prepared on the session of `db`. */
  const builtStatements = (
    db: SqlRunner,
  ): Promise<{ name: string; statement: string; generic_plans: number; custom_plans: number }[]> =>
    db.query(
      `SELECT "name", "statement", "generic_plans"::int, "custom_plans"::int FROM pg_prepared_statements
        WHERE "name" LIKE 'osc_built_%' ORDER BY "name"`,
    );
  it('keeps JSON null apart from SQL NULL, the order of creation and every column', async () => {
    const ex = await execution();
    const other = await execution();
    // created in this order: the sequence (and so the snapshot's order) follows it, not the names
    const tasks = [
      task(ex, 'c', {
        result: 'text',
        state: 'SUCCESS',
        finishedAt: at(3),
        processed: true,
        updatedAt: at(3),
      }),
      task(ex, 'a', { result: { r: [1, 2] }, stateInfo: 'info', nextTasks: [['c', 'on-success']] }),
      task(ex, 'b', { result: null, errorHandled: true, tags: [], published: { p: null } }),
    ];
    const actions = [
      action(tasks[0]!, { output: { out: 1 }, state: 'SUCCESS', updatedAt: at(3) }),
      action(tasks[1]!, { output: null, accepted: false, stateInfo: 'why' }),
      action(tasks[2]!, { itemIndex: 4 }),
    ];
    const otherTask = task(other, 'z', {});
    await applyChangesOfMany(t.dataSource, [
      { ex, changes: { tasksCreated: tasks, tasksUpdated: [], actionsCreated: actions, actionsUpdated: [] } },
      {
        ex: other,
        changes: { tasksCreated: [otherTask], tasksUpdated: [], actionsCreated: [], actionsUpdated: [] },
      },
    ]);

    const snapshot = await readSnapshot(t.dataSource, ex.id);
    expect(snapshot!.tasks).toEqual(tasks);
    expect(snapshot!.actions).toEqual(actions);
    expect((await readSnapshot(t.dataSource, other.id))!.tasks).toEqual([otherTask]);

    const stored: Record<string, unknown>[] = await t.dataSource.query(
      `SELECT "name", "workflow_id", "workflow_name", "project_id", jsonb_typeof("result") AS "result_type"
         FROM "task_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`,
      [ex.id],
    );
    expect(stored).toEqual([
      { name: 'c', workflow_id: 'wf-id', workflow_name: 'wf', project_id: 'p', result_type: 'string' },
      { name: 'a', workflow_id: 'wf-id', workflow_name: 'wf', project_id: 'p', result_type: 'object' },
      { name: 'b', workflow_id: 'wf-id', workflow_name: 'wf', project_id: 'p', result_type: 'null' },
    ]);
    const storedActions: Record<string, unknown>[] = await t.dataSource.query(
      `SELECT "task_name", "workflow_name", "project_id", "output" IS NULL AS "no_output"
         FROM "action_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`,
      [ex.id],
    );
    expect(storedActions).toEqual([
      { task_name: 'c', workflow_name: 'wf', project_id: 'p', no_output: false },
      { task_name: 'a', workflow_name: 'wf', project_id: 'p', no_output: true },
      { task_name: 'b', workflow_name: 'wf', project_id: 'p', no_output: true },
    ]);
  });

  it('runs `writes` as CTEs of the last statement, after `alongside`, or in a statement of their own', async () => {
    await t.dataSource.query(`CREATE TABLE IF NOT EXISTS "along_rows" ("id" text PRIMARY KEY, "n" int)`);
    const sent: string[] = [];
    const db = {
      query: (sql: string, params?: unknown[]) => {
        sent.push(sql);
        return t.dataSource.query(sql, params);
      },
    };
    const ex = await execution();
    const other = await execution();
    const none = { tasksCreated: [], tasksUpdated: [], actionsCreated: [], actionsUpdated: [] };
    const order: string[] = [];
    const along = (id: string) => (bind: (v: unknown) => string) => {
      order.push('writes');
      return [`INSERT INTO "along_rows" VALUES (${bind(id)}::text, ${bind(1)}::int)`];
    };
    const [t1, t2] = [task(ex, 'a', {}), task(other, 'b', {})];
    await applyChangesOfMany(
      db,
      [
        { ex, changes: { ...none, tasksCreated: [t1] } },
        { ex: other, changes: { ...none, tasksCreated: [t2] } },
      ],
      (bind) => {
        order.push('alongside');
        return `length(${bind('x')}::text)`;
      },
      along('r1'),
    );
    expect(order).toEqual(['alongside', 'writes']);
    expect(sent).toHaveLength(1); // both members' rows, the call and the writes: one statement
    expect(sent[0]).toMatch(/INSERT INTO "task_executions".*INSERT INTO "along_rows".*"alongside"/s);
    expect((await readSnapshot(t.dataSource, other.id))!.tasks).toEqual([t2]);
    // nothing else to write: the writes alone, in one statement
    sent.length = 0;
    await applyChangesOfMany(db, [{ ex, changes: none }], () => null, along('r2'));
    expect(sent).toEqual([`INSERT INTO "along_rows" VALUES ($1::text, $2::int)`]);
    expect(await t.dataSource.query(`SELECT "id", "n" FROM "along_rows" ORDER BY "id"`)).toEqual([
      { id: 'r1', n: 1 },
      { id: 'r2', n: 1 },
    ]);
  });

  // up to three rows of a kind go as a VALUES list, more as one array per column: both read back the
  // same, whether bound as parameters or, in a transaction, written as the literals of an EXECUTE
  it.each([
    [2, 'bound'],
    [5, 'bound'],
    [2, 'executed'],
    [5, 'executed'],
  ] as const)(
    'writes every kind of row change of %i executions as decided (%s), keeping a loaded value as it was',
    async (n, how) => {
      const sent: string[] = [];
      const db = {
        query: (sql: string, params?: unknown[]) => {
          sent.push(sql);
          return t.dataSource.query(sql, params);
        },
      };
      const decided = await decisionsOf(n);
      const odd = ODD;
      sent.length = 0;
      if (how === 'bound') {
        await applyChangesOfMany(db, decided);
        expect(sent).toHaveLength(1);
        expect(sent[0]!.includes('unnest(')).toBe(n > 3);
      } else {
        const [statement] = await t.dataSource.transaction(async (em) => {
          const before = await builtStatements(em);
          await applyChangesOfMany(em, decided);
          return (await builtStatements(em)).filter((s) => !before.some((b) => b.name === s.name));
        });
        if (kind === 'pglite') {
          // the embedded engine's session runs it with bound values (see `executeBuilt`)
          expect(statement).toBeUndefined();
        } else {
          // the statement of this group's shape, prepared for it and run by EXECUTE once
          expect(statement?.statement.includes('unnest(')).toBe(n > 3);
          expect([statement?.generic_plans, statement?.custom_plans]).toEqual([1, 0]);
        }
      }

      for (const d of decided) {
        const snapshot = (await readSnapshot(t.dataSource, d.ex.id))!;
        expect(snapshot.tasks).toEqual([d.changes.tasksUpdated[0], d.changes.tasksCreated[0]]);
        expect(snapshot.actions).toEqual([d.changes.actionsUpdated[0], d.changes.actionsCreated[0]]);
        const e = snapshot.execution;
        expect([e.context, e.output, e.stateInfo, e.updatedAt]).toEqual([
          d.changes.execution.context,
          d.changes.execution.output,
          odd,
          at(6),
        ]);
      }
      // SQL NULL and JSON null kept apart in every kind: an action without output, a task's null result
      const nulls: Record<string, unknown>[] = await t.dataSource.query(
        `SELECT (SELECT "output" IS NULL FROM "action_executions" WHERE "id" = $1) AS "no_output",
                (SELECT jsonb_typeof("result") FROM "task_executions" WHERE "id" = $2) AS "result_type"`,
        [decided[0]!.changes.actionsUpdated[0]!.id, decided[1]!.changes.tasksUpdated[0]!.id],
      );
      expect(nulls).toEqual([{ no_output: true, result_type: 'null' }]);
    },
  );

  // (PostgreSQL only: the embedded engine's session runs these statements with bound values)
  if (kind === 'postgres')
    it('keeps generic plans, made on near-empty tables, that find every row they write by index', async () => {
      // a plan is made once and kept: made on a young database (this suite's), where a scan looks
      // cheapest, it must not go on scanning the tables as they grow
      for (const n of [2, 5]) {
        const decided = await decisionsOf(n);
        await t.dataSource.transaction(async (em) => {
          await applyChangesOfMany(em, decided);
          const built = await builtStatements(em);
          expect(built.length).toBeGreaterThan(0);
          await em.query('SET LOCAL plan_cache_mode = force_generic_plan');
          for (const { name, statement } of built) {
            const params = new Set(statement.match(/\$\d+/g)).size;
            const plan = (
              (await em.query(
                `EXPLAIN EXECUTE ${name}(${Array.from({ length: params }, () => 'NULL').join(', ')})`,
              )) as { 'QUERY PLAN': string }[]
            )
              .map((r) => r['QUERY PLAN'])
              .join('\n');
            expect(plan).toMatch(/Index Scan/);
            expect(plan).not.toMatch(/Seq Scan/);
          }
        });
      }
    });

  // (PostgreSQL only) a group's values as literals cost less than planning its statement anew, up
  // to ~250 K characters (prepared-statements.ts): 100 K go by EXECUTE, 200 K with bound values
  if (kind === 'postgres')
    it.each([
      [100 * 1024, 'executed'],
      [200 * 1024, 'bound'],
    ] as const)(
      'writes a group whose values take %i characters as a prepared statement: %s',
      async (size, how) => {
        const decided = (await decisionsOf(2)).map((d) => ({
          ...d,
          changes: {
            ...d.changes,
            execution: { ...d.changes.execution, context: { big: 'x'.repeat(size / 2) } },
          },
        }));
        const runs = await t.dataSource.transaction(async (em) => {
          const count = async () =>
            (await builtStatements(em)).reduce((n, s) => n + s.generic_plans + s.custom_plans, 0);
          const before = await count();
          await applyChangesOfMany(em, decided);
          return (await count()) - before;
        });
        expect(runs).toBe(how === 'executed' ? 1 : 0);
        const snapshot = (await readSnapshot(t.dataSource, decided[1]!.ex.id))!;
        expect(snapshot.execution.context).toEqual({ big: 'x'.repeat(size / 2) });
      },
    );

  it("compiles no plan just in time under the built statements' settings, where a scan is costed out", async () => {
    // the history append's check for stream listeners reads a table without an index for it: with
    // sequential scans off that plan costs 10^10, and PostgreSQL JIT-compiled it at every run
    await t.dataSource.transaction(async (em) => {
      for (const line of BUILT_PLANS) await em.query(line);
      const [explained] = (await em.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) SELECT 1 FROM "execution_stream_listeners" WHERE "expires_at" > now()`,
      )) as { 'QUERY PLAN': [{ Plan: { 'Total Cost': number }; JIT?: unknown }] }[];
      const [plan] = explained!['QUERY PLAN'];
      // (the embedded engine, PostgreSQL 17 built without JIT, no longer costs a disabled scan so)
      if (kind === 'postgres') expect(plan.Plan['Total Cost']).toBeGreaterThan(1e9);
      expect(plan.JIT).toBeUndefined();
    });
  });

  it('names an action created for a task of an earlier decision from its row', async () => {
    const ex = await execution();
    const t0 = task(ex, 'earlier', {});
    const none = { tasksCreated: [], tasksUpdated: [], actionsCreated: [], actionsUpdated: [] };
    await applyChangesOfMany(t.dataSource, [{ ex, changes: { ...none, tasksCreated: [t0] } }]);
    await applyChangesOfMany(t.dataSource, [{ ex, changes: { ...none, actionsCreated: [action(t0, {})] } }]);
    const rows: { task_name: string }[] = await t.dataSource.query(
      `SELECT "task_name" FROM "action_executions" WHERE "task_execution_id" = $1`,
      [t0.id],
    );
    expect(rows).toEqual([{ task_name: 'earlier' }]);
  });
});
