import { ENGINE_COMMAND_QUEUE, type ActionCompletedPayload } from '@osc/contracts';
import type { CommandMessage } from '@osc/messaging';
import { ResultReports } from './result-reports';

const result = (n: number): ActionCompletedPayload => ({
  executionId: `x${n}`,
  taskExecutionId: `t${n}`,
  actionExecutionId: `a${n}`,
  state: 'SUCCESS',
  result: n,
});

/** A bus whose publishes stay pending until released, recording what was sent. */
function manualBus() {
  const sent: CommandMessage[] = [];
  const pending: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  return {
    sent,
    pending,
    publish: (queue: string, msg: CommandMessage | CommandMessage[]) => {
      expect(queue).toBe(ENGINE_COMMAND_QUEUE);
      sent.push(...(Array.isArray(msg) ? msg : [msg]));
      return new Promise<void>((resolve, reject) => pending.push({ resolve, reject }));
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('ResultReports', () => {
  it('sends the results of one turn together, without waiting for the confirms of the messages already out', async () => {
    const bus = manualBus();
    const reports = new ResultReports(bus);
    const settled: string[] = [];
    const first = reports.report(result(1)).then(() => settled.push('a1'));
    expect(bus.sent).toEqual([]); // not before the end of the turn
    await tick();
    expect(bus.sent).toEqual([
      { id: 'action-completed:a1', type: 'engine.action-completed', payload: result(1) },
    ]);
    const later = [2, 3, 4].map((n) => reports.report(result(n)).then(() => settled.push(`a${n}`)));
    await tick();
    // sent while the first awaits its confirm
    expect(bus.sent[1]).toEqual({
      id: 'actions-completed:a2:3',
      type: 'engine.actions-completed',
      payload: { results: [result(2), result(3), result(4)] },
    });
    // not confirmed yet: nobody may complete its job; confirms settle their own results, in any order
    expect(settled).toEqual([]);
    bus.pending[1]!.resolve();
    await Promise.all(later);
    expect(settled).toEqual(['a2', 'a3', 'a4']);
    bus.pending[0]!.resolve();
    await first;
    expect(settled).toEqual(['a2', 'a3', 'a4', 'a1']);
  });

  it('keeps at most maxInFlight messages unconfirmed; what is reported meanwhile goes together once one is confirmed', async () => {
    const bus = manualBus();
    const reports = new ResultReports(bus, 200, 2);
    const done = [1, 2].map((n) => reports.report(result(n)));
    await tick();
    expect(bus.sent).toHaveLength(1);
    const second = reports.report(result(3));
    await tick();
    expect(bus.sent).toHaveLength(2);
    const waiting = [4, 5, 6].map((n) => reports.report(result(n)));
    await tick();
    expect(bus.sent).toHaveLength(2); // both slots taken
    bus.pending[0]!.resolve();
    await Promise.all(done);
    await tick();
    expect(bus.sent[2]).toEqual({
      id: 'actions-completed:a4:3',
      type: 'engine.actions-completed',
      payload: { results: [result(4), result(5), result(6)] },
    });
    bus.pending[1]!.resolve();
    bus.pending[2]!.resolve();
    await Promise.all([second, ...waiting]);
  });

  it('rejects the results of a message the broker refused, and goes on with the next ones', async () => {
    const bus = manualBus();
    const reports = new ResultReports(bus, 2, 1);
    const first = reports.report(result(1));
    await tick();
    const [r2, r3, r4] = [2, 3, 4].map((n) => reports.report(result(n)));
    await tick();
    bus.pending[0]!.reject(new Error('channel closed'));
    await expect(first).rejects.toThrow('channel closed');
    await tick();
    // at most 2 per message
    expect((bus.sent[1]!.payload as { results: unknown[] }).results).toHaveLength(2);
    bus.pending[1]!.resolve();
    await Promise.all([r2, r3]);
    await tick();
    expect(bus.sent[2]).toMatchObject({ type: 'engine.action-completed', payload: result(4) });
    bus.pending[2]!.resolve();
    await r4;
  });
});
