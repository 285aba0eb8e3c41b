import type { StandardActionRunner } from '@osc/actions';
import type { ActionContext } from '@osc/contracts';
import { AppError } from '@osc/errors';
import { productMetrics } from '@osc/telemetry';
import type { EngineEvent, RunAction, WorkflowExecution } from '@osc/workflow-domain';
import { actionRunContext } from './action-context';

/**
 * Runs one inline action with the executor's outcome rules: an unknown action or invalid input is a
 * fatal task failure (DSL-13.6), an action error an ERROR result.
 */
export async function runInline(
  runner: StandardActionRunner,
  ex: WorkflowExecution,
  e: RunAction,
): Promise<EngineEvent> {
  const started = process.hrtime.bigint();
  let outcome = 'ERROR';
  try {
    const event = await runInlineAction(runner, ex, e);
    if (event.type === 'action-completed') outcome = event.state;
    return event;
  } finally {
    // Timed like an executor's run (docs/metrics.md, osc_action_duration_seconds).
    productMetrics.actionDuration
      .labels(e.actionName, outcome)
      .observe(Number(process.hrtime.bigint() - started) / 1e9);
  }
}

async function runInlineAction(
  runner: StandardActionRunner,
  ex: WorkflowExecution,
  e: RunAction,
): Promise<EngineEvent> {
  const ctx: ActionContext = { ...actionRunContext(ex, e), data: e.taskData };
  const base = {
    type: 'action-completed',
    taskExecutionId: e.taskExecutionId,
    actionExecutionId: e.actionExecutionId,
  } as const;
  try {
    const outcome = await runner.run(e.actionName, e.input, ctx);
    if (outcome.kind === 'success') return { ...base, state: 'SUCCESS', result: outcome.result };
    if (outcome.kind === 'error') return { ...base, state: 'ERROR', error: outcome.error };
    throw new Error(`inline action ${e.actionName} cannot be asynchronous`);
  } catch (err) {
    if (err instanceof AppError && (err.kind === 'not-found' || err.kind === 'invalid')) {
      return { ...base, state: 'ERROR', error: err.message, fatal: { message: err.message } };
    }
    throw err;
  }
}
