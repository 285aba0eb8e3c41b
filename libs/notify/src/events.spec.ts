import {
  inPayloadOrder,
  notifyJobFor,
  publishersFor,
  taskEventPayload,
  workflowEventPayload,
} from './events';
import { eventBody } from './publishers';

describe('payloads (DSL-16.4)', () => {
  const created = new Date('2024-03-05T07:08:09.456Z');

  it('builds the execution payload in the reference key order with event last', () => {
    const payload = workflowEventPayload(
      {
        id: 'e1',
        name: 'wf',
        workflowName: 'wf',
        workflowNamespace: '',
        workflowId: 'w1',
        state: 'SUCCESS',
        stateInfo: null,
        projectId: 'p1',
        taskExecutionId: null,
        rootExecutionId: null,
        createdAt: created,
        updatedAt: '2024-03-05T07:08:10Z',
      },
      'WORKFLOW_SUCCEEDED',
    );
    expect(Object.keys(payload)).toEqual([
      'id',
      'name',
      'workflow_name',
      'workflow_namespace',
      'workflow_id',
      'state',
      'state_info',
      'project_id',
      'task_execution_id',
      'root_execution_id',
      'created_at',
      'updated_at',
      'event',
    ]);
    expect(payload.created_at).toBe('2024-03-05 07:08:09');
    expect(payload.updated_at).toBe('2024-03-05 07:08:10');
    expect(eventBody(payload)).toBe(
      '{"id": "e1", "name": "wf", "workflow_name": "wf", "workflow_namespace": "", "workflow_id": "w1", ' +
        '"state": "SUCCESS", "state_info": null, "project_id": "p1", "task_execution_id": null, ' +
        '"root_execution_id": null, "created_at": "2024-03-05 07:08:09", "updated_at": "2024-03-05 07:08:10", ' +
        '"event": "WORKFLOW_SUCCEEDED"}',
    );
  });

  it('builds the task payload with its timestamps', () => {
    const payload = taskEventPayload(
      {
        id: 't1',
        name: 'task1',
        workflowExecutionId: 'e1',
        workflowName: 'wf',
        workflowNamespace: 'ns',
        workflowId: 'w1',
        state: 'RUNNING',
        stateInfo: null,
        type: 'ACTION',
        projectId: 'p1',
        createdAt: created,
        updatedAt: null,
        startedAt: created,
        finishedAt: null,
      },
      'TASK_LAUNCHED',
    );
    expect(Object.keys(payload)).toEqual([
      'id',
      'name',
      'workflow_execution_id',
      'workflow_name',
      'workflow_namespace',
      'workflow_id',
      'state',
      'state_info',
      'type',
      'project_id',
      'created_at',
      'updated_at',
      'started_at',
      'finished_at',
      'event',
    ]);
    expect(payload).toMatchObject({
      started_at: '2024-03-05 07:08:09',
      finished_at: null,
      updated_at: null,
      event: 'TASK_LAUNCHED',
    });
  });
});

describe('payload key order on the wire (DSL-16.4)', () => {
  // A job read back from the outbox's jsonb column has its keys in jsonb's order (shorter keys first).
  const jsonbOrder = <T extends object>(o: T): T =>
    Object.fromEntries(
      Object.entries(o).sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)),
    ) as T;
  const created = new Date('2024-03-05T07:08:09Z');

  it('sends a workflow and a task event with their keys in the reference order, however they arrive', () => {
    const workflow = workflowEventPayload(
      {
        id: 'e1',
        name: 'wf',
        workflowName: 'wf',
        workflowNamespace: '',
        workflowId: 'w1',
        state: 'RUNNING',
        stateInfo: null,
        projectId: 'p1',
        taskExecutionId: null,
        rootExecutionId: null,
        createdAt: created,
        updatedAt: null,
      },
      'WORKFLOW_LAUNCHED',
    );
    const task = taskEventPayload(
      {
        id: 't1',
        name: 'task1',
        workflowExecutionId: 'e1',
        workflowName: 'wf',
        workflowNamespace: '',
        workflowId: 'w1',
        state: 'SUCCESS',
        stateInfo: null,
        type: 'ACTION',
        projectId: 'p1',
        createdAt: created,
        updatedAt: created,
        startedAt: created,
        finishedAt: created,
      },
      'TASK_SUCCEEDED',
    );
    for (const payload of [workflow, task]) {
      const shuffled = jsonbOrder(payload);
      expect(Object.keys(shuffled)).not.toEqual(Object.keys(payload));
      expect(Object.keys(inPayloadOrder(shuffled))).toEqual(Object.keys(payload));
      expect(eventBody(shuffled)).toBe(eventBody(payload));
      expect(Object.keys(JSON.parse(eventBody(shuffled)) as object)).toEqual(Object.keys(payload));
    }
  });
});

describe('publisher selection (DSL-16.2)', () => {
  const notify = [
    { type: 'webhook', url: 'http://a' },
    { type: 'webhook', url: 'http://b', event_types: ['WORKFLOW_SUCCEEDED'] },
    { type: 'noop', event_types: [] },
    'not a map',
    null,
  ];

  it('keeps map entries whose event_types is absent, empty or names the event', () => {
    expect(publishersFor(notify, 'WORKFLOW_SUCCEEDED').map((p) => p.url ?? p.type)).toEqual([
      'http://a',
      'http://b',
      'noop',
    ]);
    expect(publishersFor(notify, 'TASK_FAILED').map((p) => p.url ?? p.type)).toEqual(['http://a', 'noop']);
    expect(publishersFor(undefined, 'TASK_FAILED')).toEqual([]);
  });

  it('notifyJobFor returns null when nobody listens', () => {
    const event = { event: 'TASK_FAILED' } as Parameters<typeof notifyJobFor>[3];
    expect(
      notifyJobFor('e1', 3, [{ type: 'webhook', url: 'x', event_types: ['WORKFLOW_FAILED'] }], event),
    ).toBeNull();
    expect(notifyJobFor('e1', 3, [{ type: 'noop' }], event)).toEqual({
      executionId: 'e1',
      seq: 3,
      publishers: [{ type: 'noop' }],
      event,
    });
  });
});
