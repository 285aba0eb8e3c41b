import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import { closeDataSource, createDataSource } from '@osc/persistence';
import { messagingMigrations, outboxEntities } from '@osc/messaging';
import { parseWorkflows } from '@osc/workflow-domain';
import { insertCronTrigger } from '@osc/workflow-persistence';
import { SCHEMA_PARTS } from '../src/schema';

/**
 * A throw-away PostgreSQL database with the cron-scheduler's schema (tests and bench/cron only):
 * several independent pools can connect to it, like scheduler replicas in separate processes.
 */
export interface CronTestDatabase {
  readonly url: string;
  connect(poolSize?: number): Promise<DataSource>;
  drop(): Promise<void>;
}

const adminUrl = () => process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: adminUrl() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function createCronTestDatabase(prefix: string): Promise<CronTestDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(5).toString('hex')}`;
  await admin(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  const entities = [...outboxEntities, ...SCHEMA_PARTS.flatMap((p) => p.entities)];
  const migrations = [...messagingMigrations, ...SCHEMA_PARTS.flatMap((p) => p.migrations)];
  const open: DataSource[] = [];
  const connect = async (poolSize = 4) => {
    // Migrations hold an advisory lock on one connection and run on another: at least two.
    poolSize = Math.max(poolSize, 2);
    const ds = await createDataSource(
      { kind: 'postgres', url: url.toString(), poolSize },
      entities as never,
      migrations as never,
    );
    open.push(ds);
    return ds;
  };
  await (await connect(2)).query('SELECT 1');
  return {
    url: url.toString(),
    connect,
    async drop() {
      for (const ds of open.splice(0)) await closeDataSource(ds).catch(() => undefined);
      await admin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    },
  };
}

/** Stores a one-task workflow and returns its id. */
export async function seedWorkflow(db: DataSource, projectId: string): Promise<string> {
  const text = `version: '2.0'\ncron_target:\n  input:\n    - n\n  tasks:\n    t:\n      action: std.noop\n`;
  const spec = parseWorkflows(text).workflows[0];
  const rows: { id: string }[] = await db.query(
    `INSERT INTO "workflow_definitions" ("name", "namespace", "project_id", "scope", "definition", "checksum", "spec", "input", "interface", "created_at")
     VALUES ('cron_target', '', $1, 'private', $2, '0', $3::jsonb, 'n', '{}', now()) RETURNING "id"`,
    [projectId, text, JSON.stringify(spec)],
  );
  const row = rows[0];
  if (!row) throw new Error('workflow not stored');
  return row.id;
}

/** `count` one-shot triggers all due at `at`, input `{n: i}`; returns their ids. */
export async function seedDueTriggers(
  db: DataSource,
  workflowId: string,
  projectId: string,
  count: number,
  at: Date,
  remaining = 1,
  pattern: string | null = null,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const t = await insertCronTrigger(db, {
      name: `t${i}`,
      projectId,
      workflowId,
      workflowName: 'cron_target',
      workflowNamespace: '',
      workflowInput: { n: i },
      workflowParams: {},
      pattern,
      firstExecutionTime: pattern ? null : at,
      nextExecutionTime: at,
      remainingExecutions: remaining,
      createdAt: new Date(),
    });
    ids.push(t.id);
  }
  return ids;
}

/** Executions started by triggers: trigger id → execution ids, and the outbox start commands. */
export async function firedExecutions(
  db: DataSource,
): Promise<{ byTrigger: Map<string, string[]>; startCommands: number; executions: number }> {
  const rows: { id: string; description: string }[] = await db.query(
    `SELECT "id", "description" FROM "workflow_executions"`,
  );
  const byTrigger = new Map<string, string[]>();
  for (const r of rows) {
    const id = (JSON.parse(r.description) as { triggered_by: { id: string } }).triggered_by.id;
    byTrigger.set(id, [...(byTrigger.get(id) ?? []), r.id]);
  }
  const out: { n: string }[] = await db.query(
    `SELECT count(*)::text AS n FROM "outbox" WHERE "payload"::text LIKE '%engine.start-execution%'`,
  );
  return { byTrigger, startCommands: Number(out[0]?.n ?? 0), executions: rows.length };
}
