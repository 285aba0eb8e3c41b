import { ENGINE_COMMAND_QUEUE, type ActionCompletedPayload } from '@osc/contracts';
import type { CommandMessage } from '@osc/messaging';
import { ResultReports } from './result-reports';

const result = (n: number): ActionCompletedPayload => ({ executionId: `x${n}`, taskExecutionId: `t${n}`, actionExecutionId: `a${n}`, state: 'SUCCESS', result: n });

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
  it('sends a result alone at once, and those reported meanwhile together in one engine.actions-completed', async () => {
    const bus = manualBus();
    const reports = new ResultReports(bus);
    const settled: string[] = [];
    const first = reports.report(result(1)).then(() => settled.push('a1'));
    const later = [2, 3, 4].map((n) => reports.report(result(n)).then(() => settled.push(`a${n}`)));
    await tick();
    expect(bus.sent).toEqual([{ id: 'action-completed:a1', type: 'engine.action-completed', payload: result(1) }]);
    bus.pending[0]!.resolve();
    await first;
    await tick();
    expect(bus.sent[1]).toEqual({ id: 'actions-completed:a2:3', type: 'engine.actions-completed', payload: { results: [result(2), result(3), result(4)] } });
    // not confirmed yet: nobody may complete its job
    expect(settled).toEqual(['a1']);
    bus.pending[1]!.resolve();
    await Promise.all(later);
    expect(settled).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('rejects the results of a message the broker refused, and goes on with the next ones', async () => {
    const bus = manualBus();
    const reports = new ResultReports(bus, 2);
    const first = reports.report(result(1));
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
