import * as amqplib from 'amqplib';
import { RabbitMqCommandBus } from '../src/rabbitmq-command-bus';
import type { CommandBus } from '../src/command-bus';
import { commandBusContract } from './command-bus.contract';
import { describeWithServer } from './support';

const AMQP_URL = process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const quiet = { warn: () => undefined, error: () => undefined };

describeWithServer(
  'RabbitMqCommandBus (contract)',
  { name: 'RabbitMQ', host: '127.0.0.1', port: 5672 },
  () => {
    jest.setTimeout(60_000);
    let admin: amqplib.ChannelModel;

    beforeAll(async () => {
      admin = await amqplib.connect(AMQP_URL);
    });
    afterAll(async () => {
      await admin.close();
    });

    commandBusContract({
      createBus: async () =>
        new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet, heartbeatIntervalInSeconds: 2 }),
      publishRaw: async (bus, queue, body) => {
        await (bus as RabbitMqCommandBus).messageCount(queue); // declares the topology
        const ch = await admin.createConfirmChannel();
        ch.sendToQueue(queue, Buffer.from(body), { persistent: true, messageId: 'raw-1' });
        await ch.waitForConfirms();
        await ch.close();
      },
      messageCount: (bus, queue) => (bus as RabbitMqCommandBus).messageCount(queue),
      dropConnection: async (bus: CommandBus) => {
        // Cut the TCP connection under the client, as a network failure would.
        const model = (
          bus as unknown as { connection: { connection?: { connection: { stream: { destroy(): void } } } } }
        ).connection.connection;
        if (!model) throw new Error('bus is not connected');
        model.connection.stream.destroy();
      },
      deleteQueues: async (queues) => {
        const ch = await admin.createChannel();
        for (const q of queues) await ch.deleteQueue(q);
        await ch.close();
      },
    });
  },
);
