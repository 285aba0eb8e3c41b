import type { WorkflowSpec } from '../dsl';
import type { ExecutionSnapshot, TaskExecution, WorkflowExecution } from './model';
import { evaluatePlayground, expressionScope } from './playground';

const at = new Date(Date.UTC(2026, 0, 1, 10, 0, 0));
const spec = {
  tasks: [
    { name: 'fetch', action: 'std.http' },
    { name: 'use', action: 'std.echo' },
  ],
} as unknown as WorkflowSpec;

const ex: WorkflowExecution = {
  id: 'ex-1',
  workflowId: 'wf-1',
  workflowName: 'demo',
  workflowNamespace: '',
  spec,
  description: '',
  tags: [],
  projectId: 'p',
  state: 'RUNNING',
  stateInfo: null,
  input: { who: 'input', shadowed: 'input' },
  output: {},
  params: { env: { region: 'eu' } },
  context: { shadowed: 'global', counter: 1 },
  varNames: [],
  taskExecutionId: null,
  rootExecutionId: null,
  deferred: [],
  createdAt: at,
  updatedAt: at,
};

const task = (name: string, over: Partial<TaskExecution>): TaskExecution => ({
  id: `t-${name}`,
  name,
  executionId: ex.id,
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
  startedAt: at,
  finishedAt: at,
  createdAt: at,
  updatedAt: at,
  ...over,
});

const fetch = task('fetch', {
  result: { status: 200 },
  published: { body: 'ok', shadowed: 'published' },
  inContext: { shadowed: 'inbound' },
});
const use = task('use', {
  state: 'RUNNING',
  finishedAt: null,
  inContext: { body: 'ok', shadowed: 'inbound' },
  published: { never: 'seen' },
});
const snapshot: ExecutionSnapshot = { execution: ex, tasks: [fetch, use], actions: [], subExecutions: [] };
const scope = (t: TaskExecution | null) => expressionScope(snapshot, t, at, () => 'new-id');

describe('expressionScope + evaluatePlayground', () => {
  it.each([
    // a completed task: its inbound context, then its published variables on top; task() is the task
    [fetch, 'yaql', '$.shadowed', 'published'],
    [fetch, 'yaql', 'task().result.status', 200],
    [fetch, 'jinja', 'task().name ~ "/" ~ _.who', 'fetch/input'],
    // a task not completed: inbound context only (its published values are not out yet)
    [use, 'yaql', '[$.shadowed, $.body, $.get(never)]', ['inbound', 'ok', null]],
    [use, 'yaql', 'task(fetch).published.body', 'ok'],
    // env(), execution(), the execution's own data without a task
    [use, 'yaql', 'env().region', 'eu'],
    [null, 'yaql', '[$.shadowed, $.counter, execution().name, $.who]', ['global', 1, 'demo', 'input']],
    [null, 'jinja', 'execution().id', 'ex-1'],
    // text with delimiters is a definition's value: several expressions render into a string
    [fetch, 'yaql', 'status <% task().result.status %> of <% task().name %>', 'status 200 of fetch'],
  ] as const)('%# %s %j', (t, language, text, expected) => {
    expect(evaluatePlayground(text, language, scope(t))).toEqual({ result: expected });
  });

  it('answers a syntax error with its position in the text sent', () => {
    expect(evaluatePlayground('1 +* 2', 'yaql', scope(null))).toEqual({
      error: {
        message: expect.stringContaining('unexpected'),
        language: 'yaql',
        expression: '1 +* 2',
        position: 3,
      },
    });
    expect(evaluatePlayground('x: <% $.a +* 2 %>', 'jinja', scope(null))).toMatchObject({
      error: { language: 'yaql', expression: '$.a +* 2', position: 11 },
    });
    expect(evaluatePlayground('a b', 'jinja', scope(null))).toMatchObject({
      error: { language: 'jinja', position: 2 },
    });
  });

  it('answers an evaluation error without a position', () => {
    expect(evaluatePlayground('$.nothing.len()', 'yaql', scope(fetch))).toMatchObject({
      error: { language: 'yaql', position: null },
    });
  });
});
