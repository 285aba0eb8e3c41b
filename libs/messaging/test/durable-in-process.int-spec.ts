import 'reflect-metadata';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { InvalidInputError, TransientError } from '@osc/errors';
import { createDataSource, createTestDataSource, type TestDataSource } from '@osc/persistence';
import type { CommandMessage, DeliveryInfo } from '../src/command-bus';
import { InProcessCommandBus } from '../src/in-process-command-bus';
import { InProcessJobQueue } from '../src/in-process-job-queue';
import type { Job } from '../src/job-queue';
import { MessageJournal } from '../src/journal/message-journal';
import { outboxEntities } from '../src/outbox/outbox.entity';
import { messagingMigrations } from '../src/outbox/outbox.migration';
import { OutboxRelay } from '../src/outbox/outbox-relay';
import { OutboxWriter } from '../src/outbox/outbox-writer';
import { commandBusContract } from './command-bus.contract';
import { jobQueueContract } from './job-queue.contract';
import { waitFor } from './support';

const quiet = { warn: () => undefined, error: () => undefined };

/**
 * Embedded mode's durable adapters: the in-process bus and queue with a `message_journal` on
 * PGlite. They keep the port contracts, and what they hold survives the process: a "restart" here
 * is a new adapter on the same database while the old one is abandoned mid-work (its memory is
 * lost as with kill -9); the child-process test below kills a real process.
 */
describe('durable in-process adapters on PGlite', () => {
  jest.setTimeout(60_000);
  let db: TestDataSource;
  let ds: DataSource;
  const abandoned: Array<{ close(): Promise<void> }> = [];

  beforeAll(async () => {
    db = await createTestDataSource('pglite', { entities: outboxEntities, migrations: messagingMigrations });
    ds = db.dataSource;
  });

  afterAll(async () => {
    await db?.cleanup();
  });

  const journalCount = async (kind?: 'bus' | 'jobs'): Promise<number> =>
    Number(
      (
        (await ds.query(
          kind
            ? `SELECT count(*)::int AS n FROM "message_journal" WHERE "kind" = $1`
            : `SELECT count(*)::int AS n FROM "message_journal"`,
          kind ? [kind] : [],
        )) as Array<{ n: number }>
      )[0]?.n,
    );

  const newBus = async (): Promise<InProcessCommandBus> => {
    const bus = new InProcessCommandBus({ journal: new MessageJournal(ds, quiet) });
    await bus.restore();
    return bus;
  };
  const newQueue = async (): Promise<InProcessJobQueue> => {
    const jobs = new InProcessJobQueue({ journal: new MessageJournal(ds, quiet) });
    await jobs.restore();
    return jobs;
  };

  describe('bus (contract)', () => {
    beforeEach(() => ds.query(`DELETE FROM "message_journal"`));
    commandBusContract({
      createBus: newBus,
      publishRaw: (bus, queue, body) => (bus as InProcessCommandBus).publishRaw(queue, body),
      messageCount: (bus, queue) => (bus as InProcessCommandBus).messageCount(queue),
      dropConnection: async (bus) => (bus as InProcessCommandBus).simulateConnectionLoss(),
      deleteQueues: async () => undefined,
    });
  });

  describe('job queue (contract)', () => {
    beforeEach(() => ds.query(`DELETE FROM "message_journal"`));
    jobQueueContract({ createQueue: newQueue, cleanup: async () => undefined });
  });

  describe('across a restart', () => {
    beforeEach(() => ds.query(`DELETE FROM "message_journal"`));
    afterEach(async () => {
      // the "crashed" adapters: their handlers may still hang; nothing of theirs is awaited
      abandoned.length = 0;
    });

    it('redelivers an unacked message with redelivered: true and forgets it once acked', async () => {
      const first = await newBus();
      const hanging: CommandMessage[] = [];
      await first.publish('cmd', [
        { id: 'm-1', type: 't', payload: { n: 1 }, headers: { 'x-request-id': 'r-1' } },
        { id: 'm-2', type: 't', payload: { n: 2 } },
      ]);
      await first.consume('cmd', async (m) => {
        hanging.push(m);
        await new Promise(() => undefined); // the process dies while handling
      });
      await waitFor('both delivered', () => hanging.length === 2);
      abandoned.push(first);
      expect(await journalCount('bus')).toBe(2);

      const second = await newBus();
      const got: Array<{ msg: CommandMessage; info: DeliveryInfo }> = [];
      await second.consume('cmd', async (msg, info) => void got.push({ msg, info }));
      await waitFor('redelivery', () => got.length === 2);
      expect(got).toEqual([
        {
          msg: { id: 'm-1', type: 't', payload: { n: 1 }, headers: { 'x-request-id': 'r-1' } },
          info: { deliveryCount: 2, redelivered: true },
        },
        {
          msg: { id: 'm-2', type: 't', payload: { n: 2 }, headers: {} },
          info: { deliveryCount: 2, redelivered: true },
        },
      ]);
      await waitFor('journal emptied by the acks', async () => (await journalCount('bus')) === 0);
      await second.close();
    });

    it('continues the delivery count of a message that failed before the restart', async () => {
      const first = await newBus();
      const counts: number[] = [];
      await first.publish('cmd', { id: 'retry-me', type: 't', payload: null });
      await first.consume(
        'cmd',
        async (_m, info) => {
          counts.push(info.deliveryCount);
          if (info.deliveryCount === 1) throw new TransientError('database down');
          await new Promise(() => undefined);
        },
        { retryDelayMs: 0 },
      );
      await waitFor('second delivery', () => counts.length === 2);
      await waitFor(
        'retry recorded',
        async () =>
          Number((await ds.query(`SELECT "deliveries" FROM "message_journal"`))[0]?.deliveries) === 1,
      );

      const second = await newBus();
      const infos: DeliveryInfo[] = [];
      await second.consume('cmd', async (_m, info) => void infos.push(info));
      await waitFor('redelivery', () => infos.length === 1);
      // 1 failed + 1 lost with the process + this one
      expect(infos).toEqual([{ deliveryCount: 3, redelivered: true }]);
      await second.close();
    });

    it('keeps a dead-lettered message across a restart', async () => {
      const first = await newBus();
      let tried = 0;
      await first.publish('cmd', { id: 'bad', type: 't', payload: { x: 1 } });
      await first.consume('cmd', async () => {
        tried++;
        throw new InvalidInputError('not acceptable');
      });
      await waitFor(
        'dead-lettered',
        async () => (await ds.query(`SELECT "queue" FROM "message_journal"`))[0]?.queue === 'cmd.dlq',
      );
      expect(tried).toBe(1);
      await first.close();

      const second = await newBus();
      const dead: CommandMessage[] = [];
      await second.consume('cmd.dlq', async (m) => void dead.push(m));
      await waitFor('dead letter', () => dead.length === 1);
      expect(dead[0]).toMatchObject({
        id: 'bad',
        payload: { x: 1 },
        headers: {
          'x-dead-letter-reason': 'rejected',
          'x-original-queue': 'cmd',
          'x-error': expect.stringContaining('not acceptable'),
        },
      });
      await waitFor('journal emptied', async () => (await journalCount()) === 0);
      await second.close();
    });

    it('keeps a delayed job due at its original time and continues attempt counting', async () => {
      const first = await newQueue();
      const t0 = Date.now();
      await first.add('jobs', { id: 'later', name: 'late', data: { k: 'v' }, delayMs: 1500 });
      await first.add('jobs', { id: 'flaky', name: 'flaky', data: null, attempts: 3 });
      const firstRuns: Job[] = [];
      await first.process(
        'jobs',
        async (j) => {
          firstRuns.push(j);
          if (j.attempt === 1) throw new TransientError('try again');
          await new Promise(() => undefined); // the second attempt is running when the process dies
        },
        { concurrency: 5 },
      );
      await waitFor('flaky attempt 2', () => firstRuns.filter((j) => j.id === 'flaky').length === 2);
      await waitFor(
        'retry state stored',
        async () =>
          Number(
            (await ds.query(`SELECT "deliveries" FROM "message_journal" WHERE "meta"->>'id' = 'flaky'`))[0]
              ?.deliveries,
          ) === 1,
      );
      abandoned.push(first);

      const second = await newQueue();
      const runs = new Map<string, { job: Job; at: number }>();
      await second.process('jobs', async (j) => void runs.set(j.id, { job: j, at: Date.now() }), {
        concurrency: 5,
      });
      await waitFor('both jobs', () => runs.size === 2);
      // 1 failed + 1 lost with the process + this one; the delay runs from the first add, not the restart
      expect(runs.get('flaky')!.job).toEqual({ id: 'flaky', name: 'flaky', data: null, attempt: 3 });
      expect(runs.get('later')!.job).toEqual({ id: 'later', name: 'late', data: { k: 'v' }, attempt: 1 });
      expect(runs.get('later')!.at - t0).toBeGreaterThanOrEqual(1500);
      await waitFor('journal emptied', async () => (await journalCount('jobs')) === 0);
      // a restored id still deduplicates while it is live: added again before it ran, it ran once
      await second.close();
    });

    it('deduplicates a new add against a restored job', async () => {
      const first = await newQueue();
      await first.add('jobs', { id: 'once', name: 'n', data: 1, delayMs: 300 });
      abandoned.push(first);
      const second = await newQueue();
      await second.add('jobs', { id: 'once', name: 'n', data: 2 });
      const seen: unknown[] = [];
      await second.process('jobs', async (j) => void seen.push(j.data));
      await waitFor('the restored job', () => seen.length === 1);
      await second.add('jobs', { id: 'marker', name: 'n', data: 'marker' });
      await waitFor('marker', () => seen.length === 2);
      expect(seen).toEqual([1, 'marker']);
      await second.close();
    });
  });

  describe('through the outbox relay', () => {
    beforeEach(async () => {
      await ds.query(`DELETE FROM "message_journal"`);
      await ds.query(`DELETE FROM "outbox"`);
    });

    it('journals relayed rows in the claim transaction and hands them over after the commit', async () => {
      const bus = new InProcessCommandBus({ journal: new MessageJournal(ds, quiet) });
      const jobs = new InProcessJobQueue({ journal: new MessageJournal(ds, quiet) });
      const writer = new OutboxWriter();
      await ds.transaction((em) =>
        writer.add(em, [
          {
            destination: 'bus',
            queue: 'engine',
            message: { id: 'c-1', type: 'engine.start', payload: { a: 1 } },
          },
          {
            destination: 'jobs',
            queue: 'actions',
            job: { id: 'run-1', name: 'action.run', data: { b: 2 }, delayMs: 60_000 },
          },
        ]),
      );
      const relay = new OutboxRelay(ds, bus, jobs, { logger: quiet });
      // On PGlite a journal write outside the claim transaction would wait for it until the pool's
      // acquire timeout: finishing here shows the relay's EntityManager was used.
      expect(await relay.relayPending()).toBe(2);
      expect(await ds.query(`SELECT "kind", "queue" FROM "message_journal" ORDER BY "seq"`)).toEqual([
        { kind: 'bus', queue: 'engine' },
        { kind: 'jobs', queue: 'actions' },
      ]);
      expect(await ds.query(`SELECT count(*)::int AS n FROM "outbox"`)).toEqual([{ n: 0 }]);
      const got: CommandMessage[] = [];
      await bus.consume('engine', async (m) => void got.push(m));
      await waitFor('delivery', () => got.length === 1);
      expect(got[0]).toMatchObject({ id: 'c-1', payload: { a: 1 } });
      await waitFor('acked message forgotten', async () => (await journalCount('bus')) === 0);
      expect(jobs.waitingCount('actions')).toBe(1);
      await bus.close();
      await jobs.close();
      expect(await journalCount('jobs')).toBe(1); // the delayed job waits for the next start
    });
  });

  describe('outbox writer in direct mode (embedded runtime)', () => {
    beforeEach(() => ds.query(`DELETE FROM "message_journal"`));

    it('journals items with the business transaction, writes no outbox row and hands them over only after the commit', async () => {
      const bus = new InProcessCommandBus({ journal: new MessageJournal(ds, quiet) });
      const jobs = new InProcessJobQueue({ journal: new MessageJournal(ds, quiet) });
      const writer = new OutboxWriter({ bus, jobs });
      const got: CommandMessage[] = [];
      await bus.consume('engine', async (m) => void got.push(m));
      const ran: unknown[] = [];
      await jobs.process('actions', async (j) => void ran.push(j.data));
      let journaledInside = -1;
      await ds.transaction(async (em) => {
        await writer.add(em, [
          {
            destination: 'bus',
            queue: 'engine',
            message: { id: 'c-1', type: 'engine.start', payload: { a: 1 } },
          },
          { destination: 'jobs', queue: 'actions', job: { id: 'run-1', name: 'action.run', data: { b: 2 } } },
          {
            destination: 'bus',
            queue: 'engine',
            message: { id: 'c-2', type: 'engine.start', payload: { a: 2 } },
          },
        ]);
        journaledInside = Number(
          ((await em.query(`SELECT count(*)::int AS n FROM "message_journal"`)) as Array<{ n: number }>)[0]
            ?.n,
        );
        // not before the commit
        await new Promise((r) => setTimeout(r, 50));
        expect(got).toEqual([]);
        expect(ran).toEqual([]);
      });
      expect(journaledInside).toBe(3);
      expect(await ds.query(`SELECT count(*)::int AS n FROM "outbox"`)).toEqual([{ n: 0 }]);
      await waitFor('deliveries', () => got.length === 2 && ran.length === 1);
      expect(got.map((m) => m.id)).toEqual(['c-1', 'c-2']);
      expect(ran).toEqual([{ b: 2 }]);
      await waitFor('journal emptied', async () => (await journalCount()) === 0);
      await bus.close();
      await jobs.close();
    });

    it('journals nothing and hands nothing over when the transaction rolls back, and refuses a bad item inside it', async () => {
      const bus = new InProcessCommandBus({ journal: new MessageJournal(ds, quiet) });
      const jobs = new InProcessJobQueue({ journal: new MessageJournal(ds, quiet) });
      const writer = new OutboxWriter({ bus, jobs });
      const got: CommandMessage[] = [];
      await bus.consume('engine', async (m) => void got.push(m));
      await expect(
        ds.transaction(async (em) => {
          await writer.add(em, {
            destination: 'bus',
            queue: 'engine',
            message: { id: 'c-3', type: 'engine.start', payload: {} },
          });
          throw new Error('business failure');
        }),
      ).rejects.toThrow('business failure');
      await expect(
        ds.transaction((em) =>
          writer.add(em, {
            destination: 'bus',
            queue: 'engine',
            message: { id: 'c-4', type: 'engine.start', payload: {} },
            partitionKey: '',
          }),
        ),
      ).rejects.toThrow(InvalidInputError);
      // a later commit hands over its own items only
      await ds.transaction((em) =>
        writer.add(em, {
          destination: 'bus',
          queue: 'engine',
          message: { id: 'c-5', type: 'engine.start', payload: {} },
        }),
      );
      await waitFor('delivery', () => got.length === 1);
      await new Promise((r) => setTimeout(r, 50));
      expect(got.map((m) => m.id)).toEqual(['c-5']);
      await waitFor('journal emptied', async () => (await journalCount()) === 0);
      await bus.close();
      await jobs.close();
    });
  });

  describe('write batching', () => {
    beforeEach(() => ds.query(`DELETE FROM "message_journal"`));

    it('coalesces concurrent publishes into a few INSERTs and acks into a few DELETEs', async () => {
      const bus = new InProcessCommandBus({ journal: new MessageJournal(ds, quiet) });
      const statements: string[] = [];
      const query = ds.manager.query.bind(ds.manager);
      const spyManager = jest
        .spyOn(ds.manager, 'query')
        .mockImplementation((sql: string, params?: unknown[]) => {
          statements.push(sql);
          return query(sql, params);
        });
      const dsQuery = ds.query.bind(ds);
      const spyDs = jest.spyOn(ds, 'query').mockImplementation((sql: string, params?: unknown[]) => {
        statements.push(sql);
        return dsQuery(sql, params);
      });
      try {
        const n = 300;
        await Promise.all(
          Array.from({ length: n }, (_, i) => bus.publish('many', { id: `m-${i}`, type: 't', payload: i })),
        );
        let acked = 0;
        await bus.consume('many', async () => void acked++, { prefetch: 50 });
        await waitFor('all acked', () => acked === n);
        await waitFor('journal emptied', async () => (await journalCount()) === 0);
        const inserts = statements.filter((s) => s.startsWith('INSERT INTO "message_journal"')).length;
        const deletes = statements.filter((s) => s.startsWith('DELETE FROM "message_journal"')).length;
        expect(inserts).toBeGreaterThanOrEqual(1);
        expect(inserts).toBeLessThanOrEqual(n / 10);
        expect(deletes).toBeGreaterThanOrEqual(1);
        expect(deletes).toBeLessThanOrEqual(n / 10);
      } finally {
        spyManager.mockRestore();
        spyDs.mockRestore();
        await bus.close();
      }
    });

    it('writes the entries asked for in one turn with one INSERT (a batch of jobs added in a loop)', async () => {
      const journal = new MessageJournal(ds, quiet);
      const inserts: string[] = [];
      const query = ds.manager.query.bind(ds.manager);
      const spy = jest.spyOn(ds.manager, 'query').mockImplementation((sql: string, params?: unknown[]) => {
        if (sql.startsWith('INSERT INTO "message_journal"')) inserts.push(sql);
        return query(sql, params);
      });
      try {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            journal.insert([
              {
                id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
                kind: 'jobs',
                queue: 'batch',
                body: '{}',
                meta: null,
                deliveries: 0,
                readyAt: null,
              },
            ]),
          ),
        );
        expect(inserts).toHaveLength(1);
        expect(await journalCount('jobs')).toBe(50);
      } finally {
        spy.mockRestore();
      }
    });
  });

  it('delivers after a restart what a killed process published and never had handled', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-journal-'));
    try {
      const child = fork(path.join(__dirname, 'durable-publisher-child.ts'), [dataDir], {
        execArgv: ['-r', '@swc-node/register'],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const report = await new Promise<{ published?: boolean; error?: string }>((resolve, reject) => {
        child.once('message', (m) => resolve(m as { published?: boolean }));
        child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
      });
      expect(report).toEqual({ published: true });
      child.kill('SIGKILL');
      await exited;

      const restarted = await createDataSource(
        { kind: 'pglite', dataDir },
        outboxEntities,
        messagingMigrations,
      );
      try {
        const journal = new MessageJournal(restarted, quiet);
        const bus = new InProcessCommandBus({ journal });
        const jobs = new InProcessJobQueue({ journal });
        expect(await bus.restore()).toBe(1);
        expect(await jobs.restore()).toBe(1);
        const got: Array<{ msg: CommandMessage; info: DeliveryInfo }> = [];
        await bus.consume('engine', async (msg, info) => void got.push({ msg, info }));
        const ran: Job[] = [];
        await jobs.process('timers', async (j) => void ran.push(j));
        await waitFor('delivery and job', () => got.length === 1 && ran.length === 1);
        expect(got[0]).toEqual({
          msg: {
            id: 'action-completed:a-1',
            type: 'engine.action-completed',
            payload: { state: 'SUCCESS' },
            headers: {},
          },
          info: { deliveryCount: 2, redelivered: true },
        });
        expect(ran[0]).toMatchObject({ id: 'timer:t-1', name: 'timer.fire', data: { timerId: 't-1' } });
        await bus.close();
        await jobs.close();
        expect(await restarted.query(`SELECT count(*)::int AS n FROM "message_journal"`)).toEqual([{ n: 0 }]);
      } finally {
        await restarted.destroy();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    // a child that compiles its sources and creates a fresh PGlite takes long on a loaded machine
  }, 240_000);
});
