import { InProcessCommandBus } from './in-process-command-bus';
import { commandBusContract } from '../test/command-bus.contract';

describe('InProcessCommandBus (contract)', () => {
  commandBusContract({
    createBus: async () => new InProcessCommandBus(),
    publishRaw: (bus, queue, body) => (bus as InProcessCommandBus).publishRaw(queue, body),
    messageCount: (bus, queue) => (bus as InProcessCommandBus).messageCount(queue),
    dropConnection: async (bus) => (bus as InProcessCommandBus).simulateConnectionLoss(),
    deleteQueues: async () => undefined,
  });
});

describe('InProcessCommandBus after a simulated connection loss', () => {
  it('ignores the late result of an abandoned delivery while the redelivery still runs', async () => {
    const bus = new InProcessCommandBus();
    const first = deferredVoid();
    const second = deferredVoid();
    const counts: number[] = [];
    await bus.publish('q', { id: 'a', type: 't', payload: null });
    await bus.consume('q', async (_m, info) => {
      counts.push(info.deliveryCount);
      await (info.deliveryCount === 1 ? first.promise : second.promise);
    });
    while (counts.length < 1) await new Promise((r) => setImmediate(r));
    bus.simulateConnectionLoss();
    while (counts.length < 2) await new Promise((r) => setImmediate(r));
    first.resolve(); // the abandoned handler finishes: must not ack the redelivered message
    await new Promise((r) => setTimeout(r, 20));
    bus.simulateConnectionLoss(); // the redelivery is still unacked, so it comes back again
    while (counts.length < 3) await new Promise((r) => setImmediate(r));
    expect(counts).toEqual([1, 2, 3]);
    second.resolve();
    await bus.close();
  });
});

function deferredVoid(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
