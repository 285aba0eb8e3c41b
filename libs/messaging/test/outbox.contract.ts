import 'reflect-metadata';
import { fork } from 'node:child_process';
import path from 'node:path';
import type { DataSource, EntityManager } from 'typeorm';
import { InvalidInputError, TransientError } from '@osc/errors';
import type { CommandBus, CommandMessage } from '../src/command-bus';
import { InProcessCommandBus } from '../src/in-process-command-bus';
import { InProcessJobQueue } from '../src/in-process-job-queue';
import type { Job } from '../src/job-queue';
import { OutboxEntity } from '../src/outbox/outbox.entity';
import { OutboxRelay } from '../src/outbox/outbox-relay';
import { OutboxWriter, type OutboxItem } from '../src/outbox/outbox-writer';
import { deferred, sleep, waitFor } from './support';

const quiet = { warn: () => undefined, error: () => undefined };

/** A bus that records what it was asked to publish, in call order. */
class RecordingBus implements CommandBus {
  readonly published: Array<{ queue: string; msg: CommandMessage }> = [];
  failNext = 0;
  async publish(queue: string, msg: CommandMessage | CommandMessage[]): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new TransientError('broker unreachable');
    }
    for (const m of Array.isArray(msg) ? msg : [msg]) this.published.push({ queue, msg: m });
    await sleep(1); // let other relays interleave
  }
  consume(): never {
    throw new Error('not used');
  }
  async ping() {
    return true;
  }
  async close(): Promise<void> {
    this.published.length = 0;
  }
}

export interface OutboxHarness {
  /** A migrated data source (outbox + a `widget(id text primary key, state text)` table), shared by the tests. */
  dataSource(): DataSource;
  /** Connection URL another process can use to reach the same database (PostgreSQL only). */
  childProcessUrl?: string;
  /** True when the engine runs one transaction at a time (PGlite): a second one waits for the first. */
  serializesTransactions?: boolean;
}

/** The outbox behaviour every database engine must show. */
export function outboxContract(h: OutboxHarness): void {
  const writer = new OutboxWriter();
  let ds: DataSource;

  beforeEach(async () => {
    ds = h.dataSource();
    await ds.query(`DELETE FROM "outbox"`);
    await ds.query(`DELETE FROM "widget"`);
  });

  const outboxCount = async () => Number((await ds.query(`SELECT count(*)::int AS n FROM "outbox"`))[0].n);
  const command = (id: string, payload: unknown = {}, partitionKey?: string): OutboxItem => ({
    destination: 'bus',
    queue: 'engine',
    message: { id, type: 'engine.start', payload, headers: { 'x-request-id': `r-${id}` } },
    partitionKey,
  });

  it('applies the migration as declared by the entity (no pending schema change)', async () => {
    const log = await ds.driver.createSchemaBuilder().log();
    const outboxChanges = log.upQueries.filter((q) => q.query.includes('"outbox"'));
    expect(outboxChanges.map((q) => q.query)).toEqual([]);
  });

  it('delivers a message recorded with a state change only after the commit', async () => {
    const bus = new InProcessCommandBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), { logger: quiet });
    const got: CommandMessage[] = [];
    await bus.consume('engine', async (m) => void got.push(m));
    const inTx = deferred();
    const finish = deferred();
    const tx = ds.transaction(async (em: EntityManager) => {
      await em.query(`INSERT INTO "widget" VALUES ('w1', 'RUNNING')`);
      await writer.add(em, command('c1', { widget: 'w1' }));
      inTx.resolve();
      await finish.promise;
    });
    await inTx.promise;
    if (!h.serializesTransactions) {
      expect(await relay.relayPending()).toBe(0); // uncommitted rows are invisible to the relay
    }
    finish.resolve();
    await tx;
    expect(await relay.relayPending()).toBe(1);
    await waitFor('delivery', () => got.length === 1);
    expect(got[0]).toEqual({
      id: 'c1',
      type: 'engine.start',
      payload: { widget: 'w1' },
      headers: { 'x-request-id': 'r-c1' },
    });
    expect(await outboxCount()).toBe(0);
    await bus.close();
  });

  it('delivers nothing when the transaction rolls back', async () => {
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), { logger: quiet });
    let notified = 0;
    const off = writer.onCommitted(() => notified++);
    await expect(
      ds.transaction(async (em) => {
        await em.query(`INSERT INTO "widget" VALUES ('w2', 'RUNNING')`);
        await writer.add(em, command('c2'));
        throw new Error('business rule failed');
      }),
    ).rejects.toThrow('business rule failed');
    off();
    expect(await relay.relayPending()).toBe(0);
    expect(bus.published).toEqual([]);
    expect(await outboxCount()).toBe(0);
    expect(notified).toBe(0);
  });

  it('wakes the relay right after commit through onCommitted → notify (no polling needed)', async () => {
    const bus = new InProcessCommandBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      logger: quiet,
    });
    const off = writer.onCommitted(() => relay.notify());
    const got: Array<{ id: string; at: number }> = [];
    await bus.consume('engine', async (m) => void got.push({ id: m.id, at: Date.now() }));
    await relay.start();
    await sleep(50); // the first pass found nothing; now the relay sleeps for a minute unless notified
    const committedAt = await ds.transaction(async (em) => {
      await writer.add(em, [command('c3', {}, 'exec-1'), command('c4', {}, 'exec-1')]);
      return Date.now();
    });
    await waitFor('both messages', () => got.length === 2, 5000);
    expect(got.map((g) => g.id)).toEqual(['c3', 'c4']);
    expect(got[1]!.at - committedAt).toBeLessThan(1000);
    off();
    await relay.stop();
    await bus.close();
  });

  // (not on a database of one connection: no second relay can hold a partition meanwhile)
  if (!h.serializesTransactions)
    it('looks again soon, not at the next poll, after skipping a partition another relay held', async () => {
      const bus = new InProcessCommandBus();
      const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
        pollIntervalMs: 60_000,
        logger: quiet,
      });
      const off = writer.onCommitted(() => relay.notify());
      const got: string[] = [];
      await bus.consume('engine', async (m) => void got.push(m.id));
      await relay.start();
      await sleep(50); // the first pass found nothing; now the relay sleeps for a minute unless notified
      // "another relay" holds the partition's lock through its pass
      const holding = deferred();
      const release = deferred();
      const other = ds.transaction(async (em) => {
        await em.query(`SELECT pg_advisory_xact_lock(hashtext('outbox:exec-held'))`);
        holding.resolve();
        await release.promise;
      });
      await holding.promise;
      await ds.transaction((em) => writer.add(em, command('c-held', {}, 'exec-held')));
      await sleep(200);
      expect(got).toEqual([]); // skipped while held
      release.resolve();
      await other;
      await waitFor('the skipped row', () => got.length === 1, 10_000);
      expect(got).toEqual(['c-held']);
      off();
      await relay.stop();
      await bus.close();
    });

  it('notifies once, after the outermost commit, when rows are added in nested transactions', async () => {
    let notified = 0;
    const off = writer.onCommitted(() => notified++);
    const seen: number[] = [];
    await ds.transaction(async (em) => {
      await writer.add(em, command('n1'));
      await em.transaction(async (inner) => {
        await writer.add(inner, command('n2'));
      });
      seen.push(notified); // after the savepoint is released: nothing committed yet
      await em
        .transaction(async (inner) => {
          await writer.add(inner, command('n3'));
          throw new Error('inner failure');
        })
        .catch(() => undefined);
      seen.push(notified); // after the savepoint rolled back: n1 and n2 still pending
    });
    off();
    expect(seen).toEqual([0, 0]);
    expect(notified).toBe(1);
    const ids = (await ds.query(`SELECT "payload"->>'id' AS id FROM "outbox" ORDER BY "seq"`)).map(
      (r: { id: string }) => r.id,
    );
    expect(ids).toEqual(['n1', 'n2']);
  });

  it('hands rows without a partition key to the relay after the commit: published and deleted without a claim', async () => {
    const handing = new OutboxWriter();
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      logger: quiet,
    });
    let notified = 0;
    handing.onCommitted(() => notified++);
    const handed: string[][] = [];
    handing.onHandOff((rows) => {
      handed.push(rows.map((r) => (r.payload as CommandMessage).id));
      relay.handOff(rows);
    });
    const inTx = deferred();
    const finish = deferred();
    const tx = ds.transaction(async (em) => {
      await handing.add(em, [command('h1', { n: 1 }), command('h2')]);
      await em.transaction((inner) => handing.add(inner, command('h3')));
      inTx.resolve();
      await finish.promise;
    });
    await inTx.promise;
    expect(handed).toEqual([]); // nothing before the commit
    finish.resolve();
    await tx;
    expect(handed).toEqual([['h1', 'h2', 'h3']]);
    await waitFor(
      'hand-off published and deleted',
      async () => bus.published.length === 3 && (await outboxCount()) === 0,
    );
    expect(bus.published.map((p) => p.msg)).toEqual([
      { id: 'h1', type: 'engine.start', payload: { n: 1 }, headers: { 'x-request-id': 'r-h1' } },
      { id: 'h2', type: 'engine.start', payload: {}, headers: { 'x-request-id': 'r-h2' } },
      { id: 'h3', type: 'engine.start', payload: {}, headers: { 'x-request-id': 'r-h3' } },
    ]);
    expect(notified).toBe(0); // the relay had no pass to make
    await relay.stop();
  });

  it('deletes the rows a hand-off published with the next INSERT, and keeps them when that transaction rolls back', async () => {
    const handing = new OutboxWriter();
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      deleteDelayMs: 60_000,
      logger: quiet,
    });
    handing.onHandOff((rows) => relay.handOff(rows), relay.published);
    const remaining = async () =>
      (await ds.query(`SELECT "payload"->>'id' AS id FROM "outbox" ORDER BY "seq"`)).map(
        (r: { id: string }) => r.id,
      );
    await ds.transaction((em) => handing.add(em, command('d1')));
    await waitFor('d1 published', async () => relay.published.waiting === 1);
    expect(bus.published.map((p) => p.msg.id)).toEqual(['d1']);
    expect(await remaining()).toEqual(['d1']); // its DELETE waits for the next INSERT
    let inside: string[] = [];
    await ds
      .transaction(async (em) => {
        await handing.add(em, command('d2'));
        inside = (await em.query(`SELECT "payload"->>'id' AS id FROM "outbox"`)).map(
          (r: { id: string }) => r.id,
        );
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(inside).toEqual(['d2']); // d2's INSERT deleted d1
    expect(relay.published.waiting).toBe(1);
    expect(await remaining()).toEqual(['d1']); // the rollback undid the DELETE: d1 waits again
    await ds.transaction(async (em) => {
      await handing.add(em, command('d3'));
      await em
        .transaction(async (inner) => {
          await handing.add(inner, command('d4'));
          throw new Error('savepoint rolled back');
        })
        .catch(() => undefined);
    });
    // the savepoint's rollback went to the relay (d3's lease lifted), d1 was deleted by d3's INSERT
    expect(await remaining()).toEqual(['d3']);
    expect(relay.published.waiting).toBe(1); // d1 again: deleting it twice is harmless
    // d3's lease is lifted right after the commit; then a relay pass publishes it
    await waitFor('d3 relayed', async () => (await relay.relayPending()) === 1);
    await relay.stop();
    expect(bus.published.map((p) => p.msg.id)).toEqual(['d1', 'd3']);
    expect(await remaining()).toEqual([]);
  });

  it("writes addAlong's rows and the carried DELETE in the caller's statement, with add's leases and bookkeeping", async () => {
    const handing = new OutboxWriter();
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      deleteDelayMs: 60_000,
      logger: quiet,
    });
    let notified = 0;
    handing.onCommitted(() => notified++);
    handing.onHandOff((rows) => relay.handOff(rows), relay.published);
    const remaining = async () =>
      (await ds.query(`SELECT "payload"->>'id' AS id FROM "outbox" ORDER BY "seq"`)).map(
        (r: { id: string }) => r.id,
      );
    /** One statement: the widget row and what `writes` gives, as CTEs (as `applyChangesOfMany`). */
    const statements: string[] = [];
    const along =
      (em: EntityManager, widget: string, extra = '') =>
      async (writes?: (bind: (value: unknown) => string) => string[]): Promise<string> => {
        const values: unknown[] = [widget];
        const parts = [
          `INSERT INTO "widget" VALUES ($1, 'RUNNING')`,
          ...(writes?.((v) => `$${values.push(v)}`) ?? []),
        ];
        const sql = `WITH ${parts.map((q, i) => `w${i} AS (${q})`).join(', ')} SELECT 1${extra}`;
        statements.push(sql);
        await em.query(sql, values);
        return widget;
      };
    await ds.transaction((em) => handing.add(em, command('d1')));
    await waitFor('d1 published', async () => relay.published.waiting === 1);

    // rolled back: the rows are gone, the DELETE undone, d1 waits again
    let inside: { id: string; leased: boolean }[] = [];
    await ds
      .transaction(async (em) => {
        expect(await handing.addAlong(em, [command('a1'), command('a2')], along(em, 'wa'))).toBe('wa');
        inside = await em.query(
          `SELECT "payload"->>'id' AS id, "claimable_at" > now() AS leased FROM "outbox" ORDER BY "seq"`,
        );
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/INSERT INTO "outbox".*DELETE FROM "outbox"/s);
    expect(inside).toEqual([
      { id: 'a1', leased: true },
      { id: 'a2', leased: true },
    ]); // leased for the hand-off; d1 deleted by the same statement
    expect(relay.published.waiting).toBe(1);
    expect(await remaining()).toEqual(['d1']);

    // the statement fails: d1 waits again, nothing is handed off
    await ds
      .transaction(async (em) => {
        await handing.addAlong(em, [command('a3')], along(em, 'wb', ' FROM "no_such_table"'));
      })
      .catch(() => undefined);
    expect(relay.published.waiting).toBe(1);
    expect(await remaining()).toEqual(['d1']);

    // committed: handed off after the commit (published, then waiting for the next INSERT's DELETE)
    statements.length = 0;
    await ds.transaction(async (em) => {
      await handing.addAlong(em, [command('a4'), command('a5')], along(em, 'wc'));
    });
    expect(statements).toHaveLength(1);
    expect(await remaining()).toEqual(['a4', 'a5']);
    await waitFor('a4 and a5 handed off', async () => relay.published.waiting === 2);
    expect(bus.published.map((p) => p.msg.id)).toEqual(['d1', 'a4', 'a5']);
    expect(notified).toBe(0);

    // a partitioned row: no lease, the relay is told after the commit; a4 and a5 deleted with it
    await ds.transaction(async (em) => {
      await handing.addAlong(em, [command('p1', {}, 'exec-p')], along(em, 'wd'));
    });
    expect(notified).toBe(1);
    expect(relay.published.waiting).toBe(0);
    expect(
      await ds.query(`SELECT "payload"->>'id' AS id, "claimable_at" IS NULL AS free FROM "outbox"`),
    ).toEqual([{ id: 'p1', free: true }]);
    expect(await ds.query(`SELECT "id" FROM "widget" ORDER BY "id"`)).toEqual([{ id: 'wc' }, { id: 'wd' }]);

    // a run that wrote no statement with them, or no transaction: add writes them
    await ds.transaction(async (em) => {
      await handing.addAlong(em, [command('x1', {}, 'exec-x')], async () => undefined);
    });
    let got: unknown = 'not called';
    await handing.addAlong(ds.manager, [command('x2', {}, 'exec-x')], async (writes) => {
      got = writes;
    });
    expect(got).toBeUndefined();
    expect(await remaining()).toEqual(['p1', 'x1', 'x2']);
    await relay.stop();
  });

  it('leaves to the relay the transactions with partitioned rows or a rolled-back savepoint', async () => {
    const handing = new OutboxWriter();
    let notified = 0;
    handing.onCommitted(() => notified++);
    const handed: string[] = [];
    handing.onHandOff((rows) => handed.push(...rows.map((r) => (r.payload as CommandMessage).id)));
    await ds.transaction((em) => handing.add(em, [command('p1'), command('p2', {}, 'exec-p')]));
    expect(notified).toBe(1);
    await ds.transaction(async (em) => {
      await handing.add(em, command('s1'));
      await em
        .transaction(async (inner) => {
          await handing.add(inner, command('s2'));
          throw new Error('inner failure');
        })
        .catch(() => undefined);
    });
    // told once the rows' hand-off lease is lifted, right after the commit
    await waitFor('the relay was told of the savepoint case', async () => notified === 2);
    await handing.add(ds.manager, command('o1')); // outside a transaction: handed off at once
    expect(handed).toEqual(['o1']);
    const ids = (await ds.query(`SELECT "payload"->>'id' AS id FROM "outbox" ORDER BY "seq"`)).map(
      (r: { id: string }) => r.id,
    );
    expect(ids).toEqual(['p1', 'p2', 's1', 'o1']);
  });

  it('lets no relay pass take a row whose hand-off is under way, and takes it once its lease passes', async () => {
    const handing = new OutboxWriter();
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      logger: quiet,
    });
    const held: string[] = [];
    handing.onHandOff((rows) => held.push(...rows.map((r) => r.id))); // a hand-off that never finishes
    await ds.transaction((em) => handing.add(em, [command('l1'), command('l2')]));
    await writer.add(ds.manager, command('free')); // written by a writer without hand-off: claimable
    expect(held).toHaveLength(2);
    expect(await relay.relayPending()).toBe(1); // a pass woken meanwhile leaves the leased rows alone
    expect(bus.published.map((p) => p.msg.id)).toEqual(['free']);
    expect(await outboxCount()).toBe(2);
    // the writer died before its hand-off: once the lease has passed, a relay publishes the rows
    await ds.query(`UPDATE "outbox" SET "claimable_at" = now() - interval '1 second'`);
    expect(await relay.relayPending()).toBe(2);
    expect(bus.published.map((p) => p.msg.id)).toEqual(['free', 'l1', 'l2']);
    expect(await outboxCount()).toBe(0);
  });

  it('lifts the lease of rows a transaction meant to hand off when it also writes rows for the relay', async () => {
    const handing = new OutboxWriter();
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      logger: quiet,
    });
    const handed: string[] = [];
    handing.onHandOff((rows) => handed.push(...rows.map((r) => r.id)));
    await ds.transaction(async (em) => {
      await handing.add(em, command('m1'));
      await handing.add(em, command('m2', {}, 'exec-m'));
    });
    expect(handed).toEqual([]);
    expect(await relay.relayPending()).toBe(2);
    expect(bus.published.map((p) => p.msg.id)).toEqual(['m1', 'm2']);
    // a savepoint rolled back: what is left goes to the relay, its lease lifted after the commit
    let notified = 0;
    handing.onCommitted(() => notified++);
    await ds.transaction(async (em) => {
      await handing.add(em, command('r1'));
      await em
        .transaction(async (inner) => {
          await handing.add(inner, command('r2'));
          throw new Error('inner failure');
        })
        .catch(() => undefined);
    });
    await waitFor('the relay was told', async () => notified === 1);
    expect(handed).toEqual([]);
    expect(await relay.relayPending()).toBe(1);
    expect(bus.published.map((p) => p.msg.id)).toEqual(['m1', 'm2', 'r1']);
  });

  it('keeps handed-off rows that could not be published and wakes the relay for them', async () => {
    const handing = new OutboxWriter();
    const bus = new RecordingBus();
    bus.failNext = 1;
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), {
      pollIntervalMs: 60_000,
      logger: quiet,
    });
    handing.onCommitted(() => relay.notify());
    handing.onHandOff((rows) => relay.handOff(rows));
    await relay.start();
    await sleep(50); // the first pass found nothing; now the relay sleeps for a minute unless notified
    await ds.transaction((em) => handing.add(em, [command('f1'), command('f2')]));
    await waitFor(
      'the relay published the rows the hand-off could not',
      async () => bus.published.length === 2 && (await outboxCount()) === 0,
      5000,
    );
    expect(bus.published.map((p) => p.msg.id)).toEqual(['f1', 'f2']);
    await relay.stop();
  });

  it('falls back to polling for rows committed elsewhere', async () => {
    const bus = new RecordingBus();
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), { pollIntervalMs: 50, logger: quiet });
    await relay.start();
    await sleep(20);
    await writer.add(ds.manager, command('c5')); // outside a transaction: committed at once
    await waitFor('polled delivery', () => bus.published.length === 1);
    await relay.stop();
  });

  it('routes job rows to the job queue, deduplicated by job id', async () => {
    const jobs = new InProcessJobQueue();
    const relay = new OutboxRelay(ds, new RecordingBus(), jobs, { logger: quiet });
    const ran: Job[] = [];
    await jobs.process('actions', async (j) => void ran.push(j));
    await ds.transaction(async (em) => {
      await writer.add(em, [
        {
          destination: 'jobs',
          queue: 'actions',
          job: { id: 'ae:1', name: 'action.run', data: { x: 1 }, attempts: 3 },
        },
        { destination: 'jobs', queue: 'actions', job: { id: 'ae:1', name: 'action.run', data: { x: 1 } } },
      ]);
    });
    expect(await relay.relayPending()).toBe(2);
    await waitFor('job ran', () => ran.length === 1);
    await sleep(50);
    expect(ran).toEqual([{ id: 'ae:1', name: 'action.run', data: { x: 1 }, attempt: 1 }]);
    await jobs.close();
  });

  it('keeps rows when publishing fails and delivers them on the next pass', async () => {
    const bus = new RecordingBus();
    bus.failNext = 1;
    const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), { logger: quiet });
    await writer.add(ds.manager, [command('c6'), command('c7')]);
    await expect(relay.relayPending()).rejects.toBeInstanceOf(TransientError);
    expect(await outboxCount()).toBe(2);
    expect(await relay.relayPending()).toBe(2);
    expect(bus.published.map((p) => p.msg.id)).toEqual(['c6', 'c7']);
  });

  it('keeps per-partition order and delivers every row once with several relays at once', async () => {
    // Several rounds: a reordering needs an unlucky interleaving of the relays' transactions.
    let roundsSharedByRelays = 0;
    for (let round = 0; round < 8; round++) {
      const counts = await relayConcurrently(round);
      if (counts.filter((c) => c > 0).length > 1) roundsSharedByRelays++;
    }
    expect(roundsSharedByRelays).toBeGreaterThan(0); // the relays really did run side by side
  });

  async function relayConcurrently(round: number): Promise<number[]> {
    const bus = new RecordingBus();
    const partitions = ['exec-a', 'exec-b', 'exec-c', 'exec-d'];
    const items: OutboxItem[] = [];
    for (let i = 0; i < 400; i++) {
      const p = i % 5 === 4 ? undefined : partitions[i % 4];
      items.push(command(`o-${round}-${i}`, { p: p ?? null, i }, p));
    }
    // several transactions, so seq order is also commit order
    for (let k = 0; k < items.length; k += 50) {
      await ds.transaction((em) => writer.add(em, items.slice(k, k + 50)));
    }
    const relays = [0, 1, 2, 3].map(
      () => new OutboxRelay(ds, bus, new InProcessJobQueue(), { batchSize: 15, logger: quiet }),
    );
    const counts = await Promise.all(relays.map((r) => r.relayPending()));
    // a relay stops when it finds less than a batch (others hold the rest): finish the remainder
    const rest = await relays[0]!.relayPending();
    expect(counts.reduce((a, b) => a + b, 0) + rest).toBe(400);
    const ids = bus.published.map((p) => p.msg.id);
    expect(new Set(ids).size).toBe(400);
    expect(ids).toHaveLength(400);
    for (const p of partitions) {
      const seqs = bus.published
        .map((x) => x.msg.payload as { p: string | null; i: number })
        .filter((x) => x.p === p)
        .map((x) => x.i);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(seqs).toHaveLength(100 - 20);
    }
    expect(await outboxCount()).toBe(0);
    return counts;
  }

  // Needs a second process on the same database: PostgreSQL only (PGlite's crash test is its own).
  if (h.childProcessUrl) {
    it('still delivers when the relay process dies between claiming committed rows and publishing them', async () => {
      const url = h.childProcessUrl!;
      await ds.transaction(async (em) => {
        await em.query(`INSERT INTO "widget" VALUES ('w9', 'RUNNING')`);
        await writer.add(em, [command('crash-1', {}, 'exec-z'), command('crash-2', {}, 'exec-z')]);
      });
      const child = fork(path.join(__dirname, 'outbox-relay-child.ts'), [url], {
        execArgv: ['-r', '@swc-node/register'],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const claimed = await new Promise<{ claimed?: string[]; error?: string }>((resolve, reject) => {
        child.once('message', (m) => resolve(m as { claimed?: string[] }));
        child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
      });
      expect(claimed).toEqual({ claimed: ['crash-1', 'crash-2'], queue: 'engine' });

      // While the child holds the rows, another relay cannot take them (and so cannot reorder them).
      const bus = new RecordingBus();
      const relay = new OutboxRelay(ds, bus, new InProcessJobQueue(), { logger: quiet });
      expect(await relay.relayPending()).toBe(0);

      child.kill('SIGKILL');
      await exited;
      await waitFor('rows released by the dead relay', async () => (await relay.relayPending()) > 0, 10_000);
      expect(bus.published.map((p) => p.msg.id)).toEqual(['crash-1', 'crash-2']);
      expect(await outboxCount()).toBe(0);
    });
  }

  it('rejects invalid items inside the caller transaction', async () => {
    await expect(
      ds.transaction((em) =>
        writer.add(em, { destination: 'bus', queue: 'engine', message: { id: '', type: 't', payload: 1 } }),
      ),
    ).rejects.toBeInstanceOf(InvalidInputError);
    await expect(
      ds.transaction((em) =>
        writer.add(em, { destination: 'jobs', queue: 'a:b', job: { name: 'x', data: null } }),
      ),
    ).rejects.toBeInstanceOf(InvalidInputError);
    expect(await outboxCount()).toBe(0);
  });

  it('maps rows through the entity', async () => {
    await writer.add(ds.manager, command('e1', { k: 1 }, 'p1'));
    const [row] = await ds.getRepository(OutboxEntity).find();
    expect(row).toMatchObject({
      destination: 'bus',
      queue: 'engine',
      partitionKey: 'p1',
      payload: { id: 'e1', payload: { k: 1 } },
    });
    expect(row!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(typeof row!.seq).toBe('string');
    expect(row!.createdAt).toBeInstanceOf(Date);
  });
}
