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
