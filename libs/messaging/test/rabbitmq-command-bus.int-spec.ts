import { fork } from 'node:child_process';
import path from 'node:path';
import * as amqplib from 'amqplib';
import { RabbitMqCommandBus } from '../src/rabbitmq-command-bus';
import type { CommandBus } from '../src/command-bus';
import { commandBusContract } from './command-bus.contract';
import { InternalError, TransientError } from '@osc/errors';
import { describeWithServer, uniqueName, waitFor } from './support';

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
          bus as unknown as {
            connection: { connection?: { connection: { stream: { destroy(error?: Error): void } } } };
          }
        ).connection.connection;
        if (!model) throw new Error('bus is not connected');
        model.connection.stream.destroy(new Error('simulated network failure'));
      },
      deleteQueues: async (queues) => {
        const ch = await admin.createChannel();
        for (const q of queues) await ch.deleteQueue(q);
        await ch.close();
      },
    });

    it("sends without Nagle's algorithm (a confirm would otherwise wait for the broker's delayed ACK)", async () => {
      const bus = new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet });
      const queue = uniqueName('nodelay');
      try {
        await bus.messageCount(queue); // connects (and declares the queue)
        const model = (bus as unknown as { connection: { connection?: { connection: { stream: object } } } })
          .connection.connection;
        if (!model) throw new Error('bus is not connected');
        const socket = model.connection.stream as Record<symbol, unknown>;
        // Node keeps what setNoDelay set under an internal symbol (no public getter)
        const flag = Object.getOwnPropertySymbols(socket).find((x) => x.description === 'kSetNoDelay');
        expect(flag).toBeDefined();
        expect(socket[flag!]).toBe(true);
      } finally {
        await bus.close();
        const ch = await admin.createChannel();
        for (const q of [queue, `${queue}.dlq`]) await ch.deleteQueue(q);
        await ch.close();
      }
    });

    it('redelivers to another process the message whose consumer process was killed before acking', async () => {
      const queue = uniqueName('crash');
      const child = fork(path.join(__dirname, 'rabbitmq-consumer-child.ts'), [AMQP_URL, queue], {
        execArgv: ['-r', '@swc-node/register'],
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      const messages: Array<Record<string, unknown>> = [];
      child.on('message', (m) => messages.push(m as Record<string, unknown>));
      const bus = new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet });
      try {
        await waitFor('child consumer ready', () => messages.some((m) => m['ready'] || m['error']), 20_000);
        expect(messages.find((m) => m['error'])).toBeUndefined();
        await bus.publish(queue, { id: 'crash-1', type: 'engine.start', payload: { n: 1 } });
        await waitFor('child got the message', () => messages.some((m) => m['id'] === 'crash-1'), 20_000);
        expect(messages.find((m) => m['id'] === 'crash-1')!['info']).toEqual({
          deliveryCount: 1,
          redelivered: false,
        });

        const got: Array<{ id: string; deliveryCount: number; redelivered: boolean }> = [];
        await bus.consume(queue, async (m, info) => void got.push({ id: m.id, ...info }));
        child.kill('SIGKILL');
        await exited;
        await waitFor('redelivery to the survivor', () => got.length === 1, 20_000);
        expect(got).toEqual([{ id: 'crash-1', deliveryCount: 2, redelivered: true }]);
      } finally {
        child.kill('SIGKILL');
        await bus.close();
        const ch = await admin.createChannel();
        await ch.deleteQueue(queue);
        await ch.deleteQueue(`${queue}.dlq`);
        await ch.close();
      }
    });

    it('brings a consumer back when its queue is deleted under it', async () => {
      const queue = uniqueName('gone');
      const bus = new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet });
      const got: string[] = [];
      try {
        await bus.consume(queue, async (m) => void got.push(m.id));
        await bus.publish(queue, { id: 'before', type: 't', payload: null });
        await waitFor('first message', () => got.length === 1);
        const ch = await admin.createChannel();
        await ch.deleteQueue(queue);
        await ch.close();
        // the consumer re-declares its queue; publish until it is back (the first publishes may be dropped
        // by the broker while no queue exists: that is what deleting a queue means)
        let n = 0;
        await waitFor(
          'consumer back',
          async () => {
            if (got.length > 1) return true;
            try {
              await (bus as RabbitMqCommandBus).messageCount(queue);
              await bus.publish(queue, { id: `after-${n++}`, type: 't', payload: null });
            } catch {
              // a quorum queue being deleted can refuse declarations for a moment
            }
            await new Promise((r) => setTimeout(r, 100));
            return got.length > 1;
          },
          20_000,
        );
        expect(got[1]).toMatch(/^after-/);
      } finally {
        await bus.close();
        const ch = await admin.createChannel();
        await ch.deleteQueue(queue);
        await ch.deleteQueue(`${queue}.dlq`);
        await ch.close();
      }
    });

    it('fails clearly when a queue exists with other arguments, and keeps working for other queues', async () => {
      const queue = uniqueName('classic');
      const other = uniqueName('fine');
      const ch = await admin.createChannel();
      await ch.assertQueue(queue, { durable: true });
      const bus = new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet });
      try {
        await expect(bus.publish(queue, { id: 'x', type: 't', payload: null })).rejects.toBeInstanceOf(
          InternalError,
        );
        await expect(bus.consume(queue, async () => undefined)).rejects.toBeInstanceOf(InternalError);
        const got: string[] = [];
        await bus.consume(other, async (m) => void got.push(m.id));
        await bus.publish(other, { id: 'ok', type: 't', payload: null });
        await waitFor('other queue works', () => got.length === 1);
      } finally {
        await bus.close();
        // The bus declares `<queue>.dlq` before it finds `queue` refused: that one is ours to delete too.
        for (const q of [queue, `${queue}.dlq`, other, `${other}.dlq`]) await ch.deleteQueue(q);
        await ch.close();
      }
    });

    it('queueExpiresMs (tests only): the broker deletes the queue and its dead-letter queue once unused; without it they stay', async () => {
      const expiring = uniqueName('expiring');
      const kept = uniqueName('kept');
      const exists = async (q: string): Promise<boolean> => {
        const ch = await admin.createChannel();
        ch.on('error', () => undefined);
        try {
          await ch.checkQueue(q);
          await ch.close();
          return true;
        } catch (e) {
          if ((e as { code?: number }).code === 404) return false;
          throw e;
        }
      };
      expect(() => new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet, queueExpiresMs: 0 })).toThrow(
        TypeError,
      );
      const bus = new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet, queueExpiresMs: 1000 });
      const plain = new RabbitMqCommandBus({ url: AMQP_URL, logger: quiet });
      try {
        await bus.publish(expiring, { id: 'x', type: 't', payload: null });
        await plain.publish(kept, { id: 'x', type: 't', payload: null });
        expect(await exists(expiring)).toBe(true);
        await bus.close();
        await waitFor(
          'the expiring queues to go',
          async () => !(await exists(expiring)) && !(await exists(`${expiring}.dlq`)),
          20_000,
        );
        expect(await exists(kept)).toBe(true);
        expect(await exists(`${kept}.dlq`)).toBe(true);
      } finally {
        await bus.close();
        await plain.close();
        const ch = await admin.createChannel();
        for (const q of [expiring, `${expiring}.dlq`, kept, `${kept}.dlq`]) await ch.deleteQueue(q);
        await ch.close();
      }
    });

    it('fails a publish with TransientError when the broker cannot be reached in time', async () => {
      const bus = new RabbitMqCommandBus({
        url: 'amqp://guest:guest@127.0.0.1:1',
        logger: quiet,
        publishTimeoutMs: 300,
      });
      try {
        expect(await bus.ping()).toBe(false);
        await expect(bus.publish('nowhere', { id: 'x', type: 't', payload: null })).rejects.toBeInstanceOf(
          TransientError,
        );
      } finally {
        await bus.close();
      }
    });
  },
);
