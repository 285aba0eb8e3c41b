/**
 * Diagnostic (not a result: it bypasses the API): the CPU of one group write, `applyChangesOfMany`
 * for a seq10-like step of G executions (each: its execution row updated, its task completed, the
 * next task and its action created, the finished action updated), in a transaction rolled back,
 * ROUNDS times on one PostgreSQL backend. Prints the backend's CPU (from /proc) and this process's,
 * per write. `G=32 ROUNDS=200 node -r @swc-node/register bench/engine/group-write.ts` (needs
 * PostgreSQL on this machine, as the tests do).
 */
import { randomUUID } from 'node:crypto';
import type { ActionExecution, TaskExecution, WorkflowExecution } from '@osc/workflow-domain';
import { combineMigrations, createTestDataSource } from '@osc/persistence';
import { toWorkflowExecution } from '../../libs/workflow-persistence/src/executions/execution-rows';
import { applyChangesOfMany } from '../../libs/workflow-persistence/src/executions/execution-store';
import { executionMigrations } from '../../libs/workflow-persistence/src/executions/executions.migration';
import { processCpuSeconds } from './proc-cpu';

const G = Number(process.env['G'] ?? 32);
const ROUNDS = Number(process.env['ROUNDS'] ?? 200);
/** CPU milliseconds a backend has used so far. */
const cpuMs = (pid: number): number => processCpuSeconds(pid) * 1000;
async function main(): Promise<void> {
  const t = await createTestDataSource('postgres', {
    migrations: combineMigrations(executionMigrations) as never,
  });
  const ds = t.dataSource;
  const now = new Date();
  const exs: WorkflowExecution[] = [];
  const prev: TaskExecution[] = [];
  const prevA: ActionExecution[] = [];
  const ctx = { a: 1, s: 'some text "quoted"', list: [1, 2, 3], nested: { x: 'y'.repeat(50) } };
  for (let i = 0; i < G; i++) {
    const id = randomUUID();
    const rows = await ds.query(
      `INSERT INTO "workflow_executions" ("id", "workflow_id", "workflow_name", "project_id", "state", "spec", "root_execution_id", "created_at")
       VALUES ($1, 'wf-id', 'seq10', 'p', 'RUNNING', '{"tasks":{}}', $1, now()) RETURNING *`,
      [id],
    );
    const ex = toWorkflowExecution(rows[0]);
    exs.push(ex);
    const task: TaskExecution = {
      id: randomUUID(),
      name: 't1',
      executionId: id,
      type: 'ACTION',
      tags: [],
      state: 'RUNNING',
      stateInfo: null,
      inContext: ctx,
      published: {},
      publishedGlobal: {},
      runtimeContext: {},
      result: null,
      processed: false,
      nextTasks: [],
      errorHandled: false,
      startedAt: now,
      finishedAt: null,
      createdAt: now,
      updatedAt: null,
    };
    const action: ActionExecution = {
      id: randomUUID(),
      taskExecutionId: task.id,
      executionId: id,
      name: 'std.noop',
      state: 'RUNNING',
      stateInfo: null,
      input: {},
      output: null,
      accepted: true,
      itemIndex: null,
      createdAt: now,
      updatedAt: null,
    };
    await applyChangesOfMany(ds, [
      {
        ex,
        changes: { tasksCreated: [task], tasksUpdated: [], actionsCreated: [action], actionsUpdated: [] },
      },
    ]);
    prev.push(task);
    prevA.push(action);
  }
  const qr = ds.createQueryRunner();
  await qr.connect();
  const pid = Number((await qr.query('SELECT pg_backend_pid() AS p'))[0].p);
  const step = async (): Promise<void> => {
    await qr.startTransaction();
    await applyChangesOfMany(
      qr,
      exs.map((ex, i) => {
        const t0 = prev[i]!;
        const next: TaskExecution = { ...t0, id: randomUUID(), name: 't2', inContext: { ...ctx, r: 1 } };
        return {
          ex,
          changes: {
            execution: { ...ex, context: { ...ctx, step: 2 }, updatedAt: new Date() },
            tasksCreated: [next],
            tasksUpdated: [
              {
                ...t0,
                state: 'SUCCESS',
                result: null,
                processed: true,
                finishedAt: new Date(),
                updatedAt: new Date(),
                nextTasks: [['t2', 'on-success']],
              },
            ],
            actionsCreated: [{ ...prevA[i]!, id: randomUUID(), taskExecutionId: next.id }],
            actionsUpdated: [
              { ...prevA[i]!, state: 'SUCCESS', output: { result: null }, updatedAt: new Date() },
            ],
          },
        };
      }),
    );
    await qr.rollbackTransaction();
  };
  for (let i = 0; i < 30; i++) await step();
  const b0 = cpuMs(pid);
  const c0 = process.cpuUsage();
  const w0 = Date.now();
  for (let i = 0; i < ROUNDS; i++) await step();
  const cu = process.cpuUsage(c0);
  console.log(
    JSON.stringify({
      G,
      ROUNDS,
      backend_ms_per_step: (cpuMs(pid) - b0) / ROUNDS,
      node_ms_per_step: (cu.user + cu.system) / 1000 / ROUNDS,
      wall_ms_per_step: (Date.now() - w0) / ROUNDS,
    }),
  );
  await qr.release();
  await t.cleanup();
}
void main();
