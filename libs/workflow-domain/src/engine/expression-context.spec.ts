import type { WorkflowSpec } from '../dsl';
import { buildHost, evaluateWith, formatTimestamp, usesQueryFunctions } from './expression-context';
import type { ExpressionWorld, TaskExecution, WorkflowExecution } from './model';

const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 10, minute, 0));
const spec = (...names: string[]) =>
  ({ tasks: names.map((name) => ({ name, action: 'std.noop' })) }) as unknown as WorkflowSpec;

const execution = (id: string, minute: number, over: Partial<WorkflowExecution> = {}): WorkflowExecution => ({
  id,
  workflowId: `wf-${id}`,
  workflowName: `wf_${id}`,
  workflowNamespace: '',
  spec: spec(),
  description: '',
  tags: [],
  projectId: 'p',
  state: 'SUCCESS',
  stateInfo: null,
  input: {},
  output: {},
  params: {},
  context: {},
  varNames: [],
  taskExecutionId: null,
  rootExecutionId: null,
  deferred: [],
  createdAt: at(minute),
  updatedAt: at(minute),
  ...over,
});

const task = (
  id: string,
  executionId: string,
  minute: number,
  over: Partial<TaskExecution> = {},
): TaskExecution => ({
  id,
  name: id,
  executionId,
  type: 'ACTION',
  tags: [],
  state: 'SUCCESS',
  stateInfo: null,
  inContext: {},
  published: {},
  publishedGlobal: {},
  runtimeContext: {},
  result: null,
  processed: true,
  nextTasks: [],
  errorHandled: false,
  startedAt: at(minute),
  finishedAt: at(minute),
  createdAt: at(minute),
  updatedAt: at(minute),
  ...over,
});

/**
 * Root R runs `call`, which started child C (failed); O is an unrelated execution; X is the execution
 * whose expressions are evaluated (its world copy is stale: RUNNING without tasks).
 */
const R = execution('R', 0, { spec: spec('r1', 'call'), state: 'ERROR' });
const C = execution('C', 3, {
  spec: spec('c1', 'c2'),
  state: 'ERROR',
  taskExecutionId: 'call',
  rootExecutionId: 'R',
});
const O = execution('O', 6);
const staleX = execution('X', 8, { state: 'RUNNING' });
const world: ExpressionWorld = {
  executions: [R, C, O, staleX],
  tasks: [
    task('r1', 'R', 1),
    task('call', 'R', 2, { type: 'WORKFLOW', state: 'ERROR' }),
    task('c1', 'C', 4, { state: 'ERROR' }),
    task('c2', 'C', 5),
    task('o1', 'O', 7),
  ],
};
const X = execution('X', 8, { state: 'PAUSED', spec: spec('x1') });
const liveTasks = [task('x1', 'X', 9, { state: 'RUNNING' })];

const evalWith = (expr: string, withWorld = true) =>
  evaluateWith(
    expr,
    { r: 'R', c: 'C' },
    buildHost({
      execution: X,
      tasks: () => liveTasks,
      actions: () => [],
      now: at(30),
      newId: () => 'id',
      ...(withWorld ? { world } : {}),
    }),
  );
const names = (expr: string, withWorld = true) =>
  (evalWith(`<% ${expr}.select($.name) %>`, withWorld) as string[]).join(',');
const ids = (expr: string) => (evalWith(`<% ${expr}.select($.id) %>`) as string[]).join(',');

describe('tasks() over any execution (DSL-9.6)', () => {
  it('lists the tasks of the given execution', () => {
    expect(names('tasks($.r)')).toBe('r1,call');
    expect(names('tasks(workflow_execution_id => $.c)')).toBe('c1,c2');
  });

  it('recursive adds the tasks of sub-executions after the execution’s own', () => {
    expect(names('tasks($.r, true)')).toBe('r1,call,c1,c2');
    expect(names('tasks($.r, recursive => true, state => ERROR)')).toBe('call,c1');
  });

  it('flat drops workflow tasks in the same state as their sub-execution', () => {
    expect(names('tasks($.r, true, ERROR, true)')).toBe('c1');
    expect(names('tasks($.r, false, null, true)')).toBe('r1');
  });

  it('without an id lists every task of the project, this execution’s as they are now', () => {
    expect(names('tasks()')).toBe('r1,call,c1,c2,o1,x1');
    expect(names('tasks(state => SUCCESS)')).toBe('r1,c2,o1');
    expect(evalWith('<% tasks(state => RUNNING).select([$.name, $.workflow_execution_id]) %>')).toEqual([
      ['x1', 'X'],
    ]);
  });

  it('maps carry the spec of the task’s own workflow and timestamps', () => {
    expect(evalWith('<% tasks($.c)[0] %>')).toMatchObject({
      id: 'c1',
      name: 'c1',
      spec: { name: 'c1', action: 'std.noop' },
      state: 'ERROR',
      type: 'ACTION',
      workflow_execution_id: 'C',
      created_at: '2026-01-01 10:04:00',
    });
  });

  it('without a world only this execution is visible', () => {
    expect(names('tasks($.r)', false)).toBe('');
    expect(names('tasks()', false)).toBe('x1');
  });
});

describe('executions() over the project (DSL-9.6)', () => {
  it('lists every execution, this one with its live state', () => {
    expect(ids('executions()')).toBe('R,C,O,X');
    expect(evalWith("<% executions(id => 'X')[0].state %>")).toBe('PAUSED');
  });

  it('filters by root execution, state and creation time bounds', () => {
    expect(ids('executions(root_execution_id => $.r)')).toBe('C');
    expect(ids('executions(state => ERROR)')).toBe('R,C');
    expect(ids("executions(from_time => '2026-01-01 10:03:00', to_time => '2026-01-01 10:08:00')")).toBe(
      'C,O',
    );
    expect(ids("executions(null, null, SUCCESS, '2026-01-01T10:00:00Z')")).toBe('O');
  });

  it('elements have the execution() fields plus the row fields', () => {
    expect(evalWith('<% executions(id => $.c)[0] %>')).toMatchObject({
      id: 'C',
      name: 'wf_C',
      workflow_name: 'wf_C',
      state: 'ERROR',
      root_execution_id: 'R',
      task_execution_id: 'call',
      created_at: '2026-01-01 10:03:00',
    });
  });

  it('without a world only this execution is listed', () => {
    expect(evalWith('<% executions().select($.id) %>', false)).toEqual(['X']);
  });
});

describe('usesQueryFunctions', () => {
  it('spots tasks( and executions( anywhere in a spec', () => {
    expect(usesQueryFunctions({ tasks: [{ publish: { n: '<% tasks($.id).len() %>' } }] })).toBe(true);
    expect(usesQueryFunctions({ output: { e: '{{ executions() }}' } })).toBe(true);
    expect(usesQueryFunctions({ tasks: [{ name: 'tasks', publish: { n: '<% task().result %>' } }] })).toBe(
      false,
    );
  });
});

describe('formatTimestamp', () => {
  it('formats timestamps like datetime_to_str', () => {
    expect(formatTimestamp(null)).toBeNull();
    expect(formatTimestamp(new Date('2020-01-02T03:04:05.999Z'))).toBe('2020-01-02 03:04:05');
  });

  it('parses an ISO string first and keeps one that does not parse', () => {
    expect(formatTimestamp('2024-03-05T07:08:10Z')).toBe('2024-03-05 07:08:10');
    expect(formatTimestamp('not a time')).toBe('not a time');
  });
});
