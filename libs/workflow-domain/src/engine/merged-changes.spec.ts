import { parseWorkflows } from '../dsl';
import { decide } from './decide';
import { advanceSnapshot, mergeChanges } from './merged-changes';
import type { EngineEffect, ExecutionSnapshot } from './model';
import { newExecution } from './new-execution';

const now = new Date('2026-01-01T00:00:00Z');
let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;

const snapshot = (): ExecutionSnapshot => {
  const spec = parseWorkflows(`
version: '2.0'
wf:
  tasks:
    t0:
      action: std.noop
      on-success: t1
    t1:
      action: std.noop
`).workflows[0]!;
  const execution = newExecution(
    { id: newId(), spec, workflowId: 'wf', workflowNamespace: '', projectId: 'p', input: {} },
    now,
  );
  return { execution, tasks: [], actions: [], subExecutions: [] };
};

const runOf = (c: EngineEffect[]) => c.find((e) => e.type === 'run-action')!;

describe('advanceSnapshot and mergeChanges', () => {
  it('advance a snapshot by a decision and merge two rounds as one transaction writes them', () => {
    const s0 = snapshot();
    const first = decide(s0, { type: 'start' }, now, newId);
    const s1 = advanceSnapshot(s0, first.changes);
    expect(s0.tasks).toEqual([]);
    expect(s1.tasks.map((t) => [t.name, t.state])).toEqual([['t0', 'RUNNING']]);
    expect(s1.actions.map((a) => a.state)).toEqual(['RUNNING']);
    expect(s1.execution).toBe(first.changes.execution ?? s0.execution);

    const run = runOf(first.commands);
    if (run.type !== 'run-action') throw new Error('no action started');
    const second = decide(
      s1,
      {
        type: 'action-completed',
        taskExecutionId: run.taskExecutionId,
        actionExecutionId: run.actionExecutionId,
        state: 'SUCCESS',
        result: null,
      },
      now,
      newId,
    );
    expect(second.changes.tasksUpdated.map((t) => t.name)).toEqual(['t0']);

    const merged = mergeChanges(first.changes, second.changes);
    // t0 was created by the first round: its later version stays a created row, in its first place
    expect(merged.tasksCreated.map((t) => [t.name, t.state])).toEqual([
      ['t0', 'SUCCESS'],
      ['t1', 'RUNNING'],
    ]);
    expect(merged.tasksUpdated).toEqual([]);
    expect(merged.actionsCreated.map((a) => a.state)).toEqual(['SUCCESS', 'RUNNING']);
    expect(merged.actionsUpdated).toEqual([]);
    // the inputs are left as they were
    expect(first.changes.tasksCreated.map((t) => t.name)).toEqual(['t0']);
  });
});
