/**
 * A consumer process that dies in the middle of handling a command: it reports the delivery to
 * its parent (IPC) and then hangs until the parent kills it. Run by rabbitmq-command-bus.int-spec.ts.
 */
import { RabbitMqCommandBus } from '../src/rabbitmq-command-bus';

async function main(): Promise<void> {
  const [url, queue] = process.argv.slice(2);
  if (!url || !queue) throw new Error('usage: rabbitmq-consumer-child <amqp url> <queue>');
  const bus = new RabbitMqCommandBus({ url, logger: { warn: () => undefined, error: () => undefined } });
  await bus.consume(queue, async (msg, info) => {
    process.send?.({ id: msg.id, info });
    await new Promise(() => undefined); // never acks: the parent kills us here
  });
  process.send?.({ ready: true });
}

main().catch((e: unknown) => {
  process.send?.({ error: String(e) });
  process.exit(2);
});
