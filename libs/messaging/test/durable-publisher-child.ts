/**
 * Embedded mode's crash after a direct publish: the executor has published its
 * `engine.action-completed` (and a timer job was added), nobody has handled them yet, and the
 * process is killed. Run by durable-in-process.int-spec.ts.
 */
import 'reflect-metadata';
import { createDataSource } from '@osc/persistence';
import { InProcessCommandBus } from '../src/in-process-command-bus';
import { InProcessJobQueue } from '../src/in-process-job-queue';
import { MessageJournal } from '../src/journal/message-journal';
import { outboxEntities } from '../src/outbox/outbox.entity';
import { messagingMigrations } from '../src/outbox/outbox.migration';

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (!dataDir) throw new Error('usage: durable-publisher-child <data dir>');
  const ds = await createDataSource({ kind: 'pglite', dataDir }, outboxEntities, messagingMigrations);
  const journal = new MessageJournal(ds);
  const bus = new InProcessCommandBus({ journal });
  const jobs = new InProcessJobQueue({ journal });
  await bus.publish('engine', {
    id: 'action-completed:a-1',
    type: 'engine.action-completed',
    payload: { state: 'SUCCESS' },
  });
  await jobs.add('timers', { id: 'timer:t-1', name: 'timer.fire', data: { timerId: 't-1' } });
  process.send?.({ published: true });
  await new Promise(() => undefined); // killed here: no consumer ever saw them
}

main().catch((e: unknown) => {
  process.send?.({ error: String(e) });
  process.exit(2);
});
