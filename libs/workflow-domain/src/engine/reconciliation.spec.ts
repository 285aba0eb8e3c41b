import {
  EXECUTOR_LOST,
  type TaskFacts,
  executorLostMessage,
  judgeClaimedAction,
  judgeIdleExecution,
  judgeStuckTask,
} from './reconciliation';

const NOW = new Date('2026-01-01T12:00:00.000Z');
const ago = (s: number) => new Date(NOW.getTime() - s * 1000);
const bounds = { executorDeadAfterMs: 120_000, stuckAfterMs: 300_000 };

describe('judgeClaimedAction', () => {
  it.each([
    ['fresh heartbeat', ago(10), false, { kind: 'alive' }],
    ['heartbeat exactly at the bound', ago(120), false, { kind: 'alive' }],
    ['stale, safe-rerun', ago(121), true, { kind: 'run-again' }],
    ['instance row gone, safe-rerun', null, true, { kind: 'run-again' }],
  ] as const)('%s', (_name, hb, canRunAgain, expected) => {
    expect(judgeClaimedAction({ executorId: 'e1', lastHeartbeat: hb, canRunAgain }, NOW, bounds)).toEqual(
      expected,
    );
  });

  it('a stale executor fails a not safe-rerun action with the sentence, its id and last heartbeat', () => {
    expect(
      judgeClaimedAction({ executorId: 'e1', lastHeartbeat: ago(121), canRunAgain: false }, NOW, bounds),
    ).toEqual({
      kind: 'fail',
      error:
        'the executor running this action stopped before reporting a result (executor e1, last heartbeat 2026-01-01T11:57:59.000Z)',
    });
    expect(executorLostMessage('e2', null).startsWith(EXECUTOR_LOST)).toBe(true);
  });
});

const task = (over: Partial<TaskFacts> = {}): TaskFacts => ({
  id: 't1',
  name: 'work',
  state: 'RUNNING',
  updatedAt: ago(301),
  timer: null,
  withItems: false,
  actions: [],
  subExecutions: [],
  ...over,
});
const claimedBy = (executorId: string | null, lastHeartbeat: Date | null) => ({
  claimed: true,
  executorId,
  lastHeartbeat,
  sampleActionExecutionId: 'a1',
});
const unclaimed = { claimed: false, executorId: null, lastHeartbeat: null, sampleActionExecutionId: 'a1' };

describe('judgeStuckTask', () => {
  it.each([
    ['changed within the bound', task({ updatedAt: ago(299) })],
    ['a live executor runs its action (long action)', task({ actions: [claimedBy('e1', ago(5))] })],
    ['an async action waits for its callback', task({ actions: [claimedBy(null, null)] })],
    [
      'a dead executor holds its action (the executor check handles it)',
      task({ actions: [claimedBy('e1', ago(500))] }),
    ],
    [
      'an unclaimed with-items item may wait behind its siblings',
      task({ withItems: true, actions: [unclaimed] }),
    ],
    [
      'a sub-workflow still runs',
      task({ subExecutions: [{ id: 's1', state: 'RUNNING', output: {}, stateInfo: null }] }),
    ],
    [
      'a timer not yet due',
      task({ state: 'DELAYED', timer: { id: 'tm', kind: 'retry', dueAt: ago(-3600).toISOString() } }),
    ],
    [
      'a timer due within the bound',
      task({ state: 'DELAYED', timer: { id: 'tm', kind: 'retry', dueAt: ago(300).toISOString() } }),
    ],
    ['a join waiting', task({ state: 'WAITING' })],
  ])('leaves alone: %s', (_name, t) => {
    expect(judgeStuckTask(t, NOW, bounds)).toEqual({ kind: 'leave' });
  });

  it('fires a timer whose job was lost', () => {
    const t = task({ state: 'DELAYED', timer: { id: 'tm', kind: 'retry', dueAt: ago(301).toISOString() } });
    expect(judgeStuckTask(t, NOW, bounds)).toEqual({
      kind: 'fire-timer',
      timerId: 'tm',
      timerKind: 'retry',
      reason: 'reconciler: the retry timer of task work was due 301 s ago and never fired',
    });
  });

  it('reports again a sub-workflow that ended unheard', () => {
    const sub = { id: 's1', state: 'SUCCESS', output: { x: 1 }, stateInfo: null };
    expect(judgeStuckTask(task({ subExecutions: [sub] }), NOW, bounds)).toMatchObject({
      kind: 'complete-sub-workflow',
      sub,
    });
  });

  it('fails an action no executor ever picked up', () => {
    expect(judgeStuckTask(task({ actions: [unclaimed] }), NOW, bounds)).toEqual({
      kind: 'fail-action',
      actionExecutionId: 'a1',
      error:
        'reconciler: task work was RUNNING with its action never picked up by an executor and no timer or pending command for 301 s',
    });
  });

  it('fails a RUNNING task with nothing that could move it', () => {
    expect(judgeStuckTask(task(), NOW, bounds)).toEqual({
      kind: 'fail-task',
      stateInfo: 'reconciler: task work was RUNNING with no action, timer or pending command for 301 s',
    });
    expect(
      judgeStuckTask(
        task({ subExecutions: [{ id: 's1', state: null, output: {}, stateInfo: null }] }),
        NOW,
        bounds,
      ).kind,
    ).toBe('fail-task');
  });

  it('fails a DELAYED task without a timer', () => {
    expect(judgeStuckTask(task({ state: 'DELAYED' }), NOW, bounds)).toEqual({
      kind: 'fail-task',
      stateInfo: 'reconciler: task work was DELAYED with no timer or pending command for 301 s',
    });
  });
});

describe('judgeIdleExecution', () => {
  it('leaves an execution changed within the bound', () => {
    expect(judgeIdleExecution({ started: false, taskCount: 0, lastChange: ago(300) }, NOW, bounds)).toEqual({
      kind: 'leave',
    });
  });
  it('starts again an execution whose start was lost', () => {
    expect(judgeIdleExecution({ started: false, taskCount: 0, lastChange: ago(301) }, NOW, bounds).kind).toBe(
      'start',
    );
  });
  it('fails a started execution with nothing active', () => {
    expect(judgeIdleExecution({ started: true, taskCount: 2, lastChange: ago(400) }, NOW, bounds)).toEqual({
      kind: 'fail',
      stateInfo:
        'reconciler: the execution was RUNNING with no running task, timer or pending command for 400 s',
    });
  });
});
