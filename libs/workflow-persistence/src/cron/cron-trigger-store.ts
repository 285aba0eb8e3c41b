import { createHash } from 'node:crypto';
import { ConflictError } from '@osc/errors';

/** Anything that runs SQL: a DataSource, or a transaction's EntityManager inside a transaction. */
export interface CronSqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** One stored cron trigger. */
export interface CronTriggerRecord {
  readonly id: string;
  readonly name: string;
  readonly projectId: string;
  readonly scope: 'private' | 'public';
  readonly workflowId: string;
  readonly workflowName: string;
  readonly workflowNamespace: string;
  readonly workflowInput: Record<string, unknown>;
  readonly workflowParams: Record<string, unknown>;
  readonly pattern: string | null;
  readonly firstExecutionTime: Date | null;
  readonly nextExecutionTime: Date;
  readonly remainingExecutions: number | null;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

export type NewCronTrigger = Omit<CronTriggerRecord, 'id' | 'updatedAt' | 'scope'>;

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
const obj = (v: unknown): Record<string, unknown> =>
  (typeof v === 'string' ? JSON.parse(v) : (v ?? {})) as Record<string, unknown>;

/** A raw `cron_triggers` row as a record. */
export const toCronTrigger = (r: Row): CronTriggerRecord => ({
  id: String(r['id']),
  name: String(r['name']),
  projectId: String(r['project_id']),
  scope: r['scope'] === 'public' ? 'public' : 'private',
  workflowId: String(r['workflow_id']),
  workflowName: String(r['workflow_name']),
  workflowNamespace: String(r['workflow_namespace'] ?? ''),
  workflowInput: obj(r['workflow_input']),
  workflowParams: obj(r['workflow_params']),
  pattern: (r['pattern'] as string | null) ?? null,
  firstExecutionTime: date(r['first_execution_time']),
  nextExecutionTime: date(r['next_execution_time']) as Date,
  remainingExecutions:
    r['remaining_executions'] === null || r['remaining_executions'] === undefined
      ? null
      : Number(r['remaining_executions']),
  createdAt: date(r['created_at']) as Date,
  updatedAt: date(r['updated_at']),
});

/** Canonical JSON (sorted keys) hashed, so equal objects give equal hashes whatever their key order. */
const canonical = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v ?? null);
};
const hash = (v: unknown): string => createHash('sha256').update(canonical(v)).digest('hex');

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
const sqlCode = (err: unknown): unknown => {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  return e?.code ?? e?.driverError?.code;
};
const constraint = (err: unknown): string => {
  const e = err as { constraint?: unknown; driverError?: { constraint?: unknown }; message?: unknown } | null;
  return String(e?.constraint ?? e?.driverError?.constraint ?? e?.message ?? '');
};

/**
 * Inserts a trigger (scope private, as Mistral creates them). A name already used in the project, or
 * a second trigger with the same workflow, input, params, pattern, first time and count, is a
 * ConflictError with Mistral's message.
 */
export async function insertCronTrigger(db: CronSqlRunner, t: NewCronTrigger): Promise<CronTriggerRecord> {
  try {
    const rows: Row[] = await db.query(
      `INSERT INTO "cron_triggers" ("name", "project_id", "scope", "workflow_id", "workflow_name", "workflow_namespace", "workflow_input",
         "workflow_params", "workflow_input_hash", "workflow_params_hash", "pattern", "first_execution_time", "next_execution_time",
         "remaining_executions", "created_at")
       VALUES ($1, $2, 'private', $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10, $11::timestamptz, $12::timestamptz, $13, $14::timestamptz)
       RETURNING *`,
      [
        t.name,
        t.projectId,
        t.workflowId,
        t.workflowName,
        t.workflowNamespace,
        JSON.stringify(t.workflowInput),
        JSON.stringify(t.workflowParams),
        hash(t.workflowInput),
        hash(t.workflowParams),
        t.pattern,
        iso(t.firstExecutionTime),
        iso(t.nextExecutionTime),
        t.remainingExecutions,
        iso(t.createdAt),
      ],
    );
    return toCronTrigger(rows[0] as Row);
  } catch (err) {
    if (sqlCode(err) === '23505') {
      const columns = constraint(err).includes('same_schedule')
        ? "['workflow_input_hash', 'workflow_name', 'pattern', 'project_id', 'workflow_params_hash', 'remaining_executions', 'first_execution_time']"
        : "['name', 'project_id']";
      throw new ConflictError(`Duplicate entry for cron trigger ${t.name}: ${columns}`);
    }
    throw err;
  }
}

const UUID_LIKE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A trigger by UUID or by name, in `projectId` (or in any project when null: admins). With `lock`, the
 * row is locked (`FOR UPDATE`): a firing scheduler holding it finishes first.
 */
export async function findCronTrigger(
  db: CronSqlRunner,
  identifier: string,
  projectId: string | null,
  opts: { lock?: boolean } = {},
): Promise<CronTriggerRecord | null> {
  const params: unknown[] = [identifier];
  const byId = UUID_LIKE.test(identifier) ? `"id" = $1::uuid OR ` : '';
  let where = `(${byId}"name" = $1::text)`;
  if (projectId !== null) {
    params.push(projectId);
    where += ` AND "project_id" = $2`;
  }
  const rows: Row[] = await db.query(
    `SELECT * FROM "cron_triggers" WHERE ${where} ORDER BY ("id"::text = $1::text) DESC, "created_at", "id" LIMIT 1${opts.lock ? ' FOR UPDATE' : ''}`,
    params,
  );
  return rows[0] ? toCronTrigger(rows[0]) : null;
}

/** Deletes a trigger by id; false when it was already gone. */
export async function deleteCronTrigger(db: CronSqlRunner, id: string): Promise<boolean> {
  const rows: Row[] = await db.query(`DELETE FROM "cron_triggers" WHERE "id" = $1 RETURNING "id"`, [id]);
  return rows.length > 0;
}

/** Names of the triggers that start a workflow (a workflow in use cannot be deleted). */
export async function cronTriggerNamesOfWorkflow(db: CronSqlRunner, workflowId: string): Promise<string[]> {
  const rows: { name: string }[] = await db.query(
    `SELECT "name" FROM "cron_triggers" WHERE "workflow_id" = $1 ORDER BY "name" LIMIT 20`,
    [workflowId],
  );
  return rows.map((r) => r.name);
}

/**
 * Locks up to `limit` triggers due at `now` (next_execution_time ≤ now), earliest first, skipping rows
 * another scheduler (or a deleting API request) holds: concurrent schedulers claim disjoint sets.
 * Must run inside a transaction; the locks last until it ends.
 */
export async function claimDueCronTriggers(
  db: CronSqlRunner,
  now: Date,
  limit: number,
): Promise<CronTriggerRecord[]> {
  const rows: Row[] = await db.query(
    `SELECT * FROM "cron_triggers" WHERE "next_execution_time" <= $1::timestamptz
      ORDER BY "next_execution_time", "id" LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now.toISOString(), limit],
  );
  return rows.map(toCronTrigger);
}

/** What firing decided for one claimed trigger. */
export type CronTriggerUpdate =
  | { readonly id: string; readonly kind: 'delete' }
  | {
      readonly id: string;
      readonly kind: 'advance';
      readonly nextExecutionTime: Date;
      readonly remainingExecutions: number | null;
    };

/** Applies the firing results of a claimed batch in two statements (one update, one delete). */
export async function applyCronTriggerUpdates(
  db: CronSqlRunner,
  updates: readonly CronTriggerUpdate[],
  now: Date,
): Promise<void> {
  const deletes = updates.filter((u) => u.kind === 'delete').map((u) => u.id);
  const advances = updates.filter(
    (u): u is Extract<CronTriggerUpdate, { kind: 'advance' }> => u.kind === 'advance',
  );
  if (deletes.length) await db.query(`DELETE FROM "cron_triggers" WHERE "id" = ANY($1::uuid[])`, [deletes]);
  if (advances.length) {
    await db.query(
      `UPDATE "cron_triggers" AS t SET "next_execution_time" = u.next, "remaining_executions" = u.remaining, "updated_at" = $4::timestamptz
         FROM (SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::int[]) AS x(id, next, remaining)) AS u
        WHERE t."id" = u.id`,
      [
        advances.map((a) => a.id),
        advances.map((a) => a.nextExecutionTime.toISOString()),
        advances.map((a) => a.remainingExecutions),
        now.toISOString(),
      ],
    );
  }
}

/** The earliest next_execution_time of any trigger (the scheduler sleeps until then), or null. */
export async function earliestCronTriggerTime(db: CronSqlRunner): Promise<Date | null> {
  const rows: Row[] = await db.query(
    `SELECT "next_execution_time" FROM "cron_triggers" ORDER BY "next_execution_time" LIMIT 1`,
  );
  return rows[0] ? date(rows[0]['next_execution_time']) : null;
}

/** A workflow a trigger starts, as the scheduler needs it. */
export interface TriggerWorkflow {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly spec: unknown;
}

/** The workflows of a batch of triggers, by id, in one query (missing ones were deleted). */
export async function loadTriggerWorkflows(
  db: CronSqlRunner,
  workflowIds: readonly string[],
): Promise<Map<string, TriggerWorkflow>> {
  const ids = [...new Set(workflowIds)];
  const rows: TriggerWorkflow[] = ids.length
    ? await db.query(
        `SELECT "id", "name", "namespace", "spec" FROM "workflow_definitions" WHERE "id" = ANY($1::uuid[])`,
        [ids],
      )
    : [];
  return new Map(rows.map((r) => [String(r.id), r]));
}
