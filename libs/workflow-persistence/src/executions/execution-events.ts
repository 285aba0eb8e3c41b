import { EventEmitter } from 'node:events';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { HistoryEvent, WorkflowExecution } from '@osc/workflow-domain';

/** Anything that runs SQL (a transaction's EntityManager, a DataSource). */
interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<any>;
}

/** The PostgreSQL channel on which engines announce new history entries (payload: `{"p": project, "r": root}`). */
export const EXECUTION_EVENTS_CHANNEL = 'osc_execution_events';

/**
 * Announcements of new history entries inside this process, emitted after the engine's commit (event
 * `events` with `{ projectId, rootExecutionId }`). Embedded mode has no other way to hear them; in
 * distributed mode they also arrive over PostgreSQL NOTIFY from engines in other processes.
 */
export const localExecutionEvents = new EventEmitter().setMaxListeners(0);

export interface ExecutionEventSignal {
  readonly projectId: string;
  readonly rootExecutionId: string;
  /**
   * Whether the entries include an execution's state change (the project streams read only then);
   * undefined when the announcer does not know (in-process announcements).
   */
  readonly executionChanged?: boolean;
}

/** A stored history entry as the API shows it (our extension of the Mistral API). */
export interface StoredExecutionEvent {
  seq: number;
  root_execution_id: string;
  execution_id: string;
  subject: string;
  task_execution_id: string | null;
  action_execution_id: string | null;
  name: string;
  state: string;
  previous_state: string | null;
  state_info: string | null;
  details: Record<string, unknown>;
  created_at: string;
}

let historyWrites = true;

/**
 * Turns the writing of execution history off (or back on) in this process: an internal switch for
 * the benchmark that measures what the history costs (bench/events, `--history=off` of
 * bench/engine), never called by the product. With it off, {@link appendExecutionEvents} writes and
 * announces nothing.
 */
export function setExecutionHistoryWrites(enabled: boolean): void {
  historyWrites = enabled;
}

/**
 * An entry as the append functions read it: short keys, and no key for a null value or empty
 * details (the JSON is sent, parsed by PostgreSQL and, in packed rows, stored as it is; a missing
 * key reads as null). Inside a packed row (`packed`) the execution is the row's (`x` of the pack).
 */
const toRow = (e: HistoryEvent, packed = false): Record<string, unknown> => {
  const r: Record<string, unknown> = packed
    ? { s: e.subject, n: e.name, st: e.state }
    : { x: e.executionId, s: e.subject, n: e.name, st: e.state };
  if (e.taskExecutionId !== null) r['t'] = e.taskExecutionId;
  if (e.actionExecutionId !== null) r['a'] = e.actionExecutionId;
  if (e.previousState !== null) r['ps'] = e.previousState;
  if (e.stateInfo !== null) r['si'] = e.stateInfo;
  for (const _ in e.details) {
    r['d'] = e.details;
    break;
  }
  return r;
};

/**
 * A tree's entries of one transaction as the append stores them (PackExecutionEvents1765800000000):
 * an entry about an execution is a row of its own (it has a place in the project streams); a run of
 * two or more consecutive entries about the same execution's tasks and actions is one packed row
 * (`{"x": execution, "p": [entries without "x"]}`), expanded when read. A seq10 execution's ~20 task and action
 * entries were as many rows, each a heap tuple and a primary-key entry.
 */
function unitsOf(events: readonly HistoryEvent[]): unknown[] {
  const units: unknown[] = [];
  let run: HistoryEvent[] = [];
  const flush = () => {
    if (run.length === 1) units.push(toRow(run[0] as HistoryEvent));
    else if (run.length > 1) units.push({ x: run[0]?.executionId, p: run.map((e) => toRow(e, true)) });
    run = [];
  };
  for (const e of events) {
    if (e.subject === 'execution') {
      flush();
      units.push(toRow(e));
    } else {
      if (run.length > 0 && run[0]?.executionId !== e.executionId) flush();
      run.push(e);
    }
  }
  flush();
  return units;
}

/** The NOTIFY payload of a tree's new entries (the append adds the last sequence number). */
const announcement = (projectId: string, root: string, events: readonly HistoryEvent[]): string =>
  JSON.stringify(
    events.some((e) => e.subject === 'execution')
      ? { p: projectId, r: root, x: 1 }
      : { p: projectId, r: root },
  );

/** What an append of history entries writes, as part of a statement (see {@link executionEventsAppendCall}). */
export interface ExecutionEventsAppend {
  /** The append's SQL expression (a call of a void function), its values bound; null: nothing to write. */
  readonly call: string | null;
  /** Per item given, how many entries the call writes. */
  readonly written: number[];
}

/**
 * The append of several executions' entries (see {@link appendExecutionEventsOfMany}) as an SQL
 * expression, its values bound with `bind`, for a statement the caller runs anyway: the append's
 * fixed cost was mostly its own statement's (a round trip, parse, bind, the function call's start),
 * and the API's create and every engine transaction ran one more statement for it. The caller makes
 * sure the expression is evaluated exactly once (a non-modifying CTE runs only when referenced) and,
 * for an execution's own entries, while the execution's row is locked (by the caller's transaction,
 * or by the statement's insert of it, evaluated before the call). Each tree's counter, rows and
 * announcement are written as the group append's function writes them (PackExecutionEvents1765800000000),
 * trees in root id order (entries of the same tree in the given order): a tree's counter row stays
 * locked to the commit, so two engines appending the same trees in their queues' orders could each
 * hold one and wait for the other.
 */
export function executionEventsAppendCall(
  items: readonly {
    ex: Pick<WorkflowExecution, 'id' | 'rootExecutionId' | 'projectId'>;
    events: readonly HistoryEvent[];
  }[],
  now: Date,
  bind: (value: unknown) => string,
): ExecutionEventsAppend {
  const written = items.map((i) => (historyWrites ? i.events.length : 0));
  const trees = items
    .map((i, order) => ({ ...i, root: i.ex.rootExecutionId ?? i.ex.id, order }))
    .filter((i) => i.events.length > 0 && historyWrites)
    .sort((a, b) => (a.root < b.root ? -1 : a.root > b.root ? 1 : a.order - b.order));
  if (trees.length === 0) return { call: null, written };
  const call = `"osc_append_execution_events_of_trees"(${[
    `${bind(trees.map((t) => t.root))}::uuid[]`,
    `${bind(trees.map((t) => t.events.length))}::int[]`,
    `${bind(trees.map((t) => t.ex.projectId))}::varchar[]`,
    `${bind(JSON.stringify(trees.map((t) => unitsOf(t.events))))}::jsonb`,
    `${bind(now.toISOString())}::timestamptz`,
    `${bind(EXECUTION_EVENTS_CHANNEL)}::text`,
    `${bind(trees.map((t) => announcement(t.ex.projectId, t.root, t.events)))}::text[]`,
  ].join(', ')})`;
  return { call, written };
}

/**
 * The history entry of an execution's creation (see {@link executionEventsAppendCall}) as an SQL
 * expression, its values bound with `bind`; null when history is not written. A root's creation
 * entry is its tree's first (seq 1) and takes no counter row: nothing else can append to the tree
 * before the creation commits (the engine hears of it only after), and the tree's first append
 * counts on from its last stored entry (AppendCreationWithoutCounter1765900000000). A sub-workflow's
 * goes into its root's tree like any other entry.
 */
export function executionCreationAppendCall(
  ex: Pick<WorkflowExecution, 'id' | 'rootExecutionId' | 'projectId'>,
  entry: HistoryEvent,
  now: Date,
  bind: (value: unknown) => string,
): string | null {
  if (ex.rootExecutionId !== null)
    return executionEventsAppendCall([{ ex, events: [entry] }], now, bind).call;
  if (!historyWrites) return null;
  return `"osc_append_execution_creation"(${[
    `${bind(ex.id)}::uuid`,
    `${bind(ex.projectId)}::varchar`,
    `${bind(JSON.stringify(toRow(entry)))}::jsonb`,
    `${bind(now.toISOString())}::timestamptz`,
    `${bind(EXECUTION_EVENTS_CHANNEL)}::text`,
    `${bind(announcement(ex.projectId, ex.id, [entry]))}::text`,
  ].join(', ')})`;
}

/** Runs an append of its own (a statement with only the append's call); returns `written`. */
async function runAppend(
  db: SqlRunner,
  items: Parameters<typeof executionEventsAppendCall>[0],
  now: Date,
): Promise<number[]> {
  const values: unknown[] = [];
  const { call, written } = executionEventsAppendCall(items, now, (v) => `$${values.push(v)}`);
  if (call) await db.query(`SELECT ${call}`, values);
  return written;
}

/**
 * Appends history entries of one execution tree in the caller's transaction, numbered from the
 * tree's counter (one row per root execution, locked until commit, so entries of a tree commit in
 * sequence order and a reader resuming after `seq` never misses a later-committing smaller one),
 * and announces them with NOTIFY (delivered at commit). Returns how many were written.
 */
export async function appendExecutionEvents(
  db: SqlRunner,
  ex: Pick<WorkflowExecution, 'id' | 'rootExecutionId' | 'projectId'>,
  events: readonly HistoryEvent[],
  now: Date,
): Promise<number> {
  // One call: the counter, the rows and the announcement (NOTIFY is delivered at commit), in a
  // PL/pgSQL function whose statements' plans the session keeps (the same statement sent as text was
  // parsed and planned again by every engine transaction: a third of its cost). Entries about an
  // execution itself also get their place in the project streams (see listExecutionStateChanges): a
  // position each and a horizon, taken while the execution's row lock is held. The group append's
  // function, with one tree.
  const [written] = await runAppend(db, [{ ex, events }], now);
  return written ?? 0;
}

/**
 * {@link appendExecutionEvents} for several executions in one engine transaction (a group), in ONE
 * statement: each tree's counter, rows and announcement as the single append does, trees in root id
 * order (see {@link executionEventsAppendCall}). The project streams' positions of all the trees'
 * execution entries share one horizon (one read of the backends' status per statement). Returns, per
 * item, how many entries were written.
 */
export function appendExecutionEventsOfMany(
  db: SqlRunner,
  items: readonly {
    ex: Pick<WorkflowExecution, 'id' | 'rootExecutionId' | 'projectId'>;
    events: readonly HistoryEvent[];
  }[],
  now: Date,
): Promise<number[]> {
  return runAppend(db, items, now);
}

/**
 * Deletes the history of executions about to be deleted (the history has no foreign key: checking
 * one per entry cost more than the rest of writing it). A root's whole tree's history goes with it
 * (its counter goes by cascade); a sub-workflow's own entries go with the sub-workflow.
 */
export async function deleteExecutionHistory(
  db: SqlRunner,
  executions: readonly { id: string; rootExecutionId: string | null }[],
): Promise<void> {
  const roots = executions.filter((e) => e.rootExecutionId === null).map((e) => e.id);
  const subs = executions.filter((e) => e.rootExecutionId !== null);
  if (roots.length > 0)
    await db.query(`DELETE FROM "execution_events" WHERE "root_execution_id" = ANY($1::uuid[])`, [roots]);
  for (const sub of subs) {
    await db.query(`DELETE FROM "execution_events" WHERE "root_execution_id" = $1 AND "execution_id" = $2`, [
      sub.rootExecutionId,
      sub.id,
    ]);
  }
}

/**
 * A page of an execution's history, after `marker` (a sequence number), oldest first. A root
 * execution's history includes its sub-workflows' entries; a sub-workflow's, only its own.
 */
export async function listExecutionEvents(
  db: SqlRunner,
  ex: { id: string; rootExecutionId: string | null },
  after: number,
  limit: number,
): Promise<StoredExecutionEvent[]> {
  // a sub-workflow's entries: within its root's (the primary key's prefix), no index of their own
  const where =
    ex.rootExecutionId === null
      ? `"root_execution_id" = $1`
      : `"root_execution_id" = $4 AND "execution_id" = $1`;
  const rows: Record<string, unknown>[] = await db.query(
    rowsAfterSql(where, '$2', '$3'),
    ex.rootExecutionId === null ? [ex.id, after, limit] : [ex.id, after, limit, ex.rootExecutionId],
  );
  return expandRows(rows, after, limit);
}

const EVENT_COLUMNS = `"seq", "root_execution_id", "execution_id", "subject", "task_execution_id", "action_execution_id", "name", "state",
            "previous_state", "state_info", "details", "created_at", "last_seq", "entries"`;

/**
 * The rows holding the entries after `after` (SQL expressions) among those `where` selects, at most
 * `limit` rows from the first: the row before the marker may be a packed one reaching past it (see
 * unitsOf), the rest follow by the primary key.
 */
const rowsAfterSql = (where: string, after: string, limit: string): string =>
  `(SELECT * FROM (SELECT ${EVENT_COLUMNS} FROM "execution_events" WHERE ${where} AND "seq" <= ${after}
                    ORDER BY "seq" DESC LIMIT 1) AS "b" WHERE "b"."last_seq" > ${after})
   UNION ALL
   (SELECT ${EVENT_COLUMNS} FROM "execution_events" WHERE ${where} AND "seq" > ${after} ORDER BY "seq" LIMIT ${limit})`;

/**
 * The live readers' form of {@link listExecutionEvents}: the entries of many trees (each whole,
 * sub-workflows included) after each tree's own sequence number, at most `limit` per tree, in ONE
 * statement. The API's event hub reads every tree announced since its last read this way instead
 * of one query per tree: at hundreds of announcements a second the per-statement cost and the
 * waits for a pooled connection were most of the delivery delay. Each tree's entries come in
 * sequence order; a tree with nothing new has no key.
 */
export async function listExecutionEventsOfTrees(
  db: SqlRunner,
  trees: readonly { root: string; after: number }[],
  limit: number,
): Promise<Map<string, StoredExecutionEvent[]>> {
  const out = new Map<string, StoredExecutionEvent[]>();
  if (trees.length === 0) return out;
  const rows: Record<string, unknown>[] = await db.query(
    `SELECT "e".* FROM unnest($1::uuid[], $2::bigint[]) AS "w"("root", "after")
       CROSS JOIN LATERAL (${rowsAfterSql(`"root_execution_id" = "w"."root"`, `"w"."after"`, '$3')}) AS "e"`,
    [trees.map((t) => t.root), trees.map((t) => t.after), limit],
  );
  const rowsOf = new Map<string, Record<string, unknown>[]>();
  for (const r of rows) {
    const root = String(r['root_execution_id']);
    const list = rowsOf.get(root);
    if (list) list.push(r);
    else rowsOf.set(root, [r]);
  }
  const after = new Map(trees.map((t) => [t.root, t.after]));
  for (const [root, list] of rowsOf) {
    const page = expandRows(list, after.get(root) ?? 0, limit);
    if (page.length > 0) out.set(root, page);
  }
  return out;
}

/** A change of an execution's state as a project stream shows it: a history entry and its place. */
export interface StoredExecutionStateChange extends StoredExecutionEvent {
  project_id: string;
  /** Position in the streams of every project: increasing in commit order of each execution. */
  position: number;
}

/**
 * History rows (single or packed, see unitsOf) as entries: those after `after`, in sequence order,
 * at most `limit`.
 */
function expandRows(rows: Record<string, unknown>[], after: number, limit: number): StoredExecutionEvent[] {
  const out: StoredExecutionEvent[] = [];
  rows.sort((a, b) => Number(a['seq']) - Number(b['seq']));
  for (const r of rows) {
    const packed = r['entries'];
    if (packed === null || packed === undefined) {
      if (Number(r['seq']) > after) out.push(toEvent(r));
    } else {
      const first = Number(r['seq']);
      const root = String(r['root_execution_id']);
      const execution = String(r['execution_id']);
      const createdAt = isoOf(r['created_at']);
      const entries = (typeof packed === 'string' ? JSON.parse(packed) : packed) as PackedEntry[];
      entries.forEach((e, i) => {
        if (first + i > after) out.push(fromPacked(e, first + i, root, execution, createdAt));
      });
    }
    if (out.length >= limit) break;
  }
  return out.length > limit ? out.slice(0, limit) : out;
}

/**
 * An entry inside a packed row (the append's short keys, see toRow). Rows packed before 2026-11-27 (this change)
 * name the execution (`x`) and hold nulls; later ones leave both out (the execution is the row's).
 */
interface PackedEntry {
  x?: string;
  s: string;
  t?: string | null;
  a?: string | null;
  n: string;
  st: string;
  ps?: string | null;
  si?: string | null;
  d?: Record<string, unknown> | null;
}

const fromPacked = (
  e: PackedEntry,
  seq: number,
  root: string,
  execution: string,
  createdAt: string,
): StoredExecutionEvent => ({
  seq,
  root_execution_id: root,
  execution_id: e.x ?? execution,
  subject: e.s,
  task_execution_id: e.t ?? null,
  action_execution_id: e.a ?? null,
  name: e.n,
  state: e.st,
  previous_state: e.ps ?? null,
  state_info: e.si ?? null,
  details: e.d ?? {},
  created_at: createdAt,
});

const isoOf = (v: unknown): string => (v instanceof Date ? v : new Date(String(v))).toISOString();

const toEvent = (r: Record<string, unknown>): StoredExecutionEvent => ({
  seq: Number(r['seq']),
  root_execution_id: String(r['root_execution_id']),
  execution_id: String(r['execution_id']),
  subject: String(r['subject']),
  task_execution_id: (r['task_execution_id'] as string | null) ?? null,
  action_execution_id: (r['action_execution_id'] as string | null) ?? null,
  name: String(r['name']),
  state: String(r['state']),
  previous_state: (r['previous_state'] as string | null) ?? null,
  state_info: (r['state_info'] as string | null) ?? null,
  details: (typeof r['details'] === 'string' ? JSON.parse(r['details']) : r['details']) as Record<
    string,
    unknown
  >,
  created_at: isoOf(r['created_at']),
});

/**
 * An execution entry's stream horizon as an SQL expression over its row: the stored one (rows written
 * before StreamHorizonFromSubtransaction1766000000000, see there), else the id of the subtransaction that
 * inserted it (its `xmin`, 32 bits) widened to 64 bits from the transaction's own id (`stream_xact`),
 * which is below it and less than 2^32 away.
 */
export const STREAM_HORIZON = `COALESCE("stream_horizon", "stream_xact" + (("xmin"::text::bigint - "stream_xact" % 4294967296 + 4294967296) % 4294967296))`;

/**
 * Execution state changes after `position`, in position order, of one project (or of all when
 * `projectId` is null), as far as they are settled: `changes` may be followed by entries that
 * cannot be handed out yet (`pending`: read again soon).
 *
 * Why it holds (no gap, no duplicate for a reader resuming after a position): every entry about an
 * execution is stamped, in the transaction that writes it and while that execution's row is locked,
 * with a position from one sequence and a horizon: a transaction id above every id assigned when
 * the position was taken (the id of the subtransaction that inserted the entry after taking its
 * position, {@link STREAM_HORIZON}; before, a scan of the running ids). A transaction that took a smaller
 * position already had its id then (the append takes it before any position) and
 * holds the stream-position lock until it ends (NarrowExecutionStreamHorizon1765516000001), so once
 * no holder of that lock below the horizon runs in this database (read before the rows, so the
 * rows' snapshot is later), every smaller position is committed (visible) or gone for good. A later
 * entry that is settled settles all before it. Changes of one execution are in commit order: their
 * positions are taken under its row lock. The wait is for the transactions that had taken a
 * position and not committed at that moment (normally their last millisecond).
 */
export async function listExecutionStateChanges(
  db: SqlRunner,
  projectId: string | null,
  position: number,
  limit: number,
): Promise<{ changes: StoredExecutionStateChange[]; pending: boolean }> {
  // the floor first: the rows must be read by a later statement (snapshot) than the one that found it
  const floor = await streamFloor(db);
  const rows: Record<string, unknown>[] = await db.query(
    `SELECT "seq", "root_execution_id", "execution_id", "project_id", "subject", "task_execution_id", "action_execution_id", "name", "state",
            "previous_state", "state_info", "details", "created_at", "stream_pos", ${STREAM_HORIZON} AS "stream_horizon"
       FROM "execution_events"
      WHERE "stream_pos" > $1 ${projectId === null ? '' : 'AND "project_id" = $3'}
      ORDER BY "stream_pos" LIMIT $2`,
    projectId === null ? [position, limit] : [position, limit, projectId],
  );
  return settledPrefix(rows, floor);
}

const STATE_CHANGE_COLUMNS = `${EVENT_COLUMNS}, "project_id", "stream_pos", ${STREAM_HORIZON} AS "stream_horizon"`;

/** The rows up to the last settled one (a settled entry settles all before it), and whether more wait. */
function settledPrefix(
  rows: Record<string, unknown>[],
  floor: number | null,
): { changes: StoredExecutionStateChange[]; pending: boolean } {
  let last = -1;
  rows.forEach((r, i) => {
    if (floor === null || Number(r['stream_horizon']) <= floor) last = i;
  });
  const changes = rows
    .slice(0, last + 1)
    .map((r) => ({ ...toEvent(r), project_id: String(r['project_id']), position: Number(r['stream_pos']) }));
  return { changes, pending: last + 1 < rows.length };
}

/**
 * The live readers' form of {@link listExecutionStateChanges}: the settled state changes of many
 * project streams (a project id, or null for every project) after each one's position, at most
 * `limit` each, with ONE look at the running transactions and one statement for all the named
 * projects (same settledness rule, same order). Keyed by project id (`null` for every project).
 */
export async function listExecutionStateChangesOfProjects(
  db: SqlRunner,
  streams: readonly { projectId: string | null; after: number }[],
  limit: number,
): Promise<Map<string | null, { changes: StoredExecutionStateChange[]; pending: boolean }>> {
  const out = new Map<string | null, { changes: StoredExecutionStateChange[]; pending: boolean }>();
  if (streams.length === 0) return out;
  // the floor first: the rows must be read by a later statement (snapshot) than the one that found it
  const floor = await streamFloor(db);
  const named = streams.filter((s): s is { projectId: string; after: number } => s.projectId !== null);
  const every = streams.find((s) => s.projectId === null);
  const byProject = new Map<string | null, Record<string, unknown>[]>(streams.map((s) => [s.projectId, []]));
  if (named.length > 0) {
    const rows: Record<string, unknown>[] = await db.query(
      `SELECT "c".* FROM unnest($1::varchar[], $2::bigint[]) AS "w"("project", "after")
         CROSS JOIN LATERAL (
           SELECT ${STATE_CHANGE_COLUMNS} FROM "execution_events"
            WHERE "project_id" = "w"."project" AND "stream_pos" > "w"."after" AND "stream_pos" IS NOT NULL
            ORDER BY "stream_pos" LIMIT $3) AS "c"`,
      [named.map((s) => s.projectId), named.map((s) => s.after), limit],
    );
    for (const r of rows) byProject.get(String(r['project_id']))?.push(r);
  }
  if (every) {
    const rows: Record<string, unknown>[] = await db.query(
      `SELECT ${STATE_CHANGE_COLUMNS} FROM "execution_events" WHERE "stream_pos" > $1 ORDER BY "stream_pos" LIMIT $2`,
      [every.after, limit],
    );
    byProject.set(null, rows);
  }
  for (const [projectId, rows] of byProject) {
    rows.sort((a, b) => Number(a['stream_pos']) - Number(b['stream_pos']));
    out.set(projectId, settledPrefix(rows, floor));
  }
  return out;
}

/**
 * Where a new project stream starts: the position of the newest settled state change (every change
 * at or before it is committed or gone), 0 when there is none. A stream opened here misses no change
 * that commits after it opened; a few that committed just before may come too.
 */
export async function settledStreamPosition(db: SqlRunner): Promise<number> {
  const floor = await streamFloor(db);
  const rows: Record<string, unknown>[] = await db.query(
    `SELECT "stream_pos" FROM "execution_events"
      WHERE "stream_pos" IS NOT NULL ${floor === null ? '' : `AND ${STREAM_HORIZON} <= $1`}
      ORDER BY "stream_pos" DESC LIMIT 1`,
    floor === null ? [] : [floor],
  );
  return rows[0] ? Number(rows[0]['stream_pos']) : 0;
}

/**
 * The smallest transaction id still running in this database (other sessions), null when none:
 * an entry whose horizon is at most that is settled. Only this database's transactions can take
 * stream positions, so a long transaction of another database on the same server holds nothing
 * back. (Needs the sessions of the product's processes to be visible: one database role, or a role
 * with pg_read_all_stats.)
 */
async function streamFloor(db: SqlRunner): Promise<number | null> {
  const rows: Record<string, unknown>[] = await db.query(`SELECT "osc_execution_stream_floor"() AS "floor"`);
  const floor = rows[0]?.['floor'];
  return floor === null || floor === undefined ? null : Number(floor);
}

/**
 * Execution history (our extension): one row per change, numbered per execution tree. Rows go with
 * their execution (cascade), so the history follows the execution's retention.
 */
export class CreateExecutionEvents1764600000000 implements MigrationInterface {
  name = 'CreateExecutionEvents1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE "execution_events" (
        "root_execution_id" uuid NOT NULL,
        "seq" bigint NOT NULL,
        "execution_id" uuid NOT NULL,
        "project_id" varchar(255) NOT NULL,
        "subject" varchar(16) NOT NULL,
        "task_execution_id" uuid,
        "action_execution_id" uuid,
        "name" text NOT NULL,
        "state" varchar(16) NOT NULL,
        "previous_state" varchar(16),
        "state_info" text,
        "details" jsonb NOT NULL DEFAULT '{}',
        "created_at" timestamptz NOT NULL,
        CONSTRAINT "PK_execution_events" PRIMARY KEY ("root_execution_id", "seq"),
        CONSTRAINT "FK_execution_events_execution" FOREIGN KEY ("execution_id")
          REFERENCES "workflow_executions" ("id") ON DELETE CASCADE
      )`);
    await q.query(
      `CREATE INDEX "IDX_execution_events_execution" ON "execution_events" ("execution_id", "seq")`,
    );
    await q.query(`
      CREATE TABLE "execution_event_counters" (
        "root_execution_id" uuid NOT NULL,
        "last_seq" bigint NOT NULL,
        CONSTRAINT "PK_execution_event_counters" PRIMARY KEY ("root_execution_id"),
        CONSTRAINT "FK_execution_event_counters_root" FOREIGN KEY ("root_execution_id")
          REFERENCES "workflow_executions" ("id") ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE "execution_event_counters"`);
    await q.query(`DROP TABLE "execution_events"`);
  }
}

/**
 * Project streams of execution state changes (our extension): each entry about an execution gets a
 * stream position and horizon (see listExecutionStateChanges). Entries written before this
 * migration have none and are not streamed.
 */
export class AddExecutionStreamPositions1765300000000 implements MigrationInterface {
  name = 'AddExecutionStreamPositions1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE "execution_stream_pos"`);
    await q.query(
      `ALTER TABLE "execution_events" ADD COLUMN "stream_pos" bigint, ADD COLUMN "stream_horizon" bigint`,
    );
    await q.query(
      `CREATE INDEX "IDX_execution_events_stream" ON "execution_events" ("stream_pos") WHERE "stream_pos" IS NOT NULL`,
    );
    await q.query(
      `CREATE INDEX "IDX_execution_events_project_stream" ON "execution_events" ("project_id", "stream_pos") WHERE "stream_pos" IS NOT NULL`,
    );
    // The horizon bounds every transaction id assigned before the position was taken: ids still
    // running (read from the backends' status after nextval, its per-transaction cache cleared
    // first), and completed ones (below the xmax of a snapshot taken after that: a PL/pgSQL
    // expression in a VOLATILE function gets a fresh snapshot under READ COMMITTED). A snapshot's
    // xmax alone is not such a bound: it is the latest completed id + 1, and running ids may exceed it.
    await q.query(`
      CREATE FUNCTION "osc_execution_stream_stamp"(OUT "pos" bigint, OUT "horizon" bigint) LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        own bigint := pg_current_xact_id()::text::bigint;
        running bigint;
      BEGIN
        pos := nextval('execution_stream_pos');
        PERFORM pg_stat_clear_snapshot();
        SELECT max(own - age(a.backend_xid)) INTO running FROM pg_stat_get_activity(NULL) AS a WHERE a.backend_xid IS NOT NULL;
        horizon := greatest(pg_snapshot_xmax(pg_current_snapshot())::text::bigint, own + 1, running + 1);
      END $$`);
    // The smallest id still running in this database, other sessions (64-bit, from the 32-bit
    // backend_xid by its distance to a recent reference); null when none runs.
    await q.query(`
      CREATE FUNCTION "osc_execution_stream_floor"() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        top bigint := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
        result bigint;
      BEGIN
        PERFORM pg_stat_clear_snapshot();
        SELECT min(top - ((((top % 4294967296) - a.backend_xid::text::bigint) + 6442450944) % 4294967296 - 2147483648))
          INTO result
          FROM pg_stat_get_activity(NULL) AS a
         WHERE a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()
           AND a.datid = (SELECT "oid" FROM pg_database WHERE datname = current_database());
        RETURN result;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "osc_execution_stream_floor"`);
    await q.query(`DROP FUNCTION "osc_execution_stream_stamp"`);
    await q.query(`DROP INDEX "IDX_execution_events_project_stream"`);
    await q.query(`DROP INDEX "IDX_execution_events_stream"`);
    await q.query(`ALTER TABLE "execution_events" DROP COLUMN "stream_horizon", DROP COLUMN "stream_pos"`);
    await q.query(`DROP SEQUENCE "execution_stream_pos"`);
  }
}

/**
 * Cheaper history writes (the benchmark of its cost, bench/events): no foreign key check per entry
 * (deleteExecutionHistory removes a deleted execution's entries instead) and no index of a
 * sub-workflow's own entries (they are read within their root's, the primary key's prefix).
 */
export class SlimExecutionEvents1765300000001 implements MigrationInterface {
  name = 'SlimExecutionEvents1765300000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "execution_events" DROP CONSTRAINT "FK_execution_events_execution"`);
    await q.query(`DROP INDEX "IDX_execution_events_execution"`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `DELETE FROM "execution_events" e WHERE NOT EXISTS (SELECT 1 FROM "workflow_executions" w WHERE w."id" = e."execution_id")`,
    );
    await q.query(
      `CREATE INDEX "IDX_execution_events_execution" ON "execution_events" ("execution_id", "seq")`,
    );
    await q.query(`
      ALTER TABLE "execution_events" ADD CONSTRAINT "FK_execution_events_execution" FOREIGN KEY ("execution_id")
        REFERENCES "workflow_executions" ("id") ON DELETE CASCADE`);
  }
}

/**
 * The history append as a PL/pgSQL function (appendExecutionEvents): one call per engine
 * transaction whose statements are planned once per session.
 */
export class AppendExecutionEventsFunction1765300000002 implements MigrationInterface {
  name = 'AppendExecutionEventsFunction1765300000002';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "osc_append_execution_events"(p_root uuid, p_count int, p_project varchar, p_rows jsonb, p_now timestamptz, p_channel text, p_payload text)
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_last bigint;
      BEGIN
        INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq") VALUES (p_root, p_count)
          ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + p_count
          RETURNING "last_seq" INTO v_last;
        INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
            "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_horizon")
          SELECT p_root, v_last - p_count + "e"."ord", ("e"."v"->>'x')::uuid, p_project, "e"."v"->>'s', ("e"."v"->>'t')::uuid, ("e"."v"->>'a')::uuid,
                 "e"."v"->>'n', "e"."v"->>'st', "e"."v"->>'ps', "e"."v"->>'si', COALESCE("e"."v"->'d', '{}'::jsonb), p_now,
                 "st"."pos", "st"."horizon"
            FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS "e"("v", "ord")
            LEFT JOIN LATERAL (SELECT * FROM "osc_execution_stream_stamp"() WHERE "e"."v"->>'s' = 'execution') AS "st" ON true;
        PERFORM pg_notify(p_channel, p_payload);
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "osc_append_execution_events"`);
  }
}

/**
 * The announcement names the tree's last sequence number (`"s"`, added to the caller's payload
 * inside the append): an API process whose watchers of the tree have all seen it skips the read,
 * and the event benchmark tells the commit (the NOTIFY's arrival) of each entry apart from its
 * `created_at`.
 */
export class AnnounceLastExecutionEventSeq1765516000000 implements MigrationInterface {
  name = 'AnnounceLastExecutionEventSeq1765516000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(appendFunction(`left(p_payload, -1) || ',"s":' || v_last || '}'`));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(appendFunction('p_payload'));
  }
}

/** The append function (AppendExecutionEventsFunction1765300000002) announcing `payload`. */
const appendFunction = (payload: string): string => `
      CREATE OR REPLACE FUNCTION "osc_append_execution_events"(p_root uuid, p_count int, p_project varchar, p_rows jsonb, p_now timestamptz, p_channel text, p_payload text)
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_last bigint;
      BEGIN
        INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq") VALUES (p_root, p_count)
          ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + p_count
          RETURNING "last_seq" INTO v_last;
        INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
            "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_horizon")
          SELECT p_root, v_last - p_count + "e"."ord", ("e"."v"->>'x')::uuid, p_project, "e"."v"->>'s', ("e"."v"->>'t')::uuid, ("e"."v"->>'a')::uuid,
                 "e"."v"->>'n', "e"."v"->>'st', "e"."v"->>'ps', "e"."v"->>'si', COALESCE("e"."v"->'d', '{}'::jsonb), p_now,
                 "st"."pos", "st"."horizon"
            FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS "e"("v", "ord")
            LEFT JOIN LATERAL (SELECT * FROM "osc_execution_stream_stamp"() WHERE "e"."v"->>'s' = 'execution') AS "st" ON true;
        PERFORM pg_notify(p_channel, ${payload});
      END $$`;

/**
 * The transaction-level advisory lock (two-key form: `classid` = this, `objid` = 0) that every
 * transaction taking a stream position holds, shared, from just before its `nextval` to its end.
 */
export const STREAM_POSITION_LOCK = 16016;

/**
 * Project streams wait only for the transactions that took a stream position. The floor was the
 * smallest id of every running transaction of the database, so a change waited for any writing
 * transaction open when it took its position — outbox claims, task-only engine steps, request
 * transactions: a second and more at p95 on a loaded machine. Now a transaction takes a shared
 * advisory lock (STREAM_POSITION_LOCK) just before its position and holds it to its end, and the
 * floor is the smallest id among the lock's holders (the horizon is unchanged: above every id
 * running when the position was taken). Why it still holds: a transaction T2 with a smaller
 * position than T1's already ran when T1 took its position (so T1's horizon is above T2's id), and
 * while T2 runs it holds the lock, so the floor is at most T2's id: T1's change waits. (Bounding
 * the horizon by the lock's holders too would cost a scan of the whole lock table in every
 * engine transaction: four times the stamp's cost.)
 */
export class NarrowExecutionStreamHorizon1765516000001 implements MigrationInterface {
  name = 'NarrowExecutionStreamHorizon1765516000001';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION "osc_execution_stream_stamp"(OUT "pos" bigint, OUT "horizon" bigint) LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        own bigint := pg_current_xact_id()::text::bigint;
        running bigint;
      BEGIN
        PERFORM pg_advisory_xact_lock_shared(${STREAM_POSITION_LOCK}, 0);
        pos := nextval('execution_stream_pos');
        PERFORM pg_stat_clear_snapshot();
        SELECT max(own - age(a.backend_xid)) INTO running FROM pg_stat_get_activity(NULL) AS a WHERE a.backend_xid IS NOT NULL;
        horizon := greatest(pg_snapshot_xmax(pg_current_snapshot())::text::bigint, own + 1, running + 1);
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION "osc_execution_stream_floor"() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        top bigint := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
        result bigint;
      BEGIN
        PERFORM pg_stat_clear_snapshot();
        SELECT min(top - ((((top % 4294967296) - a.backend_xid::text::bigint) + 6442450944) % 4294967296 - 2147483648))
          INTO result
          FROM pg_locks AS l JOIN pg_stat_get_activity(NULL) AS a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.classid = ${STREAM_POSITION_LOCK} AND l.objid = 0 AND l.objsubid = 2 AND l.granted
           AND l.database = (SELECT "oid" FROM pg_database WHERE datname = current_database())
           AND a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid();
        RETURN result;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION "osc_execution_stream_stamp"(OUT "pos" bigint, OUT "horizon" bigint) LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        own bigint := pg_current_xact_id()::text::bigint;
        running bigint;
      BEGIN
        pos := nextval('execution_stream_pos');
        PERFORM pg_stat_clear_snapshot();
        SELECT max(own - age(a.backend_xid)) INTO running FROM pg_stat_get_activity(NULL) AS a WHERE a.backend_xid IS NOT NULL;
        horizon := greatest(pg_snapshot_xmax(pg_current_snapshot())::text::bigint, own + 1, running + 1);
      END $$`);
    await q.query(`
      CREATE OR REPLACE FUNCTION "osc_execution_stream_floor"() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        top bigint := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
        result bigint;
      BEGIN
        PERFORM pg_stat_clear_snapshot();
        SELECT min(top - ((((top % 4294967296) - a.backend_xid::text::bigint) + 6442450944) % 4294967296 - 2147483648))
          INTO result
          FROM pg_stat_get_activity(NULL) AS a
         WHERE a.backend_xid IS NOT NULL AND a.pid <> pg_backend_pid()
           AND a.datid = (SELECT "oid" FROM pg_database WHERE datname = current_database());
        RETURN result;
      END $$`);
  }
}

/**
 * The append of a group's trees in one call (appendExecutionEventsOfMany): the engine committed up to
 * 32 executions per transaction with one append statement each; the statements' fixed costs (a round
 * trip, parse, bind, a function call's start) were a large part of what the history cost. `p_rows`
 * holds one JSON array of entries per tree; each tree is appended, in the order given, exactly as
 * the single append does (its counter, rows, stream stamps and announcement).
 */
export class AppendExecutionEventsOfTrees1765600000100 implements MigrationInterface {
  name = 'AppendExecutionEventsOfTrees1765600000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "osc_append_execution_events_of_trees"(p_roots uuid[], p_counts int[], p_projects varchar[], p_rows jsonb, p_now timestamptz, p_channel text, p_payloads text[])
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          PERFORM "osc_append_execution_events"(p_roots[i], p_counts[i], p_projects[i], p_rows->(i - 1), p_now, p_channel, p_payloads[i]);
        END LOOP;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION "osc_append_execution_events_of_trees"`);
  }
}

/** The group append of AppendExecutionEventsOneHorizon1765700000100 (one row per entry). */
const APPEND_OF_TREES_ONE_HORIZON = `
      CREATE OR REPLACE FUNCTION "osc_append_execution_events_of_trees"(p_roots uuid[], p_counts int[], p_projects varchar[], p_rows jsonb, p_now timestamptz, p_channel text, p_payloads text[])
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_last bigint[] := '{}';
        v_one bigint;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq") VALUES (p_roots[i], p_counts[i])
            ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + p_counts[i]
            RETURNING "last_seq" INTO v_one;
          v_last := v_last || v_one;
        END LOOP;
        IF jsonb_path_exists(p_rows, '$[*][*] ? (@.s == "execution")') THEN
          PERFORM pg_advisory_xact_lock_shared(${STREAM_POSITION_LOCK}, 0);
        END IF;
        WITH "e" AS MATERIALIZED (
          SELECT "t"."i", "x"."ord", "x"."v",
                 CASE WHEN "x"."v"->>'s' = 'execution' THEN nextval('execution_stream_pos') END AS "pos"
            FROM generate_subscripts(p_roots, 1) AS "t"("i")
            CROSS JOIN LATERAL jsonb_array_elements(p_rows->("t"."i" - 1)) WITH ORDINALITY AS "x"("v", "ord")
           ORDER BY "t"."i", "x"."ord"
        ),
        "h" AS MATERIALIZED (
          SELECT CASE WHEN "c"."n" > 0 THEN "osc_execution_stream_horizon"() END AS "horizon"
            FROM (SELECT count("pos") AS "n" FROM "e") AS "c"
        )
        INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
            "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_horizon")
          SELECT p_roots["e"."i"], v_last["e"."i"] - p_counts["e"."i"] + "e"."ord", ("e"."v"->>'x')::uuid, p_projects["e"."i"],
                 "e"."v"->>'s', ("e"."v"->>'t')::uuid, ("e"."v"->>'a')::uuid, "e"."v"->>'n', "e"."v"->>'st', "e"."v"->>'ps',
                 "e"."v"->>'si', COALESCE("e"."v"->'d', '{}'::jsonb), p_now,
                 "e"."pos", CASE WHEN "e"."pos" IS NOT NULL THEN "h"."horizon" END
            FROM "e" CROSS JOIN "h";
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          PERFORM pg_notify(p_channel, left(p_payloads[i], -1) || ',"s":' || v_last[i] || '}');
        END LOOP;
      END $$`;

/**
 * One stream-horizon computation per append statement instead of one per tree. The group append
 * (AppendExecutionEventsOfTrees1765600000100) called the single append per tree, and each took its
 * stream position with the stamp function, whose horizon reads every backend's status: in a group of
 * k trees that was k reads of it, the largest part of what the history costs PostgreSQL after the
 * rows themselves. Now one statement appends every tree: the counters first (root id order, as
 * before), then every execution entry's position (`nextval`, one per entry: two entries of one tree
 * no longer share one), then ONE horizon, computed after the last position was taken — a later
 * horizon bounds at least every id assigned when each earlier position was taken, which is all the
 * settledness rule needs (see listExecutionStateChanges; it may only make a change wait a moment
 * longer). The shared stream-position lock is taken before the first position, as the stamp did.
 */
export class AppendExecutionEventsOneHorizon1765700000100 implements MigrationInterface {
  name = 'AppendExecutionEventsOneHorizon1765700000100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE FUNCTION "osc_execution_stream_horizon"() RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        own bigint := pg_current_xact_id()::text::bigint;
        running bigint;
      BEGIN
        PERFORM pg_stat_clear_snapshot();
        SELECT max(own - age(a.backend_xid)) INTO running FROM pg_stat_get_activity(NULL) AS a WHERE a.backend_xid IS NOT NULL;
        RETURN greatest(pg_snapshot_xmax(pg_current_snapshot())::text::bigint, own + 1, running + 1);
      END $$`);
    await q.query(APPEND_OF_TREES_ONE_HORIZON);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE OR REPLACE FUNCTION "osc_append_execution_events_of_trees"(p_roots uuid[], p_counts int[], p_projects varchar[], p_rows jsonb, p_now timestamptz, p_channel text, p_payloads text[])
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          PERFORM "osc_append_execution_events"(p_roots[i], p_counts[i], p_projects[i], p_rows->(i - 1), p_now, p_channel, p_payloads[i]);
        END LOOP;
      END $$`);
    await q.query(`DROP FUNCTION "osc_execution_stream_horizon"`);
  }
}

/** The group append of PackExecutionEvents1765800000000 (packed rows). */
export const APPEND_OF_TREES_PACKED = `
      CREATE OR REPLACE FUNCTION "osc_append_execution_events_of_trees"(p_roots uuid[], p_counts int[], p_projects varchar[], p_rows jsonb, p_now timestamptz, p_channel text, p_payloads text[])
        RETURNS void LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_last bigint[] := '{}';
        v_one bigint;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          INSERT INTO "execution_event_counters" ("root_execution_id", "last_seq") VALUES (p_roots[i], p_counts[i])
            ON CONFLICT ("root_execution_id") DO UPDATE SET "last_seq" = "execution_event_counters"."last_seq" + p_counts[i]
            RETURNING "last_seq" INTO v_one;
          v_last := v_last || v_one;
        END LOOP;
        IF jsonb_path_exists(p_rows, '$[*][*] ? (@.s == "execution")') THEN
          PERFORM pg_advisory_xact_lock_shared(${STREAM_POSITION_LOCK}, 0);
        END IF;
        WITH "u" AS MATERIALIZED (
          SELECT "t"."i", "x"."ord", "x"."v",
                 CASE WHEN "x"."v" ? 'p' THEN jsonb_array_length("x"."v"->'p') ELSE 1 END AS "n",
                 CASE WHEN "x"."v"->>'s' = 'execution' THEN nextval('execution_stream_pos') END AS "pos"
            FROM generate_subscripts(p_roots, 1) AS "t"("i")
            CROSS JOIN LATERAL jsonb_array_elements(p_rows->("t"."i" - 1)) WITH ORDINALITY AS "x"("v", "ord")
           ORDER BY "t"."i", "x"."ord"
        ),
        "e" AS (
          SELECT "u".*, sum("u"."n") OVER (PARTITION BY "u"."i" ORDER BY "u"."ord") AS "upto" FROM "u"
        ),
        "h" AS MATERIALIZED (
          SELECT CASE WHEN "c"."n" > 0 THEN "osc_execution_stream_horizon"() END AS "horizon"
            FROM (SELECT count("pos") AS "n" FROM "u") AS "c"
        )
        INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
            "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at", "stream_pos", "stream_horizon",
            "last_seq", "entries")
          SELECT p_roots["e"."i"], v_last["e"."i"] - p_counts["e"."i"] + "e"."upto" - "e"."n" + 1, ("e"."v"->>'x')::uuid, p_projects["e"."i"],
                 COALESCE("e"."v"->>'s', 'packed'), ("e"."v"->>'t')::uuid, ("e"."v"->>'a')::uuid, COALESCE("e"."v"->>'n', ''),
                 COALESCE("e"."v"->>'st', ''), "e"."v"->>'ps', "e"."v"->>'si', COALESCE("e"."v"->'d', '{}'::jsonb), p_now,
                 "e"."pos", CASE WHEN "e"."pos" IS NOT NULL THEN "h"."horizon" END,
                 CASE WHEN "e"."v" ? 'p' THEN v_last["e"."i"] - p_counts["e"."i"] + "e"."upto" END, "e"."v"->'p'
            FROM "e" CROSS JOIN "h";
        FOR i IN 1 .. coalesce(array_length(p_roots, 1), 0) LOOP
          PERFORM pg_notify(p_channel, left(p_payloads[i], -1) || ',"s":' || v_last[i] || '}');
        END LOOP;
      END $$`;

/**
 * Packed history rows (see unitsOf): a run of a tree's task and action entries about one execution,
 * written by one transaction, is one row — `seq` its first entry's number, `last_seq` its last's,
 * `entries` the entries in the append's short form (the row's other columns hold the first entry's
 * execution, and `subject` 'packed') — instead of one row each. Entries about an execution stay rows
 * of their own (they have stream positions), so the project streams read as before. Readers expand
 * packed rows; rows written before keep their form (`last_seq` and `entries` null).
 */
export class PackExecutionEvents1765800000000 implements MigrationInterface {
  name = 'PackExecutionEvents1765800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE "execution_events" ADD COLUMN "last_seq" bigint, ADD COLUMN "entries" jsonb`);
    await q.query(APPEND_OF_TREES_PACKED);
  }

  async down(q: QueryRunner): Promise<void> {
    // packed rows cannot be read by the code before this migration: unpack them
    await q.query(`
      INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "task_execution_id",
          "action_execution_id", "name", "state", "previous_state", "state_info", "details", "created_at")
        SELECT "r"."root_execution_id", "r"."seq" + "x"."ord" - 1, COALESCE(("x"."v"->>'x')::uuid, "r"."execution_id"), "r"."project_id", "x"."v"->>'s',
               ("x"."v"->>'t')::uuid, ("x"."v"->>'a')::uuid, "x"."v"->>'n', "x"."v"->>'st', "x"."v"->>'ps', "x"."v"->>'si',
               COALESCE("x"."v"->'d', '{}'::jsonb), "r"."created_at"
          FROM "execution_events" AS "r"
          CROSS JOIN LATERAL jsonb_array_elements("r"."entries") WITH ORDINALITY AS "x"("v", "ord")
         WHERE "r"."entries" IS NOT NULL AND "x"."ord" > 1`);
    await q.query(`
      UPDATE "execution_events" AS "r" SET "subject" = "r"."entries"->0->>'s', "task_execution_id" = ("r"."entries"->0->>'t')::uuid,
             "action_execution_id" = ("r"."entries"->0->>'a')::uuid, "name" = "r"."entries"->0->>'n', "state" = "r"."entries"->0->>'st',
             "previous_state" = "r"."entries"->0->>'ps', "state_info" = "r"."entries"->0->>'si',
             "details" = COALESCE("r"."entries"->0->'d', '{}'::jsonb)
       WHERE "r"."entries" IS NOT NULL`);
    await q.query(APPEND_OF_TREES_ONE_HORIZON);
    await q.query(`ALTER TABLE "execution_events" DROP COLUMN "entries", DROP COLUMN "last_seq"`);
  }
}
