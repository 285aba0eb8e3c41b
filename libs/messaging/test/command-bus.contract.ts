import { InvalidInputError, TransientError } from '@osc/errors';
import type { CommandBus, CommandMessage, DeliveryInfo } from '../src/command-bus';
import { POISON_TYPE } from '../src/command-bus';
import { type Deferred, deferred, sleep, uniqueName, waitFor } from './support';

/** What the contract needs to know about an adapter beyond the port. */
export interface CommandBusHarness {
  createBus(): Promise<CommandBus>;
  /** Puts bytes on a queue as a broken producer would. */
  publishRaw(bus: CommandBus, queue: string, body: string): Promise<void>;
  /** Ready messages in a queue. */
  messageCount(bus: CommandBus, queue: string): Promise<number>;
  /** Drops the bus's broker connection abruptly while handlers run; the bus must recover. */
  dropConnection(bus: CommandBus): Promise<void>;
  /** Removes the broker-side queues a test created. */
  deleteQueues(queues: string[]): Promise<void>;
}

type Received = { msg: CommandMessage; info: DeliveryInfo };

/** The one behaviour every command bus adapter must show (see `CommandBus`). */
export function commandBusContract(h: CommandBusHarness): void {
  let bus: CommandBus;
  let queue: string;
  let dlq: string;

  beforeEach(async () => {
    bus = await h.createBus();
    queue = uniqueName('cmd');
    dlq = `${queue}.dlq`;
  });

  afterEach(async () => {
    await bus.close();
    await h.deleteQueues([queue, dlq]);
  });

  const msg = (n: number, extra: Partial<CommandMessage> = {}): CommandMessage => ({
    id: `m-${n}`,
    type: 'test.command',
    payload: { n, nested: { list: [1, 'two', null] } },
    ...extra,
  });

  it('delivers a batch in order with id, type, payload and headers intact', async () => {
    const got: Received[] = [];
    await bus.publish(queue, [msg(1, { headers: { 'x-request-id': 'req-1' } }), msg(2), msg(3)]);
    await bus.consume(queue, async (m, info) => void got.push({ msg: m, info }), { prefetch: 1 });
    await waitFor('3 messages', () => got.length === 3);
    expect(got.map((g) => g.msg.id)).toEqual(['m-1', 'm-2', 'm-3']);
    expect(got[0]!.msg).toEqual({
      id: 'm-1',
      type: 'test.command',
      payload: { n: 1, nested: { list: [1, 'two', null] } },
      headers: { 'x-request-id': 'req-1' },
    });
    expect(got.map((g) => g.info)).toEqual([
      { deliveryCount: 1, redelivered: false },
      { deliveryCount: 1, redelivered: false },
      { deliveryCount: 1, redelivered: false },
    ]);
  });

  it('acks when the handler resolves: the message is gone for the next consumer', async () => {
    const first: string[] = [];
    await bus.publish(queue, msg(1));
    const sub = await bus.consume(queue, async (m) => void first.push(m.id));
    await waitFor('first delivery', () => first.length === 1);
    await sub.cancel();
    await bus.publish(queue, msg(2));
    const second: string[] = [];
    await bus.consume(queue, async (m) => void second.push(m.id));
    await waitFor('second delivery', () => second.length === 1);
    await sleep(100);
    expect(second).toEqual(['m-2']);
  });

  it('redelivers after a retryable error, counting deliveries', async () => {
    const infos: DeliveryInfo[] = [];
    await bus.publish(queue, msg(1));
    await bus.consume(queue, async (_m, info) => {
      infos.push(info);
      if (info.deliveryCount === 1) throw new TransientError('database unavailable');
    });
    await waitFor('second delivery', () => infos.length === 2);
    expect(infos).toEqual([
      { deliveryCount: 1, redelivered: false },
      { deliveryCount: 2, redelivered: true },
    ]);
    await sleep(100);
    expect(infos).toHaveLength(2);
    expect(await h.messageCount(bus, dlq)).toBe(0);
  });

  it('waits the retry delay, doubling it, before each redelivery, holding the prefetch slot', async () => {
    const at: number[] = [];
    const other: number[] = [];
    await bus.publish(queue, [msg(1), msg(2)]);
    await bus.consume(
      queue,
      async (m, info) => {
        if (m.id === 'm-2') {
          other.push(Date.now());
          return;
        }
        at.push(Date.now());
        if (info.deliveryCount < 3) throw new TransientError('busy');
      },
      { prefetch: 1, retryDelayMs: 150 },
    );
    await waitFor('third delivery', () => at.length === 3);
    // Node's timers count from the event loop's cached time, which may be a few ms behind Date.now()
    // when the delay is scheduled: a 300 ms delay can show as 299 ms between two Date.now() readings
    // (seen in CI). The slack is far below the 150 ms a missing doubling would lose.
    const slack = 5;
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(150 - slack);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(300 - slack);
    // with prefetch 1 the waiting message kept the only slot: m-2 came after the first back-off
    await waitFor('the other message', () => other.length === 1);
    expect(other[0]!).toBeGreaterThanOrEqual(at[0]! + 150 - slack);
  });

  it('treats an unclassified error as retryable', async () => {
    const counts: number[] = [];
    await bus.publish(queue, msg(1));
    await bus.consume(queue, async (_m, info) => {
      counts.push(info.deliveryCount);
      if (info.deliveryCount === 1) throw new Error('socket hang up');
    });
    await waitFor('redelivery', () => counts.length === 2);
    expect(counts).toEqual([1, 2]);
  });

  it('dead-letters after maxDeliveries retryable failures', async () => {
    const counts: number[] = [];
    await bus.publish(queue, msg(7, { headers: { 'x-trace': 't7' } }));
    await bus.consume(
      queue,
      async (_m, info) => {
        counts.push(info.deliveryCount);
        throw new TransientError('still down');
      },
      { maxDeliveries: 3 },
    );
    const dead: CommandMessage[] = [];
    await bus.consume(dlq, async (m) => void dead.push(m));
    await waitFor('dead letter', () => dead.length === 1);
    expect(counts).toEqual([1, 2, 3]);
    expect(dead[0]).toMatchObject({ id: 'm-7', type: 'test.command', payload: { n: 7 } });
    expect(dead[0]!.headers).toMatchObject({
      'x-trace': 't7',
      'x-dead-letter-reason': 'delivery-limit',
      'x-original-queue': queue,
    });
    expect(dead[0]!.headers!['x-error']).toContain('still down');
  });

  it('dead-letters at once on a non-retryable error', async () => {
    const counts: number[] = [];
    await bus.publish(queue, msg(1));
    await bus.consume(queue, async (_m, info) => {
      counts.push(info.deliveryCount);
      throw new InvalidInputError('workflow input is not an object');
    });
    const dead: CommandMessage[] = [];
    await bus.consume(dlq, async (m) => void dead.push(m));
    await waitFor('dead letter', () => dead.length === 1);
    expect(counts).toEqual([1]);
    expect(dead[0]!.headers).toMatchObject({ 'x-dead-letter-reason': 'rejected' });
    expect(dead[0]!.headers!['x-error']).toContain('InvalidInputError: workflow input is not an object');
  });

  it('dead-letters a poison message without calling the handler', async () => {
    const calls: string[] = [];
    await h.publishRaw(bus, queue, '{not json');
    await bus.publish(queue, msg(2));
    await bus.consume(queue, async (m) => void calls.push(m.id));
    await waitFor('the good message', () => calls.length === 1);
    await waitFor('poison in the DLQ', async () => (await h.messageCount(bus, dlq)) === 1);
    expect(calls).toEqual(['m-2']);
    const dead: CommandMessage[] = [];
    await bus.consume(dlq, async (m) => void dead.push(m));
    await waitFor('dead letter read', () => dead.length === 1);
    expect(dead[0]).toMatchObject({ type: POISON_TYPE, payload: '{not json' });
    expect(dead[0]!.headers).toMatchObject({ 'x-dead-letter-reason': 'poison', 'x-original-queue': queue });
  });

  it('honours prefetch: never more unacked messages than allowed', async () => {
    const gates = new Map<string, Deferred>();
    let inFlight = 0;
    let maxInFlight = 0;
    let done = 0;
    await bus.publish(
      queue,
      [1, 2, 3, 4, 5].map((n) => msg(n)),
    );
    await bus.consume(
      queue,
      async (m) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        const gate = deferred();
        gates.set(m.id, gate);
        await gate.promise;
        inFlight--;
        done++;
      },
      { prefetch: 2 },
    );
    await waitFor('2 in flight', () => inFlight === 2);
    await sleep(300);
    expect(inFlight).toBe(2);
    gates.get('m-1')!.resolve();
    await waitFor('a third delivery', () => gates.size === 3);
    expect(maxInFlight).toBe(2);
    // release everything as it arrives
    const releaser = setInterval(() => gates.forEach((g) => g.resolve()), 5);
    try {
      await waitFor('all done', () => done === 5);
    } finally {
      clearInterval(releaser);
    }
    expect(maxInFlight).toBe(2);
  });

  it('spreads messages over competing consumers, each message handled once', async () => {
    const seen: string[] = [];
    const byConsumer = [0, 0];
    await bus.consume(
      queue,
      async (m) => {
        byConsumer[0]!++;
        seen.push(m.id);
        await sleep(2);
      },
      { prefetch: 2 },
    );
    await bus.consume(
      queue,
      async (m) => {
        byConsumer[1]!++;
        seen.push(m.id);
        await sleep(2);
      },
      { prefetch: 2 },
    );
    await bus.publish(
      queue,
      Array.from({ length: 40 }, (_, i) => msg(i)),
    );
    await waitFor('40 messages', () => seen.length === 40);
    await sleep(100);
    expect(new Set(seen).size).toBe(40);
    expect(seen).toHaveLength(40);
    expect(byConsumer[0]).toBeGreaterThan(0);
    expect(byConsumer[1]).toBeGreaterThan(0);
  });

  it('redelivers a message whose consumer lost its connection mid-message, and keeps consuming after', async () => {
    const deliveries: Array<{ id: string; info: DeliveryInfo }> = [];
    const stuck = deferred();
    await bus.publish(queue, msg(1));
    await bus.consume(queue, async (m, info) => {
      deliveries.push({ id: m.id, info });
      if (deliveries.length === 1) await stuck.promise; // dies before acking
    });
    await waitFor('first delivery', () => deliveries.length === 1);
    await h.dropConnection(bus);
    await waitFor('redelivery after reconnect', () => deliveries.length === 2, 20_000);
    expect(deliveries[1]).toEqual({ id: 'm-1', info: { deliveryCount: 2, redelivered: true } });
    stuck.resolve(); // the abandoned handler finishes late: its ack must not break anything
    await bus.publish(queue, msg(2));
    await waitFor('a message published after the reconnect', () => deliveries.length === 3, 20_000);
    expect(deliveries[2]!.id).toBe('m-2');
    await sleep(200);
    expect(deliveries).toHaveLength(3);
    expect(await h.messageCount(bus, queue)).toBe(0);
  });

  it('cancel waits for running handlers, which are then acked', async () => {
    const gate = deferred();
    let started = false;
    await bus.publish(queue, msg(1));
    const sub = await bus.consume(queue, async () => {
      started = true;
      await gate.promise;
    });
    await waitFor('handler started', () => started);
    let cancelled = false;
    const cancelling = sub.cancel().then(() => (cancelled = true));
    await sleep(100);
    expect(cancelled).toBe(false);
    gate.resolve();
    await cancelling;
    expect(await h.messageCount(bus, queue)).toBe(0);
  });

  it('rejects invalid messages, queue names and options with InvalidInputError', async () => {
    await expect(bus.publish(queue, { id: '', type: 't', payload: 1 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(bus.publish(queue, { id: 'a', type: '', payload: 1 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    await expect(bus.publish(queue, { id: 'a', type: 't', payload: circular })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(bus.publish('bad name!', msg(1))).rejects.toBeInstanceOf(InvalidInputError);
    await expect(bus.consume(queue, async () => undefined, { prefetch: 0 })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
  });

  it('publishes a large batch with one call and delivers all of it', async () => {
    const n = 3000;
    let received = 0;
    const t0 = Date.now();
    await bus.publish(
      queue,
      Array.from({ length: n }, (_, i) => msg(i)),
    );
    const published = Date.now();
    await bus.consume(queue, async () => void received++, { prefetch: 200 });
    await waitFor(`${n} messages`, () => received === n, 30_000);
    const ms = Math.max(1, Date.now() - t0);
    console.log(
      `command bus: ${n} msgs published in ${published - t0} ms, round trip ${Math.round((n * 1000) / ms)} msg/s`,
    );
    expect(await bus.ping()).toBe(true);
  });
}
