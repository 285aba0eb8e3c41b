import { parseWorkflows } from '../dsl';
import { decide, decideBatch } from './decide';
import { decideInline, isInlineAction, type RunAction } from './inline-decision';
import type { Decision, EngineEvent, ExecutionSnapshot } from './model';
import { newExecution } from './new-execution';

const now = new Date('2026-01-01T00:00:00Z');
let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
const decideEvents = (s: ExecutionSnapshot, evs: readonly EngineEvent[]): Decision =>
  evs.length === 1 ? decide(s, evs[0] as EngineEvent, now, newId) : decideBatch(s, evs, now, newId);

/** The side-effect-free standard actions' outcomes, as an executor reports them (the runner lives in the app). */
const complete = async (_: unknown, e: RunAction): Promise<EngineEvent> => {
  const base = {
    type: 'action-completed',
    taskExecutionId: e.taskExecutionId,
    actionExecutionId: e.actionExecutionId,
  } as const;
  if (e.actionName === 'std.noop') return { ...base, state: 'SUCCESS', result: null };
  if (e.actionName === 'std.echo') return { ...base, state: 'SUCCESS', result: e.input['output'] ?? null };
  return { ...base, state: 'ERROR', error: 'Fail action expected exception.' };
};

const snapshotOf = (yaml: string): ExecutionSnapshot => {
  const spec = parseWorkflows(yaml).workflows[0]!;
  const execution = newExecution(
    { id: newId(), spec, workflowId: 'wf', workflowNamespace: '', projectId: 'p', input: {} },
    now,
  );
  return { execution, tasks: [], actions: [], subExecutions: [] };
};

const start = (yaml: string, maxRounds?: number) =>
  decideInline(snapshotOf(yaml), [{ type: 'start' }], decideEvents, complete, maxRounds);

const chain = (actions: string[]) => `
version: '2.0'
wf:
  tasks:
${actions.map((a, i) => `    t${i}:\n      action: ${a}\n${i < actions.length - 1 ? `      on-success: t${i + 1}\n` : ''}`).join('')}`;

describe('decideInline', () => {
  it('runs a chain of side-effect-free actions to the end in one decision, keeping every row', async () => {
    const d = await start(chain(['std.noop', 'std.echo output=3', 'std.noop']));
    expect(d.changes.execution?.state).toBe('SUCCESS');
    expect(d.changes.tasksCreated.map((t) => [t.name, t.state])).toEqual([
      ['t0', 'SUCCESS'],
      ['t1', 'SUCCESS'],
      ['t2', 'SUCCESS'],
    ]);
    expect(d.changes.tasksUpdated).toEqual([]);
    expect(d.changes.actionsCreated.map((a) => [a.name, a.state, a.output])).toEqual([
      ['std.noop', 'SUCCESS', { result: null }],
      ['std.echo', 'SUCCESS', { result: 3 }],
      ['std.noop', 'SUCCESS', { result: null }],
    ]);
    expect(d.commands.filter((c) => c.type === 'run-action')).toEqual([]);
  });

  it('stops at a side-effecting action and hands it to an executor', async () => {
    const d = await start(chain(['std.noop', 'std.http url=http://127.0.0.1:1/', 'std.noop']));
    const runs = d.commands.filter((c) => c.type === 'run-action');
    expect(runs.map((c) => c.type === 'run-action' && c.actionName)).toEqual(['std.http']);
    expect(d.changes.tasksCreated.map((t) => [t.name, t.state])).toEqual([
      ['t0', 'SUCCESS'],
      ['t1', 'RUNNING'],
    ]);
    expect(d.changes.execution?.state).toBe('RUNNING');
  });

  it('leaves the rest to jobs after the round limit', async () => {
    const d = await start(chain(['std.noop', 'std.noop', 'std.noop', 'std.noop']), 2);
    expect(d.changes.tasksCreated.map((t) => [t.name, t.state])).toEqual([
      ['t0', 'SUCCESS'],
      ['t1', 'RUNNING'],
    ]);
    expect(d.commands.filter((c) => c.type === 'run-action')).toHaveLength(1);
  });

  it('never inlines with-items items nor std.echo with a delay', () => {
    const base = {
      type: 'run-action',
      actionExecutionId: 'a',
      taskExecutionId: 't',
      taskName: 't',
      safeRerun: false,
      taskData: {},
    } as const;
    expect(isInlineAction({ ...base, actionName: 'std.noop', input: {}, itemIndex: null })).toBe(true);
    expect(isInlineAction({ ...base, actionName: 'std.noop', input: {}, itemIndex: 0 })).toBe(false);
    expect(
      isInlineAction({ ...base, actionName: 'std.echo', input: { output: 1, delay: 1 }, itemIndex: null }),
    ).toBe(false);
    for (const name of [
      'std.http',
      'std.email',
      'std.javascript',
      'std.sleep',
      'std.mistral_http',
      'my.adhoc',
    ]) {
      expect(isInlineAction({ ...base, actionName: name, input: {}, itemIndex: null })).toBe(false);
    }
  });
});
