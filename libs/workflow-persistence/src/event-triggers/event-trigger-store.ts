import { ConflictError } from '@osc/errors';

/** Anything that runs SQL: a DataSource, or a transaction's EntityManager inside a transaction. */
export interface EventSqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** One stored event trigger. */
export interface EventTriggerRecord {
  readonly id: string;
  readonly name: string;
  readonly projectId: string;
  readonly scope: 'private' | 'public';
  readonly workflowId: string;
  readonly workflowInput: Record<string, unknown>;
  readonly workflowParams: Record<string, unknown>;
  readonly exchange: string;
  readonly topic: string;
  readonly event: string;
  readonly createdAt: Date;
  readonly updatedAt: Date | null;
}

export type NewEventTrigger = Omit<EventTriggerRecord, 'id' | 'updatedAt'>;

/** What an update may change (exchange, topic and event never change). */
export interface EventTriggerChanges {
  readonly name?: string;
  readonly scope?: 'private' | 'public';
  readonly workflowInput?: Record<string, unknown>;
  readonly workflowParams?: Record<string, unknown>;
}

type Row = Record<string, unknown>;
const date = (v: unknown): Date | null =>
  v === null || v === undefined ? null : v instanceof Date ? v : new Date(String(v));
const obj = (v: unknown): Record<string, unknown> =>
  (typeof v === 'string' ? JSON.parse(v) : (v ?? {})) as Record<string, unknown>;
/** TypeORM's PostgreSQL drivers answer UPDATE/DELETE … RETURNING with `[rows, count]`. */
const returned = (result: unknown): Row[] =>
  Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as Row[]) : (result as Row[]);
const sqlCode = (err: unknown): unknown => {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  return e?.code ?? e?.driverError?.code;
};

/** A raw `event_triggers` row as a record. */
export const toEventTrigger = (r: Row): EventTriggerRecord => ({
  id: String(r['id']),
  name: String(r['name'] ?? ''),
  projectId: String(r['project_id']),
  scope: r['scope'] === 'public' ? 'public' : 'private',
  workflowId: String(r['workflow_id']),
  workflowInput: obj(r['workflow_input']),
  workflowParams: obj(r['workflow_params']),
  exchange: String(r['exchange']),
  topic: String(r['topic']),
  event: String(r['event']),
  createdAt: date(r['created_at']) as Date,
  updatedAt: date(r['updated_at']),
});

const duplicate = (
  t: Pick<EventTriggerRecord, 'exchange' | 'topic' | 'event' | 'workflowId' | 'projectId'>,
) =>
  new ConflictError(
    `Duplicate entry for EventTrigger ['exchange', 'topic', 'event', 'workflow_id', 'project_id']: ${t.exchange}, ${t.topic}, ${t.event}, ${t.workflowId}, ${t.projectId}`,
  );

/** Inserts a trigger; the same (exchange, topic, event, workflow, project) twice is Mistral's 409. */
export async function insertEventTrigger(
  db: EventSqlRunner,
  t: NewEventTrigger,
): Promise<EventTriggerRecord> {
  try {
    const rows: Row[] = await db.query(
      `INSERT INTO "event_triggers" ("name", "project_id", "scope", "workflow_id", "workflow_input", "workflow_params", "exchange", "topic",
         "event", "created_at")
       VALUES ($1, $2, $3, $4::uuid, $5::jsonb, $6::jsonb, $7, $8, $9, $10::timestamptz)
       RETURNING *`,
      [
        t.name,
        t.projectId,
        t.scope,
        t.workflowId,
        JSON.stringify(t.workflowInput),
        JSON.stringify(t.workflowParams),
        t.exchange,
        t.topic,
        t.event,
        t.createdAt.toISOString(),
      ],
    );
    return toEventTrigger(rows[0] as Row);
  } catch (err) {
    if (sqlCode(err) === '23505') throw duplicate(t);
    throw err;
  }
}

/**
 * One trigger by id, visible to `projectId`: its own rows and public ones (null = any project, for
 * admins). `lock` takes the row lock (delete and update).
 */
export async function findEventTrigger(
  db: EventSqlRunner,
  id: string,
  projectId: string | null,
  opts: { lock?: boolean } = {},
): Promise<EventTriggerRecord | null> {
  const params: unknown[] = [id];
  let where = `"id" = $1::uuid`;
  if (projectId !== null) {
    params.push(projectId);
    where += ` AND ("project_id" = $2 OR "scope" = 'public')`;
  }
  const rows: Row[] = await db.query(
    `SELECT * FROM "event_triggers" WHERE ${where}${opts.lock ? ' FOR UPDATE' : ''}`,
    params,
  );
  return rows[0] ? toEventTrigger(rows[0]) : null;
}

export async function updateEventTrigger(
  db: EventSqlRunner,
  id: string,
  changes: EventTriggerChanges,
  now: Date,
): Promise<EventTriggerRecord> {
  const sets: string[] = [];
  const params: unknown[] = [id];
  const set = (column: string, value: unknown, cast = '') => {
    params.push(value);
    sets.push(`"${column}" = $${params.length}${cast}`);
  };
  if (changes.name !== undefined) set('name', changes.name);
  if (changes.scope !== undefined) set('scope', changes.scope);
  if (changes.workflowInput !== undefined)
    set('workflow_input', JSON.stringify(changes.workflowInput), '::jsonb');
  if (changes.workflowParams !== undefined)
    set('workflow_params', JSON.stringify(changes.workflowParams), '::jsonb');
  set('updated_at', now.toISOString(), '::timestamptz');
  const rows = returned(
    await db.query(
      `UPDATE "event_triggers" SET ${sets.join(', ')} WHERE "id" = $1::uuid RETURNING *`,
      params,
    ),
  );
  return toEventTrigger(rows[0] as Row);
}

export async function deleteEventTrigger(db: EventSqlRunner, id: string): Promise<void> {
  await db.query(`DELETE FROM "event_triggers" WHERE "id" = $1::uuid`, [id]);
}

/** Ids of the triggers (of any project) that start a workflow: such a workflow cannot be deleted. */
export async function eventTriggerIdsOfWorkflow(db: EventSqlRunner, workflowId: string): Promise<string[]> {
  const rows: Row[] = await db.query(
    `SELECT "id" FROM "event_triggers" WHERE "workflow_id" = $1::uuid ORDER BY "id"`,
    [workflowId],
  );
  return rows.map((r) => String(r['id']));
}

/** Every (exchange, topic) some trigger listens on: what the notification listener must consume. */
export async function eventTriggerSources(
  db: EventSqlRunner,
): Promise<{ exchange: string; topic: string }[]> {
  const rows: Row[] = await db.query(
    `SELECT DISTINCT "exchange", "topic" FROM "event_triggers" ORDER BY "exchange", "topic"`,
  );
  return rows.map((r) => ({ exchange: String(r['exchange']), topic: String(r['topic']) }));
}

/** The triggers a notification of `event` on (exchange, topic) fires, before the project check. */
export async function eventTriggersFor(
  db: EventSqlRunner,
  exchange: string,
  topic: string,
  event: string,
): Promise<EventTriggerRecord[]> {
  const rows: Row[] = await db.query(
    `SELECT * FROM "event_triggers" WHERE "exchange" = $1 AND "topic" = $2 AND "event" = $3 ORDER BY "created_at", "id"`,
    [exchange, topic, event],
  );
  return rows.map(toEventTrigger);
}

/**
 * Records that the notification `messageId` is being handled. False when it was handled before: the
 * caller then starts nothing. Inside the firing transaction, a concurrent duplicate waits on the
 * first one's uncommitted row and gets false once it commits (or true if it rolled back).
 */
export async function claimNotification(db: EventSqlRunner, messageId: string, now: Date): Promise<boolean> {
  const rows: Row[] = await db.query(
    `INSERT INTO "event_trigger_notifications" ("message_id", "received_at") VALUES ($1, $2::timestamptz)
     ON CONFLICT ("message_id") DO NOTHING RETURNING "message_id"`,
    [messageId, now.toISOString()],
  );
  return rows.length === 1;
}

/** Forgets handled message ids older than `before` (a broker redelivers within minutes, not days). */
export async function pruneNotifications(db: EventSqlRunner, before: Date): Promise<number> {
  const rows = returned(
    await db.query(
      `DELETE FROM "event_trigger_notifications" WHERE "received_at" < $1::timestamptz RETURNING 1`,
      [before.toISOString()],
    ),
  );
  return rows.length;
}
