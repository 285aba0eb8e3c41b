import type { EngineEvent } from '@osc/workflow-domain';
import { CommandBatches, type EventApplier, type FailureHandler, type Waiter } from './command-batches';

const event = (n: number): EngineEvent => ({ type: 'n', n }) as unknown as EngineEvent;
const numbers = (events: EngineEvent[]): number[] => events.map((e) => (e as unknown as { n: number }).n);

describe('CommandBatches', () => {
  const failures: { id: string; w: Waiter }[] = [];
  const handler: FailureHandler = {
    onFailure: async (id, w) => {
      failures.push({ id, w });
      w.resolve();
    },
  };
  beforeEach(() => (failures.length = 0));

  it('applies the events enqueued in one turn in one transaction, later ones in the next', async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const applier: EventApplier = {
      apply: async (_id, events) => {
        batches.push(numbers(events));
        if (batches.length === 1) await new Promise<void>((r) => (release = r));
      },
    };
    const b = new CommandBatches(applier, handler);
    // one message of 40 results, as an executor sends them
    const first = Array.from({ length: 40 }, (_, i) => b.enqueue('x', event(i), 'engine.action-completed'));
    await new Promise((r) => setImmediate(r));
    expect(batches).toEqual([Array.from({ length: 40 }, (_, i) => i)]);
    // arriving while that transaction runs: the next batch, whole
    const later = [b.enqueue('x', event(40), 't'), b.enqueue('x', event(41), 't')];
    release();
    await Promise.all([...first, ...later]);
    expect(batches).toEqual([Array.from({ length: 40 }, (_, i) => i), [40, 41]]);
  });

  it('keeps executions apart and applies a failing batch one event at a time', async () => {
    const batches: [string, number[]][] = [];
    const applier: EventApplier = {
      apply: async (id, events) => {
        batches.push([id, numbers(events)]);
        if (numbers(events).includes(2)) throw new Error('bad event');
      },
    };
    const b = new CommandBatches(applier, handler);
    await Promise.all([
      b.enqueue('x', event(1), 't'),
      b.enqueue('y', event(9), 't'),
      b.enqueue('x', event(2), 't'),
      b.enqueue('x', event(3), 't'),
    ]);
    expect(batches.filter(([id]) => id === 'x').map(([, n]) => n)).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect(batches.filter(([id]) => id === 'y').map(([, n]) => n)).toEqual([[9]]);
    expect(failures.map((f) => f.id)).toEqual(['x']);
  });
});
