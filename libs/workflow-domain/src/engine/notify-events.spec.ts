import { taskNotifyEvent, taskStartEvent, workflowNotifyEvent } from './notify-events';

// DSL-16.3, the one mapping of state changes to notify events (libs/notify only builds payloads).
describe('notify event of a state change (DSL-16.3)', () => {
  it.each([
    [null, 'RUNNING', 'WORKFLOW_LAUNCHED'],
    ['IDLE', 'RUNNING', 'WORKFLOW_LAUNCHED'],
    ['PAUSED', 'RUNNING', 'WORKFLOW_RESUMED'],
    ['ERROR', 'RUNNING', 'WORKFLOW_RERUN'],
    ['CANCELLED', 'RUNNING', 'WORKFLOW_LAUNCHED'],
    ['RUNNING', 'PAUSED', 'WORKFLOW_PAUSED'],
    ['RUNNING', 'SUCCESS', 'WORKFLOW_SUCCEEDED'],
    ['RUNNING', 'ERROR', 'WORKFLOW_FAILED'],
    ['PAUSED', 'CANCELLED', 'WORKFLOW_CANCELLED'],
    [null, 'IDLE', null],
    ['RUNNING', 'RUNNING', null],
  ] as const)('workflow %s -> %s is %s', (from, to, event) => {
    expect(workflowNotifyEvent(from, to)).toBe(event);
  });

  // a task set RUNNING by a start: (rerun, first start, state before)
  it.each([
    [false, true, 'IDLE', 'TASK_LAUNCHED'],
    [false, false, 'IDLE', 'TASK_RESUMED'],
    [false, false, 'WAITING', 'TASK_RESUMED'],
    [false, false, 'PAUSED', 'TASK_RESUMED'],
    [false, false, 'DELAYED', 'TASK_LAUNCHED'],
    [true, false, 'ERROR', 'TASK_RERUN'],
    [false, false, 'RUNNING', null],
  ] as const)('task start (rerun %s, first %s) from %s is %s', (rerun, firstStart, before, event) => {
    expect(taskStartEvent(rerun, firstStart, before)).toBe(event);
  });

  // any other task state change: (from, to, started before)
  it.each([
    ['RUNNING', 'SUCCESS', true, 'TASK_SUCCEEDED'],
    ['RUNNING', 'ERROR', true, 'TASK_FAILED'],
    ['RUNNING', 'CANCELLED', true, 'TASK_CANCELLED'],
    ['RUNNING', 'PAUSED', true, 'TASK_PAUSED'],
    ['ERROR', 'SKIPPED', true, 'TASK_SKIPPED'],
    ['PAUSED', 'RUNNING', true, 'TASK_RESUMED'],
    ['IDLE', 'RUNNING', false, null],
    ['RUNNING', 'WAITING', true, null],
    ['RUNNING', 'DELAYED', true, null],
    ['RUNNING', 'RUNNING', true, null],
  ] as const)('task %s -> %s (started %s) is %s', (from, to, started, event) => {
    expect(taskNotifyEvent(from, to, started)).toBe(event);
  });
});
