import 'reflect-metadata';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDataSource, createTestDataSource, type TestDataSource } from '@osc/persistence';
import type { CommandMessage } from '../src/command-bus';
import { InProcessCommandBus } from '../src/in-process-command-bus';
import { InProcessJobQueue } from '../src/in-process-job-queue';
import { outboxEntities } from '../src/outbox/outbox.entity';
import { messagingMigrations } from '../src/outbox/outbox.migration';
import { OutboxRelay } from '../src/outbox/outbox-relay';
import { outboxContract } from './outbox.contract';
import { waitFor } from './support';

/** The same outbox contract on the embedded engine (PGlite through @osc/persistence's driver). */
describe('transactional outbox on PGlite', () => {
  jest.setTimeout(60_000);
  let db: TestDataSource;

  beforeAll(async () => {
    db = await createTestDataSource('pglite', { entities: outboxEntities, migrations: messagingMigrations });
    await db.dataSource.query(`CREATE TABLE "widget" ("id" text PRIMARY KEY, "state" text NOT NULL)`);
  });

  afterAll(async () => {
    await db?.cleanup();
  });

  outboxContract({ dataSource: () => db.dataSource, serializesTransactions: true });

  it('delivers after a restart what a killed embedded process committed but never published', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-outbox-'));
    try {
      const child = fork(path.join(__dirname, 'outbox-pglite-writer-child.ts'), [dataDir], {
        execArgv: ['-r', '@swc-node/register'],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const report = await new Promise<{ committed?: boolean; error?: string }>((resolve, reject) => {
        child.once('message', (m) => resolve(m as { committed?: boolean }));
        child.once('exit', (code) => reject(new Error(`child exited early with ${code}`)));
      });
      expect(report).toEqual({ committed: true });
      child.kill('SIGKILL');
      await exited;

      // "restart": open the same data folder, start a relay
      const ds = await createDataSource({ kind: 'pglite', dataDir }, outboxEntities, messagingMigrations);
      try {
        expect(await ds.query(`SELECT "state" FROM "widget" WHERE "id" = 'w-embedded'`)).toEqual([
          { state: 'RUNNING' },
        ]);
        const bus = new InProcessCommandBus();
        const got: CommandMessage[] = [];
        await bus.consume('engine', async (m) => void got.push(m));
        const relay = new OutboxRelay(ds, bus, new InProcessJobQueue());
        expect(await relay.relayPending()).toBe(1);
        await waitFor('delivery', () => got.length === 1);
        expect(got[0]).toMatchObject({
          id: 'embedded-1',
          type: 'engine.start',
          payload: { widget: 'w-embedded' },
        });
        expect(await ds.query(`SELECT count(*)::int AS n FROM "outbox"`)).toEqual([{ n: 0 }]);
        await bus.close();
      } finally {
        await ds.destroy();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
