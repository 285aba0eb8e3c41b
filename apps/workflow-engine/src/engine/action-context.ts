import type { ActionContext } from '@osc/contracts';
import type { RunAction, WorkflowExecution } from '@osc/workflow-domain';

/** What every run of an action is told about where it runs, on an executor or inline. */
export type ActionRunContext = Omit<ActionContext, 'callbackUrl' | 'timeoutMs' | 'signal' | 'data'>;

/** The run context of `e`, an action of execution `ex`. */
export const actionRunContext = (ex: WorkflowExecution, e: RunAction): ActionRunContext => ({
  workflowName: ex.workflowName,
  workflowNamespace: ex.workflowNamespace,
  workflowExecutionId: ex.id,
  rootExecutionId: ex.rootExecutionId,
  taskExecutionId: e.taskExecutionId,
  taskName: e.taskName,
  actionExecutionId: e.actionExecutionId,
  projectId: ex.projectId,
});
