import { type ActionContext } from '@osc/contracts';

/** An action context for tests; override what a test looks at. */
export const ctxFor = (over: Partial<ActionContext> = {}): ActionContext => ({
  workflowName: 'wf',
  workflowNamespace: '',
  workflowExecutionId: 'e1',
  rootExecutionId: null,
  taskExecutionId: 't1',
  taskName: 'task1',
  actionExecutionId: '0a1b2c3d-4e5f-6789-abcd-ef0123456789',
  projectId: 'p1',
  ...over,
});
