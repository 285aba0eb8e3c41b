import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import {
  DEFAULT_TEST_POSTGRES_URL,
  ENGINE_KINDS,
  type TestDataSource,
  createTestDataSource,
} from '@osc/persistence';
import {
  type HistoryEvent,
  type WorkflowExecution,
  newExecution,
  parseWorkflows,
} from '@osc/workflow-domain';
import { definitionMigrations } from '../definitions/definitions.migration';
import {
  EXECUTION_EVENTS_CHANNEL,
  appendExecutionEvents,
  appendExecutionEventsOfMany,
  deleteExecutionHistory,
  executionEventsAppendCall,
  listExecutionEvents,
  listExecutionEventsOfTrees,
  listExecutionStateChanges,
  settledStreamPosition,
  STREAM_HORIZON,
} from './execution-events';
import { insertExecution, insertExecutionReturning } from './execution-rows';
import { applyChangesOfMany } from './execution-store';
import { registerStreamListener, stillRunning, unregisterStreamListener } from './run-reads';
import { executionMigrations } from './executions.migration';

const SPEC = parseWorkflows(`
version: '2.0'
wf:
  tasks:
    t:
      action: std.noop
`).workflows[0]!;

const stateChange = (ex: WorkflowExecution, state: string, previous: string): HistoryEvent => ({
  subject: 'execution',
  executionId: ex.id,
  taskExecutionId: null,
  actionExecutionId: null,
  name: ex.workflowName,
  state,
  previousState: previous,
  stateInfo: null,
  details: {},
});

const taskChange = (ex: WorkflowExecution): HistoryEvent => ({
  ...stateChange(ex, 'RUNNING', 'IDLE'),
  subject: 'task',
  taskExecutionId: null,
  name: 't',
});

/** The project streams' reading of the history (listExecutionStateChanges), on both engines. */
describe.each(ENGINE_KINDS)('execution state changes for project streams (%s)', (kind) => {
  let t: TestDataSource;

  beforeAll(async () => {
    t = await createTestDataSource(kind, { migrations: [...definitionMigrations, ...executionMigrations] });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  /** Undoes the migrations from the newest back to `name`, that one included (later ones may be added). */
  const undoThrough = async (name: string): Promise<void> => {
    for (;;) {
      const [last] = (await t.dataSource.query(
        `SELECT "name" FROM "migrations" ORDER BY "timestamp" DESC LIMIT 1`,
      )) as { name: string }[];
      if (!last) throw new Error(`migration ${name} is not applied`);
      await t.dataSource.undoLastMigration();
      if (last.name === name) return;
    }
  };

  /**
   * Reads until nothing is pending: on a shared server, transactions of other databases that had
   * an id when a position was taken hold it back until they end (a few milliseconds).
   */
  const settledChanges = async (projectId: string | null, after: number) => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const page = await listExecutionStateChanges(t.dataSource, projectId, after, 100);
      if (!page.pending) return page;
      if (Date.now() > deadline) throw new Error('changes still pending after 20 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /** The settled position once it has reached the last position taken so far. */
  const settledPosition = async () => {
    const last = Number(
      (await t.dataSource.query(`SELECT max("stream_pos") AS "p" FROM "execution_events"`))[0].p ?? 0,
    );
    const deadline = Date.now() + 20_000;
    for (;;) {
      const p = await settledStreamPosition(t.dataSource);
      if (p >= last) return p;
      if (Date.now() > deadline) throw new Error('position not settled after 20 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  const create = async (projectId: string): Promise<WorkflowExecution> => {
    const ex = newExecution(
      { id: randomUUID(), spec: SPEC, workflowId: randomUUID(), workflowNamespace: '', projectId },
      new Date(),
    );
    await t.dataSource.transaction((em) => insertExecution(em, ex));
    return ex;
  };

  it('streams only execution entries, by project, in position order, each once after a position', async () => {
    const before = await settledPosition();
    const a = await create('p-a');
    const b = await create('p-b');
    await t.dataSource.transaction((em) =>
      appendExecutionEvents(em, a, [taskChange(a), stateChange(a, 'SUCCESS', 'RUNNING')], new Date()),
    );
    const ofA = await settledChanges('p-a', before);
    expect(ofA.pending).toBe(false);
    expect(
      ofA.changes.map((c) => [c.execution_id, c.subject, c.previous_state, c.state, c.project_id]),
    ).toEqual([
      [a.id, 'execution', null, a.state, 'p-a'],
      [a.id, 'execution', 'RUNNING', 'SUCCESS', 'p-a'],
    ]);
    expect(ofA.changes[1]!.position).toBeGreaterThan(ofA.changes[0]!.position);
    const all = await settledChanges(null, before);
    expect(all.changes.map((c) => c.execution_id)).toEqual([a.id, b.id, a.id]);
    const after = await settledChanges(null, all.changes[1]!.position);
    expect(after.changes).toEqual([all.changes[2]]);
    expect(await settledPosition()).toBe(all.changes[2]!.position);
  });

  it("appends a group's trees in one call: each tree numbered from its own counter, its execution entries streamed", async () => {
    const before = await settledPosition();
    const a = await create('p-g');
    const b = await create('p-g');
    const written = await t.dataSource.transaction((em) =>
      appendExecutionEventsOfMany(
        em,
        [
          { ex: b, events: [taskChange(b), stateChange(b, 'SUCCESS', 'RUNNING')] },
          { ex: a, events: [] },
          { ex: a, events: [stateChange(a, 'ERROR', 'RUNNING')] },
        ],
        new Date(),
      ),
    );
    expect(written).toEqual([2, 0, 1]);
    const ofA = await listExecutionEvents(t.dataSource, a, 0, 10);
    expect(ofA.map((e) => [e.seq, e.subject, e.previous_state, e.state])).toEqual([
      [1, 'execution', null, a.state],
      [2, 'execution', 'RUNNING', 'ERROR'],
    ]);
    const ofB = await listExecutionEvents(t.dataSource, b, 0, 10);
    expect(ofB.map((e) => [e.seq, e.subject, e.state])).toEqual([
      [1, 'execution', b.state],
      [2, 'task', 'RUNNING'],
      [3, 'execution', 'SUCCESS'],
    ]);
    const streamed = await settledChanges('p-g', before);
    expect(streamed.changes.map((c) => [c.execution_id, c.state])).toEqual(
      // created a, created b, then the group's trees in root id order
      [
        [a.id, a.state],
        [b.id, b.state],
        ...(a.id < b.id
          ? [
              [a.id, 'ERROR'],
              [b.id, 'SUCCESS'],
            ]
          : [
              [b.id, 'SUCCESS'],
              [a.id, 'ERROR'],
            ]),
      ],
    );
  });

  /** A runner that counts the statements it passes on. */
  const counting = (db: { query(sql: string, parameters?: unknown[]): Promise<any> }) => {
    const runner = {
      statements: 0,
      query(sql: string, parameters?: unknown[]): Promise<any> {
        runner.statements++;
        return db.query(sql, parameters);
      },
    };
    return runner;
  };

  it("writes a new execution's creation entry in its insert's statement, only when the row was inserted", async () => {
    const ex = newExecution(
      { id: randomUUID(), spec: SPEC, workflowId: randomUUID(), workflowNamespace: '', projectId: 'p-i' },
      new Date(),
    );
    const first = counting(t.dataSource);
    const row = await insertExecutionReturning(
      first,
      ex,
      {},
      (_bind, inserted) => `SELECT 1 WHERE ${inserted}`,
    );
    expect(row?.['id']).toBe(ex.id);
    expect(first.statements).toBe(1);
    // a second create of the same id inserts nothing, and appends nothing
    const again = counting(t.dataSource);
    expect(await insertExecution(again, ex)).toBe(false);
    expect(again.statements).toBe(1);
    const entries = await listExecutionEvents(t.dataSource, ex, 0, 10);
    expect(entries.map((e) => [e.seq, e.subject, e.execution_id, e.previous_state, e.state])).toEqual([
      [1, 'execution', ex.id, null, ex.state],
    ]);
  });

  it("writes a group's history in the statement of its rows, or alone when there are no rows", async () => {
    const a = await create('p-r');
    const b = await create('p-r');
    const none = { tasksCreated: [], tasksUpdated: [], actionsCreated: [], actionsUpdated: [] };
    const done = { ...a, state: 'SUCCESS' as const, updatedAt: new Date() };
    let statements = 0;
    await t.dataSource.transaction(async (em) => {
      const inTx = counting(em);
      await applyChangesOfMany(
        inTx,
        [{ ex: done, changes: { ...none, execution: done } }],
        (bind) =>
          executionEventsAppendCall(
            [
              { ex: done, events: [stateChange(done, 'SUCCESS', 'RUNNING')] },
              { ex: b, events: [taskChange(b)] },
            ],
            new Date(),
            bind,
          ).call,
      );
      await applyChangesOfMany(
        inTx,
        [{ ex: b, changes: none }],
        (bind) => executionEventsAppendCall([{ ex: b, events: [taskChange(b)] }], new Date(), bind).call,
      );
      statements = inTx.statements;
    });
    expect(statements).toBe(2);
    const rows = await t.dataSource.query(`SELECT "state" FROM "workflow_executions" WHERE "id" = $1`, [
      a.id,
    ]);
    expect(rows[0].state).toBe('SUCCESS');
    expect((await listExecutionEvents(t.dataSource, a, 0, 10)).map((e) => [e.seq, e.state])).toEqual([
      [1, a.state],
      [2, 'SUCCESS'],
    ]);
    expect((await listExecutionEvents(t.dataSource, b, 0, 10)).map((e) => [e.seq, e.subject])).toEqual([
      [1, 'execution'],
      [2, 'task'],
      [3, 'task'],
    ]);
  });

  it("packs a transaction's runs of task and action entries into one row each, and reads them back entry by entry from any marker", async () => {
    const a = await create('p-pack');
    const sub = { id: randomUUID(), rootExecutionId: a.id, projectId: 'p-pack' };
    const task = (x: { id: string }, name: string): HistoryEvent => ({
      ...taskChange(a),
      executionId: x.id,
      taskExecutionId: randomUUID(),
      name,
      details: { taskName: name },
    });
    const action = (x: { id: string }, name: string): HistoryEvent => ({
      ...task(x, name),
      subject: 'action',
      actionExecutionId: randomUUID(),
      previousState: null,
      stateInfo: 'why',
    });
    await t.dataSource.transaction((em) =>
      appendExecutionEventsOfMany(
        em,
        [
          {
            ex: a,
            events: [stateChange(a, 'RUNNING', 'IDLE'), task(a, 't1'), action(a, 'a1'), task(a, 't2')],
          },
          { ex: sub, events: [task(sub, 's1'), action(sub, 's2')] },
          { ex: a, events: [task(a, 't3'), stateChange(a, 'SUCCESS', 'RUNNING')] },
        ],
        new Date(),
      ),
    );
    await t.dataSource.transaction((em) => appendExecutionEvents(em, sub, [task(sub, 's3')], new Date()));
    const rows = await t.dataSource.query(
      `SELECT "seq", "last_seq" FROM "execution_events" WHERE "root_execution_id" = $1 ORDER BY "seq"`,
      [a.id],
    );
    // the creation's entry, then RUNNING, [t1 a1 t2], [s1 s2], t3, SUCCESS, s3: seven rows for ten entries
    expect(
      rows.map((r: { seq: string; last_seq: string | null }) => [
        Number(r.seq),
        r.last_seq && Number(r.last_seq),
      ]),
    ).toEqual([
      [1, null],
      [2, null],
      [3, 5],
      [6, 7],
      [8, null],
      [9, null],
      [10, null],
    ]);
    const all = await listExecutionEvents(t.dataSource, a, 0, 100);
    expect(all.map((e) => [e.seq, e.subject, e.name, e.execution_id === sub.id ? 'sub' : 'root'])).toEqual([
      [1, 'execution', a.workflowName, 'root'],
      [2, 'execution', a.workflowName, 'root'],
      [3, 'task', 't1', 'root'],
      [4, 'action', 'a1', 'root'],
      [5, 'task', 't2', 'root'],
      [6, 'task', 's1', 'sub'],
      [7, 'action', 's2', 'sub'],
      [8, 'task', 't3', 'root'],
      [9, 'execution', a.workflowName, 'root'],
      [10, 'task', 's3', 'sub'],
    ]);
    const a1 = all[3]!;
    expect([a1.state, a1.previous_state, a1.state_info, a1.details, a1.root_execution_id]).toEqual([
      'RUNNING',
      null,
      'why',
      { taskName: 'a1' },
      a.id,
    ]);
    expect(all[2]!.created_at).toBe(all[1]!.created_at);
    for (let marker = 0; marker <= 10; marker++) {
      for (const limit of [1, 2, 3, 100]) {
        const want = all.filter((e) => e.seq > marker).slice(0, limit);
        expect(await listExecutionEvents(t.dataSource, a, marker, limit)).toEqual(want);
        const trees = await listExecutionEventsOfTrees(t.dataSource, [{ root: a.id, after: marker }], limit);
        expect(trees.get(a.id) ?? []).toEqual(want);
        const ofSub = all.filter((e) => e.execution_id === sub.id && e.seq > marker).slice(0, limit);
        expect(await listExecutionEvents(t.dataSource, sub, marker, limit)).toEqual(ofSub);
      }
    }
    await t.dataSource.transaction((em) => deleteExecutionHistory(em, [sub]));
    expect((await listExecutionEvents(t.dataSource, a, 0, 100)).map((e) => e.seq)).toEqual([
      1, 2, 3, 4, 5, 8, 9,
    ]);
  });

  it('stores packed entries without their execution or null values, and still reads rows packed with them', async () => {
    const a = await create('p-compact');
    const tid = randomUUID();
    const aid = randomUUID();
    await t.dataSource.transaction((em) =>
      appendExecutionEvents(
        em,
        a,
        [
          { ...taskChange(a), taskExecutionId: tid },
          {
            ...taskChange(a),
            subject: 'action',
            taskExecutionId: tid,
            actionExecutionId: aid,
            name: 'std.noop',
            previousState: null,
            details: { taskName: 't' },
          },
        ],
        new Date(),
      ),
    );
    const [row] = await t.dataSource.query(
      `SELECT "seq", "execution_id", "entries" FROM "execution_events" WHERE "root_execution_id" = $1 AND "entries" IS NOT NULL`,
      [a.id],
    );
    expect(row.execution_id).toBe(a.id);
    expect(row.entries).toEqual([
      { s: 'task', n: 't', st: 'RUNNING', ps: 'IDLE', t: tid },
      { s: 'action', n: 'std.noop', st: 'RUNNING', t: tid, a: aid, d: { taskName: 't' } },
    ]);
    // a row packed before (every entry names its execution, null values written out)
    const old = [
      { x: a.id, s: 'task', t: tid, a: null, n: 't', st: 'SUCCESS', ps: 'RUNNING', si: null, d: {} },
      {
        x: a.id,
        s: 'action',
        t: tid,
        a: aid,
        n: 'std.noop',
        st: 'SUCCESS',
        ps: 'RUNNING',
        si: 'ok',
        d: { taskName: 't' },
      },
    ];
    const next = Number(row.seq) + 2;
    await t.dataSource.query(
      `INSERT INTO "execution_events" ("root_execution_id", "seq", "execution_id", "project_id", "subject", "name", "state", "details", "created_at", "last_seq", "entries")
         VALUES ($1, $2, $1, 'p-compact', 'packed', '', '', '{}', now(), $3, $4::jsonb)`,
      [a.id, next, next + 1, JSON.stringify(old)],
    );
    const all = await listExecutionEvents(t.dataSource, a, 0, 100);
    const shape = (e: (typeof all)[number]) => [
      e.seq,
      e.execution_id,
      e.subject,
      e.task_execution_id,
      e.action_execution_id,
      e.name,
      e.state,
      e.previous_state,
      e.state_info,
      e.details,
    ];
    expect(all.slice(-4).map(shape)).toEqual([
      [next - 2, a.id, 'task', tid, null, 't', 'RUNNING', 'IDLE', null, {}],
      [next - 1, a.id, 'action', tid, aid, 'std.noop', 'RUNNING', null, null, { taskName: 't' }],
      [next, a.id, 'task', tid, null, 't', 'SUCCESS', 'RUNNING', null, {}],
      [next + 1, a.id, 'action', tid, aid, 'std.noop', 'SUCCESS', 'RUNNING', 'ok', { taskName: 't' }],
    ]);
  });

  it('gives every execution entry of an append a position of its own, one horizon for the whole statement', async () => {
    const before = await settledPosition();
    const a = await create('p-h');
    const b = await create('p-h');
    await t.dataSource.transaction((em) =>
      appendExecutionEventsOfMany(
        em,
        [
          {
            ex: a,
            events: [stateChange(a, 'PAUSED', 'RUNNING'), taskChange(a), stateChange(a, 'RUNNING', 'PAUSED')],
          },
          { ex: b, events: [stateChange(b, 'SUCCESS', 'RUNNING')] },
        ],
        new Date(),
      ),
    );
    const rows: {
      execution_id: string;
      state: string;
      stream_pos: string;
      horizon: string;
      stored: string | null;
      xact: string;
    }[] = await t.dataSource.query(
      `SELECT "execution_id", "state", "stream_pos", ${STREAM_HORIZON} AS "horizon", "stream_horizon" AS "stored",
              "stream_xact" AS "xact"
         FROM "execution_events"
        WHERE "execution_id" = ANY($1::uuid[]) AND "seq" > 1 AND "stream_pos" IS NOT NULL ORDER BY "stream_pos"`,
      [[a.id, b.id]],
    );
    expect(rows).toHaveLength(3);
    expect(new Set(rows.map((r) => r.stream_pos)).size).toBe(3);
    // one subtransaction inserted them all: its id, above the transaction's own, is their horizon
    expect(new Set(rows.map((r) => r.horizon)).size).toBe(1);
    expect(new Set(rows.map((r) => r.xact)).size).toBe(1);
    expect(rows.every((r) => r.stored === null && BigInt(r.horizon) > BigInt(r.xact))).toBe(true);
    const [first] = [a, b].sort((x, y) => (x.id < y.id ? -1 : 1));
    const streamed = await settledChanges('p-h', before);
    expect(streamed.changes.slice(2).map((c) => [c.execution_id, c.state])).toEqual(
      first === a
        ? [
            [a.id, 'PAUSED'],
            [a.id, 'RUNNING'],
            [b.id, 'SUCCESS'],
          ]
        : [
            [b.id, 'SUCCESS'],
            [a.id, 'PAUSED'],
            [a.id, 'RUNNING'],
          ],
    );
    // a reader that stops between the two entries of one append misses neither
    const one = await listExecutionStateChanges(t.dataSource, 'p-h', before, 3);
    const rest = await settledChanges('p-h', one.changes[one.changes.length - 1]!.position);
    expect([...one.changes, ...rest.changes].map((c) => c.position)).toEqual(
      streamed.changes.map((c) => c.position),
    );
  });

  it("writes a root's creation entry without a counter: the tree's first append counts on from it, and so do the functions before once undone", async () => {
    const counter = async (root: string): Promise<number | null> => {
      const rows = await t.dataSource.query(
        `SELECT "last_seq" FROM "execution_event_counters" WHERE "root_execution_id" = $1`,
        [root],
      );
      return rows[0] ? Number(rows[0].last_seq) : null;
    };
    const a = await create('p-c');
    const b = await create('p-c');
    expect([await counter(a.id), await counter(b.id)]).toEqual([null, null]);
    const sub = { ...a, id: randomUUID(), rootExecutionId: a.id };
    await t.dataSource.transaction((em) =>
      appendExecutionEventsOfMany(
        em,
        [
          { ex: sub, events: [taskChange(sub), taskChange(sub)] },
          { ex: a, events: [stateChange(a, 'SUCCESS', 'RUNNING')] },
        ],
        new Date(),
      ),
    );
    expect(await counter(a.id)).toBe(4);
    expect((await listExecutionEvents(t.dataSource, a, 0, 10)).map((e) => [e.seq, e.subject])).toEqual([
      [1, 'execution'],
      [2, 'task'],
      [3, 'task'],
      [4, 'execution'],
    ]);
    // undone, the migration gives b its counter; the append before it counts on from there (the
    // migrations after it undone first)
    await undoThrough('AppendCreationWithoutCounter1765900000000');
    try {
      expect([await counter(a.id), await counter(b.id)]).toEqual([4, 1]);
      await t.dataSource.transaction((em) => appendExecutionEvents(em, b, [taskChange(b)], new Date()));
      expect((await listExecutionEvents(t.dataSource, b, 0, 10)).map((e) => e.seq)).toEqual([1, 2]);
    } finally {
      await t.dataSource.runMigrations();
    }
  });

  it('undone, the subtransaction horizon is stored as derived, and the scanning append writes on', async () => {
    const a = await create('p-undo-h');
    await t.dataSource.transaction((em) =>
      appendExecutionEvents(em, a, [stateChange(a, 'RUNNING', 'IDLE'), taskChange(a)], new Date()),
    );
    const horizons = async () =>
      (
        await t.dataSource.query(
          `SELECT "stream_horizon" AS "stored", ${STREAM_HORIZON} AS "horizon" FROM "execution_events"
            WHERE "root_execution_id" = $1 AND "stream_pos" IS NOT NULL ORDER BY "seq"`,
          [a.id],
        )
      ).map((r: { stored: string | null; horizon: string }): [string | null, string] => [
        r.stored,
        r.horizon,
      ]);
    const derived: [string | null, string][] = await horizons();
    expect(derived.map(([stored]) => stored)).toEqual([null, null]);
    // the migrations after it undone first
    await undoThrough('StreamHorizonFromSubtransaction1766000000000');
    try {
      expect(
        await t.dataSource.query(
          `SELECT "stream_horizon" AS "h" FROM "execution_events" WHERE "root_execution_id" = $1 AND "stream_pos" IS NOT NULL ORDER BY "seq"`,
          [a.id],
        ),
      ).toEqual(derived.map(([, h]) => ({ h })));
      // the append of the migration before computes and stores its horizon again
      await t.dataSource.transaction((em) =>
        appendExecutionEvents(em, a, [stateChange(a, 'SUCCESS', 'RUNNING')], new Date()),
      );
      const [last] = await t.dataSource.query(
        `SELECT "stream_horizon" AS "h" FROM "execution_events" WHERE "root_execution_id" = $1 ORDER BY "seq" DESC LIMIT 1`,
        [a.id],
      );
      expect(BigInt(last.h)).toBeGreaterThan(BigInt(derived[1]![1]));
    } finally {
      await t.dataSource.runMigrations();
    }
  });

  if (kind === 'postgres') {
    it('announces each tree of a group once with its last sequence number, trees in root id order whatever the queue order', async () => {
      const x = await create('p-n');
      const y = await create('p-n');
      const [low, high] = x.id < y.id ? [x, y] : [y, x];
      const listener = new Client({ connectionString: (t.dataSource.options as { url?: string }).url });
      await listener.connect();
      const heard: { r: string; s: number }[] = [];
      listener.on('notification', (n) =>
        heard.push(JSON.parse(n.payload ?? 'null') as { r: string; s: number }),
      );
      await listener.query(`LISTEN "${EXECUTION_EVENTS_CHANNEL}"`);
      const listenerId = randomUUID();
      await registerStreamListener(t.dataSource, listenerId, 60);
      try {
        // the queue order puts the higher root first: its counter would be locked first (the
        // announcements of a transaction arrive in the order they were made)
        await t.dataSource.transaction((em) =>
          appendExecutionEventsOfMany(
            em,
            [
              { ex: high, events: [taskChange(high), taskChange(high)] },
              { ex: low, events: [taskChange(low)] },
            ],
            new Date(),
          ),
        );
        const deadline = Date.now() + 5_000;
        while (heard.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect(heard.map((h) => [h.r, h.s])).toEqual([
          [low.id, 2],
          [high.id, 3],
        ]);
      } finally {
        await unregisterStreamListener(t.dataSource, listenerId);
        await listener.end();
      }
    });

    it('announces only while a listener is registered and unexpired; a registration names the transactions that may have missed it', async () => {
      const x = await create('p-l');
      const listener = new Client({ connectionString: (t.dataSource.options as { url?: string }).url });
      await listener.connect();
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      await listener.query(`LISTEN "${EXECUTION_EVENTS_CHANNEL}"`);
      const append = () =>
        t.dataSource.transaction((em) =>
          appendExecutionEventsOfMany(em, [{ ex: x, events: [taskChange(x)] }], new Date()),
        );
      /** Appends, then waits for what an announcement would need to arrive (a marker NOTIFY sent after it). */
      const heardAfterAppend = async () => {
        heard.length = 0;
        await append();
        await t.dataSource.query(`SELECT pg_notify($1, 'marker')`, [EXECUTION_EVENTS_CHANNEL]);
        const deadline = Date.now() + 5_000;
        while (!heard.includes('marker') && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 10));
        return heard.filter((h) => h !== 'marker').length;
      };
      const a = randomUUID();
      const b = randomUUID();
      // a writer that is running (its id assigned) while the registration commits
      const writer = t.dataSource.createQueryRunner();
      await writer.connect();
      try {
        expect(await heardAfterAppend()).toBe(0);
        await writer.startTransaction();
        const [{ xid }] = await writer.query(`SELECT pg_current_xact_id()::text AS "xid"`);
        const missed = await registerStreamListener(t.dataSource, a, 60);
        expect(missed).toContain(xid);
        expect(await stillRunning(t.dataSource, missed)).toContain(xid);
        await writer.commitTransaction();
        expect(await stillRunning(t.dataSource, [xid])).toEqual([]);
        expect(await heardAfterAppend()).toBe(1);
        // a second registration, then the first gone: still announced
        await registerStreamListener(t.dataSource, b, 60);
        await unregisterStreamListener(t.dataSource, a);
        expect(await heardAfterAppend()).toBe(1);
        // expired: nothing announced, and the next registration removes it
        await t.dataSource.query(
          `UPDATE "execution_stream_listeners" SET "expires_at" = now() - interval '2 minutes' WHERE "id" = $1`,
          [b],
        );
        expect(await heardAfterAppend()).toBe(0);
        await registerStreamListener(t.dataSource, a, 60);
        expect(
          (
            await t.dataSource.query(`SELECT "id" FROM "execution_stream_listeners" WHERE "id" IN ($1, $2)`, [
              a,
              b,
            ])
          ).map((r: { id: string }) => r.id),
        ).toEqual([a]);
        // a creation's entry is announced by the same rule
        heard.length = 0;
        await create('p-l');
        await t.dataSource.query(`SELECT pg_notify($1, 'marker')`, [EXECUTION_EVENTS_CHANNEL]);
        const deadline = Date.now() + 5_000;
        while (!heard.includes('marker') && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 10));
        expect(heard.filter((h) => h !== 'marker')).toHaveLength(1);
        await unregisterStreamListener(t.dataSource, a);
        heard.length = 0;
        await create('p-l');
        await t.dataSource.query(`SELECT pg_notify($1, 'marker')`, [EXECUTION_EVENTS_CHANNEL]);
        while (!heard.includes('marker') && Date.now() < deadline + 5_000)
          await new Promise((r) => setTimeout(r, 10));
        expect(heard.filter((h) => h !== 'marker')).toHaveLength(0);
      } finally {
        if (writer.isTransactionActive) await writer.rollbackTransaction();
        await writer.release();
        await unregisterStreamListener(t.dataSource, a);
        await unregisterStreamListener(t.dataSource, b);
        await listener.end();
      }
    });

    it('holds a committed change back while a transaction older than its position runs, then hands out both in position order', async () => {
      const before = await settledPosition();
      const slow = await create('p-c');
      const fast = await create('p-c');
      const start = await settledPosition();
      expect(start).toBeGreaterThan(before);
      // `slow` takes its position first and stays open; `fast` takes a later one and commits first
      const older = t.dataSource.createQueryRunner();
      await older.connect();
      await older.startTransaction();
      try {
        await older.query(`SELECT "id" FROM "workflow_executions" WHERE "id" = $1 FOR UPDATE`, [slow.id]);
        await appendExecutionEvents(
          older.manager,
          slow,
          [stateChange(slow, 'PAUSED', 'RUNNING')],
          new Date(),
        );
        await t.dataSource.transaction((em) =>
          appendExecutionEvents(em, fast, [stateChange(fast, 'SUCCESS', 'RUNNING')], new Date()),
        );
        const held = await listExecutionStateChanges(t.dataSource, 'p-c', start, 100);
        expect(held).toEqual({ changes: [], pending: true });
        // a position reached while the older transaction runs is not settled either
        expect(await settledStreamPosition(t.dataSource)).toBe(start);
        await older.commitTransaction();
      } finally {
        if (older.isTransactionActive) await older.rollbackTransaction();
        await older.release();
      }
      const both = await settledChanges('p-c', start);
      expect(both.pending).toBe(false);
      expect(both.changes.map((c) => [c.execution_id, c.state])).toEqual([
        [slow.id, 'PAUSED'],
        [fast.id, 'SUCCESS'],
      ]);
    });

    it('a transaction that took no stream position holds nothing back, however long it has had an id', async () => {
      const ex = await create('p-d');
      const start = await settledPosition();
      // an unrelated transaction with an id (an outbox claim, a task-only engine step), open while a change commits
      const unrelated = t.dataSource.createQueryRunner();
      await unrelated.connect();
      await unrelated.startTransaction();
      try {
        await unrelated.query(`SELECT pg_current_xact_id()`);
        await t.dataSource.transaction((em) =>
          appendExecutionEvents(em, ex, [stateChange(ex, 'SUCCESS', 'RUNNING')], new Date()),
        );
        // settled while the unrelated transaction still runs
        expect((await settledChanges('p-d', start)).changes.map((c) => c.state)).toEqual(['SUCCESS']);
        expect(await unrelated.query(`SELECT 1 AS "open"`)).toEqual([{ open: 1 }]);
      } finally {
        await unrelated.rollbackTransaction();
        await unrelated.release();
      }
    });

    it('a transaction of another database on the same server holds nothing back', async () => {
      const ex = await create('p-e');
      const start = await settledPosition();
      const elsewhere = new Client({ connectionString: DEFAULT_TEST_POSTGRES_URL });
      await elsewhere.connect();
      try {
        await elsewhere.query('BEGIN');
        await elsewhere.query('SELECT pg_current_xact_id()');
        await t.dataSource.transaction((em) =>
          appendExecutionEvents(em, ex, [stateChange(ex, 'SUCCESS', 'RUNNING')], new Date()),
        );
        // settled while the other database's transaction still runs
        expect((await settledChanges('p-e', start)).changes.map((c) => c.state)).toEqual(['SUCCESS']);
      } finally {
        await elsewhere.query('ROLLBACK').catch(() => undefined);
        await elsewhere.end();
      }
    });
  }
});
