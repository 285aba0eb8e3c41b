import type { ExecutionEvent, TaskExecution } from '../api/mistral';
import { NOT_STARTED, progressOf, taskStatuses } from './task-states';
import type { TaskGraph } from './task-graph';

const graph: TaskGraph = {
  workflowName: 'wf',
  type: 'direct',
  tasks: ['a', 'b', 'c'].map((name) => ({
    name,
    action: 'std.noop',
    workflow: null,
    withItems: false,
    retry: false,
    join: false,
  })),
  edges: [],
};

const task = (over: Partial<TaskExecution>): TaskExecution => ({
  id: 'x',
  name: 'a',
  type: 'ACTION',
  workflow_execution_id: 'e',
  state: 'SUCCESS',
  state_info: null,
  runtime_context: '{}',
  published: '{}',
  created_at: '2026-11-26 08:00:00',
  updated_at: null,
  started_at: '2026-11-26 08:00:00',
  finished_at: '2026-11-26 08:00:02',
  ...over,
});

const event = (over: Partial<ExecutionEvent>): ExecutionEvent => ({
  seq: 1,
  root_execution_id: 'e',
  execution_id: 'e',
  subject: 'task',
  task_execution_id: 'b1',
  action_execution_id: null,
  name: 'b',
  state: 'RUNNING',
  previous_state: null,
  state_info: null,
  details: {},
  created_at: '2026-11-26 08:00:00',
  ...over,
});

describe('taskStatuses', () => {
  it('shows unreached tasks, the latest run of a task, with-items progress and retries', () => {
    const tasks = [
      task({ id: 'a1', name: 'a', state: 'ERROR', created_at: '2026-11-26 08:00:00' }),
      task({
        id: 'a2',
        name: 'a',
        state: 'RUNNING',
        created_at: '2026-11-26 08:00:05',
        finished_at: null,
        runtime_context: '{"retry_task_policy":{"retry_no":2}}',
      }),
      task({
        id: 'b1',
        name: 'b',
        state: 'RUNNING',
        runtime_context: '{"with_items":{"count":3}}',
        finished_at: null,
      }),
    ];
    const progress = progressOf([
      event({ details: { withItems: { done: 1, total: 3 } } }),
      event({ seq: 2, details: { withItems: { done: 2, total: 3 } } }),
    ]);
    const s = taskStatuses(graph, tasks, progress);
    expect(s.map((t) => [t.name, t.state, t.runs, t.withItems, t.retryNo])).toEqual([
      ['a', 'RUNNING', 2, null, 2],
      ['b', 'RUNNING', 1, { done: 2, total: 3 }, 0],
      ['c', NOT_STARTED, 0, null, 0],
    ]);
    expect(s[0]?.startedAt).toBe(Date.parse('2026-11-26T08:00:00Z'));
    expect(s[0]?.finishedAt).toBeNull();
  });

  it('counts a finished with-items task without progress entries as done', () => {
    const s = taskStatuses(
      graph,
      [task({ id: 'b1', name: 'b', runtime_context: '{"with_items":{"count":4}}' })],
      new Map(),
    );
    expect(s[1]?.withItems).toEqual({ done: 4, total: 4 });
  });
});
