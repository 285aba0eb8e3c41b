import type { ActionCompletedPayload, EngineCommandMessage } from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import type { EngineEvent } from '@osc/workflow-domain';

/** Maps a bus command to the execution it concerns and the event for `decide`. */
export function toEngineEvent(msg: EngineCommandMessage): { executionId: string; event: EngineEvent } {
  switch (msg.type) {
    case 'engine.start-execution':
      return { executionId: msg.payload.executionId, event: { type: 'start' } };
    case 'engine.action-completed': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'action-completed', ...rest } };
    }
    case 'engine.actions-completed':
      throw new InvalidInputError('engine.actions-completed concerns several executions: see toEngineEvents');
    case 'engine.action-state-changed': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'action-state-changed', ...rest } };
    }
    case 'engine.sub-workflow-completed': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'sub-workflow-completed', ...rest } };
    }
    case 'engine.sub-workflow-start-failed': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'sub-workflow-start-failed', ...rest } };
    }
    case 'engine.sub-workflow-rerun': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'sub-workflow-rerun', ...rest } };
    }
    case 'engine.pause-execution':
      return {
        executionId: msg.payload.executionId,
        event: { type: 'pause', message: msg.payload.message ?? null },
      };
    case 'engine.resume-execution':
      return {
        executionId: msg.payload.executionId,
        event: { type: 'resume', ...(msg.payload.env ? { env: msg.payload.env } : {}) },
      };
    case 'engine.cancel-execution':
      return {
        executionId: msg.payload.executionId,
        event: { type: 'cancel', message: msg.payload.message ?? null },
      };
    case 'engine.force-execution-state':
      return {
        executionId: msg.payload.executionId,
        event: {
          type: 'force-state',
          state: msg.payload.state,
          message: msg.payload.message ?? null,
          ...(msg.payload.taskExecutionId !== undefined
            ? { taskExecutionId: msg.payload.taskExecutionId }
            : {}),
          ...(msg.payload.taskUpdatedAt !== undefined ? { taskUpdatedAt: msg.payload.taskUpdatedAt } : {}),
        },
      };
    case 'engine.rerun-task': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'rerun-task', ...rest, requestId: msg.id } };
    }
    case 'engine.skip-task': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'skip-task', ...rest, requestId: msg.id } };
    }
    case 'engine.timer-fired': {
      const { executionId, ...rest } = msg.payload;
      return { executionId, event: { type: 'timer-fired', ...rest } };
    }
    case 'engine.start-items':
      return {
        executionId: msg.payload.executionId,
        event: { type: 'start-items', taskExecutionId: msg.payload.taskExecutionId },
      };
  }
}

/**
 * The executions and events of a bus command: one, except for `engine.actions-completed`, whose
 * results are each an `action-completed` event of its own execution.
 */
export function toEngineEvents(msg: EngineCommandMessage): { executionId: string; event: EngineEvent }[] {
  if (msg.type !== 'engine.actions-completed') return [toEngineEvent(msg)];
  const results = (msg.payload as { results?: unknown } | null)?.results;
  if (!Array.isArray(results) || results.length === 0)
    throw new InvalidInputError('engine.actions-completed needs a non-empty results list');
  return (results as ActionCompletedPayload[]).map(({ executionId, ...rest }) => {
    if (typeof executionId !== 'string')
      throw new InvalidInputError('every result of engine.actions-completed names its executionId');
    return { executionId, event: { type: 'action-completed', ...rest } };
  });
}
