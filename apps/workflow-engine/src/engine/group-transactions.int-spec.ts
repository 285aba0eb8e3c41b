import type { DataSource, QueryRunner, ReplicationMode } from 'typeorm';
import { OutboxRelay } from '@osc/messaging';
import {
  EngineInstance,
  createEngineDatabase,
  inProcessMessaging,
  startExecution,
  storeWorkflows,
  waitForState,
} from '../../test/engine-harness';

const WORKFLOWS = `
version: '2.0'
chain:
  tasks:
    a:
      action: std.noop
      on-success: b
    b:
      action: std.noop
      on-success: c
    c:
      action: std.noop
`;

type Client = { query: (...args: unknown[]) => unknown };

/**
 * An engine transaction whose messages need no query is three round trips: START + lock + load, the
 * rows, history and outbox rows (with the DELETE of rows the hand-off published) in one statement,
 * COMMIT. Each transaction's statements are recorded on its connection (`createQueryRunner`).
 */
describe('group transactions: the outbox rows ride on the rows statement (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createEngineDatabase>>;
  let ds: DataSource;
  let engine: EngineInstance;
  let handing: OutboxRelay;
  const transactions: string[][] = [];

  beforeAll(async () => {
    db = await createEngineDatabase();
    ds = db.dataSource;
    await storeWorkflows(ds, WORKFLOWS);
    const create = ds.createQueryRunner.bind(ds);
    ds.createQueryRunner = (mode?: ReplicationMode): QueryRunner => {
      const qr = create(mode);
      const connect = qr.connect.bind(qr);
      const release = qr.release.bind(qr);
      const sent: string[] = [];
      let restore: (() => void) | undefined;
      qr.connect = async () => {
        const client = (await connect()) as Client;
        if (!restore) {
          const query = client.query;
          client.query = function (this: unknown, ...args: unknown[]) {
            const c = args[0];
            sent.push(typeof c === 'string' ? c : String((c as { text?: unknown }).text));
            return query.apply(this, args);
          };
          restore = () => {
            client.query = query;
          };
        }
        return client;
      };
      qr.release = async () => {
        restore?.();
        if (sent.length > 0) transactions.push(sent);
        return release();
      };
      return qr;
    };
    const { bus, jobs } = inProcessMessaging();
    engine = new EngineInstance(ds, bus, jobs, { inlineActions: false });
    // the hand-off's DELETEs wait for the next INSERT (no timer of their own during the test)
    handing = new OutboxRelay(ds, bus, jobs, { pollIntervalMs: 60_000, deleteDelayMs: 60_000 });
    engine.outbox.onHandOff((rows) => handing.handOff(rows), handing.published);
    await engine.start();
  }, 60_000);

  afterAll(async () => {
    await engine?.stop();
    await handing?.stop();
    await db?.drop();
  });

  it('writes the outbox rows and the carried DELETE in the rows statement: 3 round trips', async () => {
    const ids = await Promise.all([1, 2, 3].map(() => startExecution(ds, engine.outbox, 'chain')));
    for (const id of ids) await waitForState(ds, id, ['SUCCESS']);

    // a statement is prepared the first time a session runs it (a look at pg_prepared_statements
    // and the PREPARE), then run by EXECUTE: its text is the PREPARE's
    const preparing = (q: string) =>
      q.startsWith('SELECT "name" FROM pg_prepared_statements') || q.startsWith('PREPARE ');
    const prepared = new Map<string, string>();
    for (const q of transactions.flat().filter((q) => q.startsWith('PREPARE ')))
      for (const p of q.split(/;\n(?=PREPARE )/)) {
        const [, name, text] = /^PREPARE (\w+) AS ([\s\S]*)$/.exec(p)!;
        prepared.set(name!, text!);
      }
    const executed = (q: string) => prepared.get(/EXECUTE (osc_built_\d+)\(/.exec(q)?.[1] ?? '') ?? '';
    // the statements of the snapshot are prepared before START TRANSACTION (outside it, so that a
    // rollback keeps them): on a session's first transaction they come first
    const engineTx = transactions
      .map((t) => t.filter((q) => !preparing(q)))
      .filter((t) => t[0]?.startsWith('START TRANSACTION;'));
    const writing = engineTx.filter((t) => t.some((q) => executed(q).includes('INSERT INTO "outbox"')));
    // start (task a's run), a → b, b → c: three transactions with a run each per execution (or fewer, shared)
    expect(writing.length).toBeGreaterThanOrEqual(3);
    for (const t of writing) {
      expect(t).toHaveLength(3);
      expect(executed(t[1]!)).toMatch(
        /^WITH .*INSERT INTO "action_executions".*INSERT INTO "outbox".*"alongside"/s,
      );
      expect(t[2]).toBe('COMMIT');
    }
    // after the first hand-off, the next transactions carry the DELETE of the rows it published
    expect(writing.filter((t) => executed(t[1]!).includes('DELETE FROM "outbox"')).length).toBeGreaterThan(0);
    // every message was handed off (leased rows: no relay pass took them) and is deleted at the stop
    await handing.published.flush();
    const left: { n: number }[] = await ds.query(`SELECT count(*)::int AS n FROM "outbox"`);
    expect(left[0]!.n).toBe(0);
  }, 60_000);
});
