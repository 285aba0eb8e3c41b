import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { ActionRunJob } from '@osc/contracts';
import { EXECUTOR_LOST } from '@osc/workflow-domain';
import {
  findIdleRunningExecutions,
  findStuckTaskCandidates,
  heartbeatServiceInstance,
} from '@osc/workflow-persistence';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  waitForState,
} from '../../test/engine-harness';
import { ActionClaims } from '../executor/action-claims';
import type { ReconcilerLog } from './reconciler-log';
import { type Resolution, WorkflowReconciler } from './workflow-reconciler';

/** A statement runner's `query`, as the reconciler's scans call it. */
type Sent = (sql: string, params?: unknown[]) => Promise<unknown[]>;

/**
 * The reconciler on PostgreSQL with in-process messaging. The state an executor or a lost job leaves
 * is made directly (a claim by an instance whose heartbeat is an hour old; a job that the stopped
 * "process" took with it), then the engine is "restarted" on fresh in-process messaging, as after
 * kill -9 in embedded mode.
 */
describe('WorkflowReconciler', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  const engines: EngineInstance[] = [];
  const lines: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const log: ReconcilerLog = (level, msg, fields) => lines.push({ level, msg, fields });

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(
      ds,
      `
version: '2.0'
plain:
  tasks:
    t:
      action: std.echo
      input: {output: done, delay: 0.01}
retried:
  tasks:
    t:
      action: std.echo
      input: {output: done, delay: 0.01}
      retry: {count: 1, delay: 0}
safe:
  tasks:
    t:
      action: std.echo
      input: {output: done, delay: 0.01}
      safe-rerun: true
`,
    );
  }, 30_000);

  afterEach(async () => {
    for (const e of engines.splice(0)) await e.stop();
  });
  afterAll(async () => db?.drop());

  /** An engine (and executor, unless `role: 'engine'`) on fresh in-process messaging: a new process. */
  const engine = async (role: 'all' | 'engine'): Promise<EngineInstance> => {
    const { bus, jobs } = inProcessMessaging();
    const e = new EngineInstance(ds, bus, jobs, { role, heartbeatMs: 200 });
    await e.start();
    engines.push(e);
    return e;
  };

  const reconciler = (e: EngineInstance, stuckAfterSeconds: number, executorDeadAfterSeconds = 2) =>
    new WorkflowReconciler(ds, e.outbox, { stuckAfterSeconds, executorDeadAfterSeconds }, log);

  /** Starts an execution on an engine without executor and waits for its RUNNING action. */
  const runningAction = async (
    workflow: string,
  ): Promise<{ executionId: string; taskExecutionId: string; actionExecutionId: string }> => {
    const e = engines[0] ?? (await engine('engine'));
    const executionId = await startExecution(ds, e.outbox, workflow);
    for (let delay = 5; ; delay = Math.min(delay * 2, 50)) {
      const rows: { id: string; task_execution_id: string }[] = await ds.query(
        `SELECT "id", "task_execution_id" FROM "action_executions" WHERE "workflow_execution_id" = $1 AND "state" = 'RUNNING'`,
        [executionId],
      );
      if (rows[0])
        return { executionId, taskExecutionId: rows[0].task_execution_id, actionExecutionId: rows[0].id };
      await new Promise((r) => setTimeout(r, delay));
    }
  };

  /** Claims the action for an executor instance whose last heartbeat was an hour ago, as a killed one leaves it. */
  const claimByDeadExecutor = async (actionExecutionId: string, rerunJob?: ActionRunJob): Promise<string> => {
    const dead = randomUUID();
    await heartbeatServiceInstance(ds, { id: dead, kind: 'executor', host: 'gone', pid: 1 });
    await ds.query(
      `UPDATE "workflow_service_instances" SET "heartbeat_at" = now() - interval '1 hour' WHERE "id" = $1`,
      [dead],
    );
    expect(await new ActionClaims(ds, 10, dead).claim(actionExecutionId, rerunJob)).toEqual({ prev: null });
    return dead;
  };

  /** Runs passes until one resolves something about `executionId` (the bounds are small). */
  const passUntilResolved = async (r: WorkflowReconciler, executionId: string): Promise<Resolution[]> => {
    for (let delay = 20; ; delay = Math.min(delay * 2, 200)) {
      const done = (await r.pass()).filter((x) => x.executionId === executionId);
      if (done.length > 0) return done;
      await new Promise((res) => setTimeout(res, delay));
    }
  };

  it('a dead executor fails its action with the sentence, and the task retry runs it again', async () => {
    const ids = await runningAction('retried');
    const dead = await claimByDeadExecutor(ids.actionExecutionId);
    for (const e of engines.splice(0)) await e.stop(); // the "process" is gone with its job
    const restarted = await engine('all');
    const done = await passUntilResolved(reconciler(restarted, 3600), ids.executionId);
    expect(done).toEqual([expect.objectContaining({ kind: 'fail-action', ...ids })]);
    const row = await waitForState(ds, ids.executionId);
    expect(row['state']).toBe('SUCCESS');
    const actions: { id: string; state: string; state_info: string | null }[] = await ds.query(
      `SELECT "id", "state", "state_info" FROM "action_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`,
      [ids.executionId],
    );
    expect(actions.map((a) => a.state)).toEqual(['ERROR', 'SUCCESS']);
    expect(actions[0]!.state_info).toMatch(
      new RegExp(`^${EXECUTOR_LOST} \\(executor ${dead}, last heartbeat \\d{4}-`),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        fields: expect.objectContaining({ reconciler: 'fail-action', ...ids }),
      }),
    );
  }, 30_000);

  it('without retry the execution ends in ERROR saying why', async () => {
    const ids = await runningAction('plain');
    await claimByDeadExecutor(ids.actionExecutionId);
    await passUntilResolved(reconciler(engines[0]!, 3600), ids.executionId);
    const row = await waitForState(ds, ids.executionId);
    expect(row['state']).toBe('ERROR');
    expect(String(row['state_info'])).toContain(EXECUTOR_LOST);
  }, 30_000);

  it('a safe-rerun action of a dead executor runs again (same action execution)', async () => {
    const ids = await runningAction('safe');
    const job: ActionRunJob = {
      ...ids,
      actionName: 'std.echo',
      input: { output: 'again', delay: 0.01 },
      namespace: '',
      safeRerun: true,
      context: {
        workflowName: 'safe',
        workflowNamespace: '',
        workflowExecutionId: ids.executionId,
        rootExecutionId: null,
        taskName: 't',
        projectId: 'project-1',
        ...ids,
      },
    };
    await claimByDeadExecutor(ids.actionExecutionId, job);
    for (const e of engines.splice(0)) await e.stop();
    const restarted = await engine('all');
    const done = await passUntilResolved(reconciler(restarted, 3600), ids.executionId);
    expect(done).toEqual([
      expect.objectContaining({ kind: 'run-action-again', actionExecutionId: ids.actionExecutionId }),
    ]);
    expect((await waitForState(ds, ids.executionId))['state']).toBe('SUCCESS');
    const actions: { id: string; state: string; output: unknown }[] = await ds.query(
      `SELECT "id", "state", "output" FROM "action_executions" WHERE "workflow_execution_id" = $1`,
      [ids.executionId],
    );
    expect(actions).toEqual([{ id: ids.actionExecutionId, state: 'SUCCESS', output: { result: 'again' } }]);
  }, 30_000);

  it('a live long action (fresh heartbeat) is left alone however old its task', async () => {
    const ids = await runningAction('plain');
    const live = randomUUID();
    await heartbeatServiceInstance(ds, { id: live, kind: 'executor', host: 'here', pid: 2 });
    expect(await new ActionClaims(ds, 10, live).claim(ids.actionExecutionId)).toEqual({ prev: null });
    await ds.query(`UPDATE "task_executions" SET "updated_at" = now() - interval '1 hour' WHERE "id" = $1`, [
      ids.taskExecutionId,
    ]);
    const r = reconciler(engines[0]!, 1, 60);
    expect((await r.pass()).filter((x) => x.executionId === ids.executionId)).toEqual([]);
    expect(
      (await ds.query(`SELECT "state" FROM "action_executions" WHERE "id" = $1`, [ids.actionExecutionId]))[0]
        .state,
    ).toBe('RUNNING');
    await ds.query(`UPDATE "action_executions" SET "state" = 'CANCELLED' WHERE "id" = $1`, [
      ids.actionExecutionId,
    ]);
    await ds.query(`UPDATE "workflow_executions" SET "state" = 'CANCELLED' WHERE "id" = $1`, [
      ids.executionId,
    ]);
  }, 30_000);

  it('a RUNNING task whose job was lost is resolved once by two replicas passing at the same time', async () => {
    const ids = await runningAction('plain'); // no executor: the job waits in a queue that is then dropped
    for (const e of engines.splice(0)) await e.stop();
    const restarted = await engine('engine');
    await ds.query(
      `UPDATE "task_executions" SET "updated_at" = now() - interval '10 minutes' WHERE "id" = $1`,
      [ids.taskExecutionId],
    );
    const [a, b] = await Promise.all([reconciler(restarted, 1).pass(), reconciler(restarted, 1).pass()]);
    const mine = [...a!, ...b!].filter((x) => x.executionId === ids.executionId);
    expect(mine).toEqual([expect.objectContaining({ kind: 'fail-action', ...ids })]);
    const row = await waitForState(ds, ids.executionId);
    expect(row['state']).toBe('ERROR');
    expect(String(row['state_info'])).toMatch(
      /reconciler: task t was RUNNING with its action never picked up by an executor and no timer or pending command for \d+ s/,
    );
  }, 30_000);

  it('a RUNNING task with no action at all fails, task and execution', async () => {
    const ids = await runningAction('plain');
    await ds.query(`DELETE FROM "action_executions" WHERE "id" = $1`, [ids.actionExecutionId]);
    await ds.query(
      `UPDATE "task_executions" SET "updated_at" = now() - interval '10 minutes' WHERE "id" = $1`,
      [ids.taskExecutionId],
    );
    const done = await passUntilResolved(reconciler(engines[0]!, 60), ids.executionId);
    expect(done).toEqual([
      expect.objectContaining({
        kind: 'fail-task',
        executionId: ids.executionId,
        taskExecutionId: ids.taskExecutionId,
      }),
    ]);
    const row = await waitForState(ds, ids.executionId);
    expect(row).toMatchObject({
      state: 'ERROR',
      state_info: expect.stringMatching(
        /^reconciler: task t was RUNNING with no action, timer or pending command for 6\d\d s$/,
      ),
    });
    expect(
      (await ds.query(`SELECT "state" FROM "task_executions" WHERE "id" = $1`, [ids.taskExecutionId]))[0]
        .state,
    ).toBe('ERROR');
  }, 30_000);

  it('an execution whose start command was lost is started again', async () => {
    const e = await engine('engine');
    await e.stop(); // nothing consumes: the start command is lost with this bus
    engines.splice(0);
    const executionId = await startExecution(ds, e.outbox, 'plain');
    await ds.query(`DELETE FROM "outbox"`);
    await ds.query(
      `UPDATE "workflow_executions" SET "created_at" = now() - interval '10 minutes' WHERE "id" = $1`,
      [executionId],
    );
    const restarted = await engine('all');
    expect(await passUntilResolved(reconciler(restarted, 60), executionId)).toEqual([
      expect.objectContaining({ kind: 'start-execution', executionId }),
    ]);
    expect((await waitForState(ds, executionId))['state']).toBe('SUCCESS');
  }, 30_000);

  it('uses the partial indexes for its scans', async () => {
    await ds.transaction(async (em) => {
      await em.query(`SET LOCAL enable_seqscan = off`);
      const plan = async (sql: string) => JSON.stringify(await em.query(`EXPLAIN ${sql}`));
      expect(
        await plan(
          `SELECT "id" FROM "action_executions" WHERE "state" = 'RUNNING' AND "executor_id" IS NOT NULL`,
        ),
      ).toContain('IDX_action_executions_running_executor');
      expect(
        await plan(
          `SELECT "id" FROM "task_executions" WHERE "state" IN ('RUNNING', 'DELAYED', 'WAITING') AND COALESCE("updated_at", "created_at") < now()`,
        ),
      ).toContain('IDX_task_executions_unfinished');
      /** The plan of the statement a scan sends (caught by a runner that sends nothing). */
      const planOfScan = async (scan: (db: { query: Sent }) => Promise<unknown>): Promise<string> => {
        let sent: Parameters<Sent> | undefined;
        await scan({ query: async (...args) => ((sent = args), []) });
        const [sql, params] = sent!;
        return ((await em.query(`EXPLAIN ${sql}`, params)) as { 'QUERY PLAN': string }[])
          .map((r) => r['QUERY PLAN'])
          .join('\n');
      };
      // the stuck-task scan walks that index up to its cut-off, in its order, and looks up each
      // candidate's execution: never a search of the index per RUNNING execution
      // (an index scan in the index's order, or a bitmap of the same range and a sort: either reads
      // only the tasks older than the cut-off, whatever the statistics make the planner prefer)
      const text = await planOfScan((db) => findStuckTaskCandidates(db, 300, 100));
      expect(text).toMatch(
        /Index Scan using "IDX_task_executions_unfinished"|Bitmap Index Scan on "IDX_task_executions_unfinished"/,
      );
      expect(text).toMatch(/Index Cond: \(COALESCE\(updated_at, created_at\) </);
      expect(text).toMatch(/SubPlan[\s\S]*Index Scan using "PK_workflow_executions"/);
      expect(text).not.toMatch(/Nested Loop|Hash Join|Merge Join/);
      expect(
        await plan(
          `SELECT "id" FROM "workflow_executions" WHERE "state" = 'RUNNING' AND COALESCE("updated_at", "created_at") < now()`,
        ),
      ).toContain('IDX_workflow_executions_running');
      // the idle-execution scan likewise walks the RUNNING executions by last change and looks at the
      // tasks of each through their execution's index: never a join with the whole tasks table
      const idle = await planOfScan((db) => findIdleRunningExecutions(db, 300, 100));
      expect(idle).toMatch(
        /Index Scan using "IDX_workflow_executions_running"|Bitmap Index Scan on "IDX_workflow_executions_running"/,
      );
      expect(idle).toMatch(/Index Cond: \(COALESCE\(updated_at, created_at\) </);
      expect(idle).toMatch(/SubPlan[\s\S]*"IDX_task_executions_execution"/);
      expect(idle).not.toMatch(/Anti Join|Semi Join|Hash Join|Merge Join|Nested Loop/);
    });
  });
});
