import type {
  ActionExecution,
  EngineChanges,
  ExecutionSnapshot,
  SubExecutionRef,
  TaskExecution,
  WorkflowExecution,
  WorkflowSpec,
} from '@osc/workflow-domain';

/** Anything that runs SQL: a transaction's EntityManager, a QueryRunner or a DataSource. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

type Row = Record<string, unknown>;

const json = (v: unknown): string => JSON.stringify(v ?? null);
const parse = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const date = (v: unknown): Date | null => (v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v)));
const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** Columns of `workflow_executions` beyond the domain model. */
export interface ExecutionExtras {
  parentExecutionId?: string | null;
  sourceExecutionId?: string | null;
}

const EXECUTION_COLUMNS = `"id", "workflow_id", "workflow_name", "workflow_namespace", "description", "tags", "project_id",
  "state", "state_info", "spec", "input", "output", "params", "context", "var_names", "deferred",
  "task_execution_id", "parent_execution_id", "root_execution_id", "source_execution_id", "created_at", "updated_at"`;

export const toWorkflowExecution = (r: Row): WorkflowExecution => ({
  id: String(r['id']),
  workflowId: String(r['workflow_id']),
  workflowName: String(r['workflow_name']),
  workflowNamespace: String(r['workflow_namespace'] ?? ''),
  spec: parse<WorkflowSpec>(r['spec']),
  description: String(r['description'] ?? ''),
  tags: parse<string[]>(r['tags']) ?? [],
  projectId: String(r['project_id']),
  state: r['state'] as WorkflowExecution['state'],
  stateInfo: (r['state_info'] as string | null) ?? null,
  input: parse(r['input']) ?? {},
  output: parse(r['output']) ?? {},
  params: parse(r['params']) ?? {},
  context: parse(r['context']) ?? {},
  varNames: parse<string[]>(r['var_names']) ?? [],
  taskExecutionId: (r['task_execution_id'] as string | null) ?? null,
  rootExecutionId: (r['root_execution_id'] as string | null) ?? null,
  deferred: parse(r['deferred']) ?? [],
  createdAt: date(r['created_at'])!,
  updatedAt: date(r['updated_at']),
});

export const toTaskExecution = (r: Row): TaskExecution => ({
  id: String(r['id']),
  name: String(r['name']),
  executionId: String(r['workflow_execution_id']),
  type: r['type'] as TaskExecution['type'],
  tags: parse<string[]>(r['tags']) ?? [],
  state: r['state'] as TaskExecution['state'],
  stateInfo: (r['state_info'] as string | null) ?? null,
  inContext: parse(r['in_context']) ?? {},
  published: parse(r['published']) ?? {},
  publishedGlobal: parse(r['published_global']) ?? {},
  runtimeContext: parse(r['runtime_context']) ?? {},
  result: parse(r['result']) ?? null,
  processed: Boolean(r['processed']),
  nextTasks: parse(r['next_tasks']) ?? [],
  errorHandled: Boolean(r['error_handled']),
  startedAt: date(r['started_at']),
  finishedAt: date(r['finished_at']),
  createdAt: date(r['created_at'])!,
  updatedAt: date(r['updated_at']),
});

export const toActionExecution = (r: Row): ActionExecution => ({
  id: String(r['id']),
  taskExecutionId: String(r['task_execution_id']),
  executionId: String(r['workflow_execution_id']),
  name: String(r['name']),
  state: r['state'] as ActionExecution['state'],
  stateInfo: (r['state_info'] as string | null) ?? null,
  input: parse(r['input']) ?? {},
  output: parse(r['output']) ?? null,
  accepted: Boolean(r['accepted']),
  itemIndex: r['item_index'] === null || r['item_index'] === undefined ? null : Number(r['item_index']),
  createdAt: date(r['created_at'])!,
  updatedAt: date(r['updated_at']),
});

/** Inserts a new execution row (the API's create, or a sub-workflow start). Returns false if the id exists. */
export async function insertExecution(db: SqlRunner, ex: WorkflowExecution, extras: ExecutionExtras = {}): Promise<boolean> {
  const rows: Row[] = await db.query(
    `INSERT INTO "workflow_executions" (${EXECUTION_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb, $13::jsonb, $14::jsonb, $15::jsonb,
             $16::jsonb, $17, $18, $19, $20, $21::timestamptz, $22::timestamptz)
     ON CONFLICT ("id") DO NOTHING RETURNING "id"`,
    [
      ex.id,
      ex.workflowId,
      ex.workflowName,
      ex.workflowNamespace,
      ex.description,
      json(ex.tags),
      ex.projectId,
      ex.state,
      ex.stateInfo,
      json(ex.spec),
      json(ex.input),
      json(ex.output),
      json(ex.params),
      json(ex.context),
      json(ex.varNames),
      json(ex.deferred),
      ex.taskExecutionId,
      extras.parentExecutionId ?? null,
      ex.rootExecutionId,
      extras.sourceExecutionId ?? null,
      iso(ex.createdAt),
      iso(ex.updatedAt),
    ],
  );
  return rows.length > 0;
}

/**
 * Locks the execution row (`SELECT … FOR UPDATE`) and loads everything `decide` needs. Every engine
 * command of one execution runs under this lock, so decisions are serialised per execution across
 * any number of engine processes. Null when the execution does not exist (deleted).
 */
export async function lockSnapshot(db: SqlRunner, executionId: string): Promise<ExecutionSnapshot | null> {
  const exRows: Row[] = await db.query(`SELECT ${EXECUTION_COLUMNS} FROM "workflow_executions" WHERE "id" = $1 FOR UPDATE`, [
    executionId,
  ]);
  const exRow = exRows[0];
  if (!exRow) return null;
  const taskRows: Row[] = await db.query(`SELECT * FROM "task_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`, [
    executionId,
  ]);
  const actionRows: Row[] = taskRows.length
    ? await db.query(`SELECT * FROM "action_executions" WHERE "workflow_execution_id" = $1 ORDER BY "seq"`, [executionId])
    : [];
  const hasSubs = taskRows.some((t) => t['type'] === 'WORKFLOW');
  const subRows: Row[] = hasSubs
    ? await db.query(`SELECT "id", "task_execution_id", "state" FROM "workflow_executions" WHERE "parent_execution_id" = $1`, [
        executionId,
      ])
    : [];
  return {
    execution: toWorkflowExecution(exRow),
    tasks: taskRows.map(toTaskExecution),
    actions: actionRows.map(toActionExecution),
    subExecutions: subRows.map(
      (r): SubExecutionRef => ({
        id: String(r['id']),
        taskExecutionId: String(r['task_execution_id']),
        state: r['state'] as SubExecutionRef['state'],
      }),
    ),
  };
}

const TASK_INSERT_COLUMNS = `"id", "name", "workflow_execution_id", "workflow_id", "workflow_name", "workflow_namespace", "project_id",
  "type", "tags", "state", "state_info", "in_context", "published", "published_global", "runtime_context", "result",
  "processed", "next_tasks", "error_handled", "started_at", "finished_at", "created_at", "updated_at"`;

const ACTION_INSERT_COLUMNS = `"id", "name", "workflow_execution_id", "task_execution_id", "task_name", "workflow_name",
  "workflow_namespace", "project_id", "state", "state_info", "input", "output", "accepted", "item_index", "created_at", "updated_at"`;

/** Writes the rows of one decision (inside the transaction that holds the execution lock). */
export async function applyChanges(db: SqlRunner, ex: WorkflowExecution, changes: EngineChanges): Promise<void> {
  const e = changes.execution;
  if (e) {
    await db.query(
      `UPDATE "workflow_executions" SET "state" = $2, "state_info" = $3, "output" = $4::jsonb, "params" = $5::jsonb,
         "context" = $6::jsonb, "var_names" = $7::jsonb, "deferred" = $8::jsonb, "updated_at" = $9::timestamptz
       WHERE "id" = $1`,
      [e.id, e.state, e.stateInfo, json(e.output), json(e.params), json(e.context), json(e.varNames), json(e.deferred), iso(e.updatedAt)],
    );
  }
  if (changes.tasksCreated.length) {
    const params: unknown[] = [];
    const values = changes.tasksCreated.map((t) => {
      const b = params.length;
      params.push(
        t.id,
        t.name,
        t.executionId,
        ex.workflowId,
        ex.workflowName,
        ex.workflowNamespace,
        ex.projectId,
        t.type,
        json(t.tags),
        t.state,
        t.stateInfo,
        json(t.inContext),
        json(t.published),
        json(t.publishedGlobal),
        json(t.runtimeContext),
        json(t.result),
        t.processed,
        json(t.nextTasks),
        t.errorHandled,
        iso(t.startedAt),
        iso(t.finishedAt),
        iso(t.createdAt),
        iso(t.updatedAt),
      );
      const p = (i: number, cast = '') => `$${b + i}${cast}`;
      return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9, '::jsonb')}, ${p(10)}, ${p(11)},
        ${p(12, '::jsonb')}, ${p(13, '::jsonb')}, ${p(14, '::jsonb')}, ${p(15, '::jsonb')}, ${p(16, '::jsonb')}, ${p(17)},
        ${p(18, '::jsonb')}, ${p(19)}, ${p(20, '::timestamptz')}, ${p(21, '::timestamptz')}, ${p(22, '::timestamptz')}, ${p(23, '::timestamptz')})`;
    });
    await db.query(`INSERT INTO "task_executions" (${TASK_INSERT_COLUMNS}) VALUES ${values.join(', ')}`, params);
  }
  for (const t of changes.tasksUpdated) {
    await db.query(
      `UPDATE "task_executions" SET "state" = $2, "state_info" = $3, "in_context" = $4::jsonb, "published" = $5::jsonb,
         "published_global" = $6::jsonb, "runtime_context" = $7::jsonb, "result" = $8::jsonb, "processed" = $9,
         "next_tasks" = $10::jsonb, "error_handled" = $11, "started_at" = $12::timestamptz, "finished_at" = $13::timestamptz,
         "updated_at" = $14::timestamptz
       WHERE "id" = $1`,
      [
        t.id,
        t.state,
        t.stateInfo,
        json(t.inContext),
        json(t.published),
        json(t.publishedGlobal),
        json(t.runtimeContext),
        json(t.result),
        t.processed,
        json(t.nextTasks),
        t.errorHandled,
        iso(t.startedAt),
        iso(t.finishedAt),
        iso(t.updatedAt),
      ],
    );
  }
  if (changes.actionsCreated.length) {
    const taskNames = new Map<string, string>();
    for (const t of [...changes.tasksCreated, ...changes.tasksUpdated]) taskNames.set(t.id, t.name);
    const missing = changes.actionsCreated.filter((a) => !taskNames.has(a.taskExecutionId)).map((a) => a.taskExecutionId);
    if (missing.length) {
      const rows: Row[] = await db.query(`SELECT "id", "name" FROM "task_executions" WHERE "id" = ANY($1::uuid[])`, [missing]);
      for (const r of rows) taskNames.set(String(r['id']), String(r['name']));
    }
    const params: unknown[] = [];
    const values = changes.actionsCreated.map((a) => {
      const b = params.length;
      params.push(
        a.id,
        a.name,
        a.executionId,
        a.taskExecutionId,
        taskNames.get(a.taskExecutionId) ?? null,
        ex.workflowName,
        ex.workflowNamespace,
        ex.projectId,
        a.state,
        a.stateInfo,
        json(a.input),
        a.output === null ? null : json(a.output),
        a.accepted,
        a.itemIndex,
        iso(a.createdAt),
        iso(a.updatedAt),
      );
      const p = (i: number, cast = '') => `$${b + i}${cast}`;
      return `(${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}, ${p(7)}, ${p(8)}, ${p(9)}, ${p(10)}, ${p(11, '::jsonb')},
        ${p(12, '::jsonb')}, ${p(13)}, ${p(14, '::integer')}, ${p(15, '::timestamptz')}, ${p(16, '::timestamptz')})`;
    });
    await db.query(`INSERT INTO "action_executions" (${ACTION_INSERT_COLUMNS}) VALUES ${values.join(', ')}`, params);
  }
  for (const a of changes.actionsUpdated) {
    await db.query(
      `UPDATE "action_executions" SET "state" = $2, "state_info" = $3, "output" = $4::jsonb, "accepted" = $5,
         "updated_at" = $6::timestamptz WHERE "id" = $1`,
      [a.id, a.state, a.stateInfo, a.output === null ? null : json(a.output), a.accepted, iso(a.updatedAt)],
    );
  }
}

/** The execution a task execution belongs to (routing a child's completion to its parent). */
export async function findExecutionIdOfTask(db: SqlRunner, taskExecutionId: string): Promise<string | null> {
  const rows: Row[] = await db.query(`SELECT "workflow_execution_id" FROM "task_executions" WHERE "id" = $1`, [taskExecutionId]);
  return rows[0] ? String(rows[0]['workflow_execution_id']) : null;
}
