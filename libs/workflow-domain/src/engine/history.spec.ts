import { parseWorkflows } from '../dsl/documents';
import type { WorkflowSpec } from '../dsl/model';
import { EngineSimulator, type ActionScript, defaultActionScript } from './simulator';

const catalog = (yaml: string): Record<string, WorkflowSpec> =>
  Object.fromEntries(parseWorkflows(yaml).workflows.map((w) => [w.name, w]));

const WF = `version: '2.0'
wf:
  tasks:
    items:
      with-items: i in [1, 2, 3]
      action: std.echo output=<% $.i %>
      publish:
        got: <% task().result %>
      on-success: flaky
    flaky:
      action: flaky.op
      retry: {count: 2, delay: 0}
`;

describe('historyEvents', () => {
  it('records every state change of the execution, its tasks and actions with progress, retries and published names', () => {
    let calls = 0;
    const script: ActionScript = (name, input) =>
      name === 'flaky.op'
        ? ++calls < 2
          ? { state: 'ERROR', error: 'boom' }
          : { state: 'SUCCESS', result: 'ok' }
        : defaultActionScript(name, input);
    const sim = new EngineSimulator(catalog(WF), script);
    const id = sim.create('wf');
    sim.runWithTimers();
    expect(sim.execution(id).state).toBe('SUCCESS');
    const h = sim.history;
    const line = (e: (typeof h)[number]) => `${e.subject}:${e.name}:${e.previousState ?? '-'}>${e.state}`;
    // the execution starts and finishes
    expect(h.filter((e) => e.subject === 'execution').map(line)).toEqual(['execution:wf:RUNNING>SUCCESS']); // created RUNNING by the API (its event is written with the row)
    // with-items progress counts up to 3 of 3, published names appear when the task succeeds
    const items = h.filter((e) => e.subject === 'task' && e.name === 'items');
    expect(items.map((e) => e.details.withItems?.done)).toEqual([0, 1, 2, 3]);
    expect(items.at(-1)).toMatchObject({
      state: 'SUCCESS',
      details: { withItems: { done: 3, total: 3 }, published: ['got'] },
    });
    // three item actions created RUNNING then completed, with their index and task name
    const itemActions = h.filter((e) => e.subject === 'action' && e.details.taskName === 'items');
    expect(itemActions.filter((e) => e.previousState === null).map((e) => e.details.itemIndex)).toEqual([
      0, 1, 2,
    ]);
    expect(itemActions.filter((e) => e.state === 'SUCCESS')).toHaveLength(3);
    // the retry is visible as an attempt number and the failed first run's error
    const flaky = h.filter((e) => e.subject === 'task' && e.name === 'flaky');
    expect(flaky.some((e) => e.details.retryNo === 1)).toBe(true);
    expect(
      h.find((e) => e.subject === 'action' && e.name === 'flaky.op' && e.state === 'ERROR')?.stateInfo,
    ).toBe('boom');
    expect(flaky.at(-1)?.state).toBe('SUCCESS');
    // no entry repeats a subject's state without a change
    for (let i = 1; i < h.length; i++) {
      const [a, b] = [h[i - 1], h[i]];
      if (
        a &&
        b &&
        a.subject === b.subject &&
        a.taskExecutionId === b.taskExecutionId &&
        a.actionExecutionId === b.actionExecutionId
      ) {
        expect(JSON.stringify(a)).not.toBe(JSON.stringify(b));
      }
    }
  });
});
