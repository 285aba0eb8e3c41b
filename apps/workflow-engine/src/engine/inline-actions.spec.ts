import { StandardActionRunner } from '@osc/actions';
import {
  type Decision,
  type EngineEvent,
  type ExecutionSnapshot,
  decide,
  decideBatch,
  decideInline,
  newExecution,
  parseWorkflows,
} from '@osc/workflow-domain';
import { runInline } from './inline-actions';

const now = new Date('2026-01-01T00:00:00Z');
let n = 0;
const newId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`;
const decideEvents = (s: ExecutionSnapshot, evs: readonly EngineEvent[]): Decision =>
  evs.length === 1 ? decide(s, evs[0] as EngineEvent, now, newId) : decideBatch(s, evs, now, newId);
const runner = new StandardActionRunner();

const snapshotOf = (yaml: string): ExecutionSnapshot => {
  const spec = parseWorkflows(yaml).workflows[0]!;
  const execution = newExecution(
    { id: newId(), spec, workflowId: 'wf', workflowNamespace: '', projectId: 'p', input: {} },
    now,
  );
  return { execution, tasks: [], actions: [], subExecutions: [] };
};

const start = (yaml: string) =>
  decideInline(snapshotOf(yaml), [{ type: 'start' }], decideEvents, (ex, e) => runInline(runner, ex, e));

const chain = (actions: string[]) => `
version: '2.0'
wf:
  tasks:
${actions.map((a, i) => `    t${i}:\n      action: ${a}\n${i < actions.length - 1 ? `      on-success: t${i + 1}\n` : ''}`).join('')}`;

describe('runInline within decideInline', () => {
  it('reports std.fail and bad input as the executor would', async () => {
    const failed = await start(chain(['std.fail']));
    expect(failed.changes.execution?.state).toBe('ERROR');
    expect(failed.changes.tasksCreated[0]?.state).toBe('ERROR');
    const bad = await start(chain(['std.echo wrong=1']));
    expect(bad.changes.execution?.state).toBe('ERROR');
    expect(bad.changes.execution?.stateInfo).toMatch(/Invalid input \[name=std.echo/);
  });
});
