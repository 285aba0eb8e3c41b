/**
 * A relay process that crashes mid-publish: it claims outbox rows, tells its parent (IPC) which
 * rows it holds, and hangs in `publish` until the parent kills it. Run by outbox.int-spec.ts.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import type { CommandBus } from '../src/command-bus';
import { InProcessJobQueue } from '../src/in-process-job-queue';
import { OutboxEntity } from '../src/outbox/outbox.entity';
import { OutboxRelay } from '../src/outbox/outbox-relay';

async function main(): Promise<void> {
  const url = process.argv[2];
  if (!url) throw new Error('usage: outbox-relay-child <database url>');
  const dataSource = new DataSource({ type: 'postgres', url, entities: [OutboxEntity] });
  await dataSource.initialize();
  const hangingBus: CommandBus = {
    async publish(queue, msg) {
      const ids = (Array.isArray(msg) ? msg : [msg]).map((m) => m.id);
      process.send?.({ claimed: ids, queue });
      await new Promise(() => undefined); // the broker never confirms: the process dies here
    },
    consume: () => Promise.reject(new Error('not used')),
    ping: async () => true,
    close: async () => undefined,
  };
  const relay = new OutboxRelay(dataSource, hangingBus, new InProcessJobQueue());
  await relay.relayPending();
}

main().catch((e: unknown) => {
  process.send?.({ error: String(e) });
  process.exit(2);
});
