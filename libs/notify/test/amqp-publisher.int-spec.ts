import { type TaskEventPayload } from '@osc/contracts';
import { connect, type ChannelModel, type Channel, type ConsumeMessage } from 'amqplib';
import { NotificationDispatcher } from '../src/notification-dispatcher';
import { AmqpPublisher } from '../src/publishers';
import { AMQP_URL, describeWithRabbit, uniqueName } from './rabbitmq';

const taskEvent = (n: number, event: TaskEventPayload['event']): TaskEventPayload => ({
  id: `t${n}`,
  name: `task${n}`,
  workflow_execution_id: 'e1',
  workflow_name: 'wf',
  workflow_namespace: '',
  workflow_id: 'w1',
  state: event === 'TASK_LAUNCHED' ? 'RUNNING' : 'SUCCESS',
  state_info: null,
  type: 'ACTION',
  project_id: 'p1',
  created_at: '2024-01-01 00:00:00',
  updated_at: null,
  started_at: null,
  finished_at: null,
  event,
});

jest.setTimeout(20_000);

describeWithRabbit('AMQP publisher against RabbitMQ', () => {
  let conn: ChannelModel;
  let ch: Channel;
  const defaultExchange = uniqueName('osc-notify-default');
  const userExchange = uniqueName('osc-notify-user');
  const queue = uniqueName('osc-notify-q');
  let publisher: AmqpPublisher;
  const received: ConsumeMessage[] = [];
  let waiters: (() => void)[] = [];

  const waitForMessages = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${received.length} of ${n} messages arrived`)),
        10_000,
      );
      const check = (): void => {
        if (received.length >= n) {
          clearTimeout(timer);
          resolve();
        } else waiters.push(check);
      };
      check();
    });

  beforeAll(async () => {
    conn = await connect(AMQP_URL);
    ch = await conn.createChannel();
    publisher = new AmqpPublisher({ url: AMQP_URL, defaultExchange });
    await publisher.waitForConnect();
    await ch.assertExchange(userExchange, 'direct', { durable: false, autoDelete: false });
    await ch.assertQueue(queue, { exclusive: true });
    await ch.bindQueue(queue, defaultExchange, '#');
    await ch.bindQueue(queue, userExchange, 'my-key');
    await ch.consume(queue, (msg) => {
      if (!msg) return;
      received.push(msg);
      ch.ack(msg);
      const pending = waiters;
      waiters = [];
      pending.forEach((w) => w());
    });
  });

  afterAll(async () => {
    await publisher.close();
    await ch.deleteExchange(defaultExchange).catch(() => undefined);
    await ch.deleteExchange(userExchange).catch(() => undefined);
    await conn.close();
  });

  it('publishes events in order to the default exchange, routed by event name', async () => {
    const dispatcher = new NotificationDispatcher([publisher], {
      warn: () => undefined,
      error: () => undefined,
    });
    for (let i = 0; i < 20; i++) {
      const report = await dispatcher.deliver({
        executionId: 'e1',
        seq: i,
        publishers: [{ type: 'amqp' }],
        event: taskEvent(i, i % 2 === 0 ? 'TASK_LAUNCHED' : 'TASK_SUCCEEDED'),
      });
      expect(report.results).toEqual([{ type: 'amqp', ok: true }]);
    }
    await waitForMessages(20);
    const bodies = received
      .slice(0, 20)
      .map((m) => JSON.parse(m.content.toString('utf8')) as TaskEventPayload);
    expect(bodies.map((b) => b.id)).toEqual(Array.from({ length: 20 }, (_, i) => `t${i}`));
    expect(received[0]!.fields.routingKey).toBe('TASK_LAUNCHED');
    expect(received[1]!.fields.routingKey).toBe('TASK_SUCCEEDED');
    expect(received[0]!.properties.contentType).toBe('application/json');
    expect(received[0]!.properties.deliveryMode).toBe(2);
    expect(bodies[3]).toEqual(taskEvent(3, 'TASK_SUCCEEDED'));
  });

  it('honours the entry exchange and routing_key, and reports a missing exchange', async () => {
    const before = received.length;
    await publisher.publish(taskEvent(99, 'TASK_SUCCEEDED'), {
      type: 'amqp',
      exchange: userExchange,
      routing_key: 'my-key',
    });
    await waitForMessages(before + 1);
    expect(received[before]!.fields.exchange).toBe(userExchange);
    expect(JSON.parse(received[before]!.content.toString('utf8'))).toMatchObject({ id: 't99' });
    await expect(
      publisher.publish(taskEvent(100, 'TASK_SUCCEEDED'), {
        type: 'amqp',
        exchange: uniqueName('osc-notify-missing'),
      }),
    ).rejects.toThrow(/is not available/);
    // The publisher still works after the failed check.
    await publisher.publish(taskEvent(101, 'TASK_LAUNCHED'), { type: 'amqp' });
    await waitForMessages(before + 2);
    expect(JSON.parse(received[before + 1]!.content.toString('utf8'))).toMatchObject({ id: 't101' });
  });
});
