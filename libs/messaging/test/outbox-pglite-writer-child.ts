/**
 * Embedded mode's crash: a process commits a state change and its outbox row to a PGlite data
 * folder, reports the commit to its parent (IPC), and is killed before any relay publishes.
 * Run by outbox-pglite.int-spec.ts.
 */
import 'reflect-metadata';
import { createDataSource } from '@osc/persistence';
import { outboxEntities } from '../src/outbox/outbox.entity';
import { messagingMigrations } from '../src/outbox/outbox.migration';
import { OutboxWriter } from '../src/outbox/outbox-writer';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('usage: outbox-pglite-writer-child <data dir>');
  const ds = await createDataSource({ kind: 'pglite', dataDir }, outboxEntities, messagingMigrations);
  await ds.query(`CREATE TABLE "widget" ("id" text PRIMARY KEY, "state" text NOT NULL)`);
  const writer = new OutboxWriter();
  await ds.transaction(async (em) => {
    await em.query(`INSERT INTO "widget" VALUES ('w-embedded', 'RUNNING')`);
    await writer.add(em, {
      destination: 'bus',
      queue: 'engine',
      message: { id: 'embedded-1', type: 'engine.start', payload: { widget: 'w-embedded' } },
      partitionKey: 'w-embedded',
    });
  });
  process.send?.({ committed: true });
  await new Promise(() => undefined); // killed here, before any relay ran
}

main().catch((e: unknown) => {
  process.send?.({ error: String(e) });
  process.exit(2);
});
