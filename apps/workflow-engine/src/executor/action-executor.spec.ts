import type { DataSource } from 'typeorm';
import { StandardActionRunner } from '@osc/actions';
import {
  ACTION_RUN_BATCH_JOB,
  ENGINE_COMMAND_QUEUE,
  type ActionCompletedPayload,
  type ActionRunJob,
} from '@osc/contracts';
import type { CommandBus, CommandMessage } from '@osc/messaging';
import { ActionExecutor } from './action-executor';

/**
 * A database that grants every claim (no run had claimed the action before): a session that answers
 * the claim statement (`EXECUTE osc_action_claim($osc${"a1","a2"}$osc$, …)`, after its settings) with a row
 * per id.
 */
const claimsGranted = (claimed: string[]) => {
  const client = {
    escapeLiteral: (v: string) => `'${v.replace(/'/g, "''")}'`,
    query: async (text: string) => {
      if (!text.includes('EXECUTE osc_action_claim')) return { rows: [] }; // preparing
      const ids = [
        .../EXECUTE osc_action_claim\(\$osc\$\{([^}]*)\}/.exec(text)![1]!.matchAll(/"([^"]*)"/g),
      ].map((m) => m[1]!);
      claimed.push(...ids);
      // a result per statement: the claim's rows, none for the settings around it
      return text.split(';\n').map((statement) => ({
        rows: statement.startsWith('EXECUTE osc_action_claim')
          ? ids.map((id) => ({ id, prev: null, prev_executor: null, prev_heartbeat: null }))
          : [],
      }));
    },
  };
  return {
    createQueryRunner: () => ({ connect: async () => client, release: async () => undefined }),
  } as unknown as DataSource;
};

/** A bus whose publishes stay unconfirmed until released, recording the results sent. */
function unconfirmedBus() {
  const results: string[] = [];
  const pending: (() => void)[] = [];
  const bus = {
    publish: (queue: string, msg: CommandMessage | CommandMessage[]) => {
      expect(queue).toBe(ENGINE_COMMAND_QUEUE);
      for (const m of Array.isArray(msg) ? msg : [msg]) {
        const p = m.payload as { actionExecutionId?: string; results?: { actionExecutionId: string }[] };
        results.push(...(p.results ?? [p]).map((r) => r!.actionExecutionId!));
      }
      return new Promise<void>((resolve) => pending.push(resolve));
    },
  };
  return { bus: bus as unknown as CommandBus, results, pending };
}

const run = (n: number): ActionRunJob => ({
  actionExecutionId: `a${n}`,
  executionId: 'x',
  taskExecutionId: 't',
  actionName: 'std.echo',
  input: { output: n },
  namespace: '',
  itemIndex: n,
  context: {
    workflowName: 'wf',
    workflowNamespace: '',
    workflowExecutionId: 'x',
    rootExecutionId: null,
    taskExecutionId: 't',
    taskName: 'each',
    actionExecutionId: `a${n}`,
    projectId: 'p',
  },
});

const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('ActionExecutor', () => {
  it('holds a run slot until its report is confirmed (all a dying executor can cut off); the job waits for every confirm', async () => {
    const claimed: string[] = [];
    const { bus, results, pending } = unconfirmedBus();
    // one slot: the second run is claimed only once the first one's report was confirmed
    const executor = new ActionExecutor(claimsGranted(claimed), bus, new StandardActionRunner(), 1);
    let done = false;
    const job = executor
      .run({ id: 'j', name: ACTION_RUN_BATCH_JOB, data: { runs: [run(1), run(2), run(3)] }, attempt: 1 })
      .then(() => {
        done = true;
      });
    await settle();
    expect(claimed).toEqual(['a1']);
    expect(results).toEqual(['a1']);
    for (const n of [2, 3]) {
      for (const confirm of pending.splice(0)) confirm();
      await settle();
      expect(claimed).toHaveLength(n);
      expect(results).toHaveLength(n);
      expect(done).toBe(false); // the last report is still unconfirmed
    }
    for (const confirm of pending.splice(0)) confirm();
    await job;
    expect(done).toBe(true);
    expect(claimed).toEqual(['a1', 'a2', 'a3']);
  });

  it('still runs at most `maxRunning` actions at once', async () => {
    const claimed: string[] = [];
    const { bus, pending } = unconfirmedBus();
    const runner = new StandardActionRunner();
    let now = 0;
    let most = 0;
    let runs = 0;
    jest.spyOn(runner, 'run').mockImplementation(async () => {
      runs++;
      most = Math.max(most, ++now);
      await new Promise((r) => setTimeout(r, 10));
      now--;
      return { kind: 'success', result: null };
    });
    const executor = new ActionExecutor(claimsGranted(claimed), bus, runner, 2);
    const job = executor.run({
      id: 'j',
      name: ACTION_RUN_BATCH_JOB,
      data: { runs: [1, 2, 3, 4, 5].map(run) },
      attempt: 1,
    });
    const confirmAll = setInterval(() => pending.splice(0).forEach((confirm) => confirm()), 2);
    try {
      await job;
    } finally {
      clearInterval(confirmAll);
    }
    expect(runs).toBe(5);
    expect(most).toBe(2);
  });

  /** A bus whose first `failures` publishes fail, recording each report sent (id and state). */
  function failingBus(failures: number) {
    const sent: string[] = [];
    let calls = 0;
    const bus = {
      publish: async (_queue: string, msg: CommandMessage | CommandMessage[]) => {
        for (const m of Array.isArray(msg) ? msg : [msg]) {
          const p = m.payload as ActionCompletedPayload & { results?: ActionCompletedPayload[] };
          sent.push(...(p.results ?? [p]).map((r) => `${r.actionExecutionId} ${r.state}`));
        }
        if (calls++ < failures) throw new Error('publishing to queue engine was not confirmed: timeout');
      },
    };
    return { bus: bus as unknown as CommandBus, sent };
  }

  it('publishes a report again when publishing it failed; a run that succeeded is never reported as failed', async () => {
    const { bus, sent } = failingBus(1);
    const executor = new ActionExecutor(claimsGranted([]), bus, new StandardActionRunner(), 10, null, [1, 1]);
    await executor.run({ id: 'j', name: ACTION_RUN_BATCH_JOB, data: { runs: [run(1), run(2)] }, attempt: 1 });
    // the first message (both results) failed and went again
    expect(sent).toEqual(['a1 SUCCESS', 'a2 SUCCESS', 'a1 SUCCESS', 'a2 SUCCESS']);
  });

  it('fails the job, not the action, when a report cannot be published at all', async () => {
    const { bus, sent } = failingBus(Infinity);
    const executor = new ActionExecutor(claimsGranted([]), bus, new StandardActionRunner(), 10, null, [1, 1]);
    await expect(
      executor.run({ id: 'j', name: ACTION_RUN_BATCH_JOB, data: { runs: [run(1)] }, attempt: 1 }),
    ).rejects.toThrow('not confirmed');
    expect(sent).toEqual(['a1 SUCCESS', 'a1 SUCCESS', 'a1 SUCCESS']); // three attempts, no ERROR report
    // a single run's job too
    const single = failingBus(Infinity);
    const one = new ActionExecutor(claimsGranted([]), single.bus, new StandardActionRunner(), 10, null, []);
    await expect(one.run({ id: 'a2', name: 'action.run', data: run(2), attempt: 1 })).rejects.toThrow(
      'not confirmed',
    );
    expect(single.sent).toEqual(['a2 SUCCESS']);
  });

  it('reports a run of a batch that throws as ERROR at once, and runs its siblings', async () => {
    const { bus, sent } = failingBus(0);
    const runner = new StandardActionRunner();
    jest.spyOn(runner, 'run').mockImplementation(async (_name, input) => {
      if (input['output'] === 2) throw new Error('the action blew up');
      return { kind: 'success', result: null };
    });
    const executor = new ActionExecutor(claimsGranted([]), bus, runner, 10, null, []);
    await executor.run({
      id: 'j',
      name: ACTION_RUN_BATCH_JOB,
      data: { runs: [run(1), run(2), run(3)] },
      attempt: 1,
    });
    expect([...sent].sort()).toEqual(['a1 SUCCESS', 'a2 ERROR', 'a3 SUCCESS']);
  });
});
