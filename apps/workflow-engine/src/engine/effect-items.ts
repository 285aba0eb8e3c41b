import type { EntityManager } from 'typeorm';
import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_JOB,
  ENGINE_COMMAND_QUEUE,
  ENGINE_TIMER_QUEUE,
  TIMER_FIRED_JOB,
  engineCommand,
  type ActionRunJob,
  type TimerFiredPayload,
} from '@osc/contracts';
import type { OutboxItem } from '@osc/messaging';
import type { Decision, EngineEffect, WorkflowExecution } from '@osc/workflow-domain';
import { actionRunContext } from './action-context';
import { batchItemRuns } from './item-run-batches';
import { notifyItems } from './notify-items';
import {
  parentControlItems,
  startSubWorkflow,
  subExecutionControlItems,
  subWorkflowCompletedItems,
  subWorkflowRerunItems,
} from './sub-workflow-links';

/** Effects whose messages need queries (with the transaction's manager, after the decision's rows). */
const QUERYING_EFFECTS: ReadonlySet<EngineEffect['type']> = new Set([
  'start-sub-workflow',
  'notify-parent',
  'notify-parent-rerun',
  'control-parent-execution',
]);

/**
 * Turns a decision's effects into the outgoing messages of its transaction (the outbox): action runs
 * and timers become jobs, sub-workflow links engine commands (`sub-workflow-links.ts`), state changes
 * notification jobs (`notify-items.ts`).
 */
export class EffectItems {
  constructor(
    /** `<public api url>` for async callbacks (`Mistral-Callback-URL`); optional. */
    private readonly apiUrl: string | undefined,
    private readonly now: () => Date,
    private readonly newId: () => string,
  ) {}

  /**
   * A decision's outgoing messages when none of its effects reads or writes rows (action runs,
   * timers, next items, notifications, control passed down), so they can be made before the
   * decision's rows are written (`GroupTransactions`: the outbox rows then go in the rows'
   * statement); null when one does (a sub-workflow's start inserts its row, a parent's notice reads
   * the parent task's): those are made by {@link of} after the rows.
   */
  withoutQueries(ex: WorkflowExecution, decision: Decision): OutboxItem[] | null {
    if (decision.commands.some((e) => QUERYING_EFFECTS.has(e.type))) return null;
    const items: OutboxItem[] = [];
    for (const effect of decision.commands) {
      const out = this.plainItemsOf(ex, decision, effect);
      if (!out) return null;
      items.push(...out);
    }
    return batchItemRuns(items);
  }

  /** A decision's outgoing messages (for the outbox). */
  async of(em: EntityManager, ex: WorkflowExecution, decision: Decision): Promise<OutboxItem[]> {
    const items: OutboxItem[] = [];
    for (const effect of decision.commands) items.push(...(await this.itemsOf(em, ex, decision, effect)));
    return batchItemRuns(items);
  }

  private async itemsOf(
    em: EntityManager,
    ex: WorkflowExecution,
    decision: Decision,
    e: EngineEffect,
  ): Promise<OutboxItem[]> {
    switch (e.type) {
      case 'start-sub-workflow':
        return startSubWorkflow(em, ex, e, this.now);
      case 'notify-parent':
        return subWorkflowCompletedItems(em, e);
      case 'notify-parent-rerun':
        return subWorkflowRerunItems(em, e, this.newId);
      case 'control-parent-execution':
        return parentControlItems(em, ex, e, this.newId);
      case 'run-action':
      case 'arm-timer':
      case 'start-items':
      case 'control-sub-execution':
      case 'notify':
        return this.plainItemsOf(ex, decision, e) ?? [];
    }
  }

  /** The messages of an effect that needs no query; null for one of {@link QUERYING_EFFECTS}. */
  private plainItemsOf(ex: WorkflowExecution, decision: Decision, e: EngineEffect): OutboxItem[] | null {
    switch (e.type) {
      case 'run-action': {
        const job: ActionRunJob = {
          actionExecutionId: e.actionExecutionId,
          executionId: ex.id,
          taskExecutionId: e.taskExecutionId,
          actionName: e.actionName,
          input: e.input,
          namespace: String(ex.params['namespace'] ?? ex.workflowNamespace),
          ...(ex.workflowName.includes('.')
            ? { workbookName: ex.workflowName.slice(0, ex.workflowName.lastIndexOf('.')) }
            : {}),
          ...(e.itemIndex !== null ? { itemIndex: e.itemIndex } : {}),
          safeRerun: e.safeRerun,
          ...(e.taskData ? { taskData: e.taskData } : {}),
          context: {
            ...actionRunContext(ex, e),
            ...(this.apiUrl
              ? { callbackUrl: `${this.apiUrl}/v2/action_executions/${e.actionExecutionId}` }
              : {}),
            ...(e.timeoutSeconds !== undefined ? { timeoutMs: Math.round(e.timeoutSeconds * 1000) } : {}),
          },
        };
        return [
          {
            destination: 'jobs',
            queue: ACTION_JOB_QUEUE,
            job: { id: e.actionExecutionId, name: ACTION_RUN_JOB, data: job },
          },
        ];
      }
      case 'arm-timer': {
        const data: TimerFiredPayload = {
          executionId: ex.id,
          taskExecutionId: e.taskExecutionId,
          timerId: e.timerId,
          kind: e.kind,
        };
        return [
          {
            destination: 'jobs',
            queue: ENGINE_TIMER_QUEUE,
            job: { id: e.timerId, name: TIMER_FIRED_JOB, data, delayMs: e.delayMs },
          },
        ];
      }
      case 'start-items':
        // to this execution's engine, after the commit: the next items start in a later transaction
        return [
          {
            destination: 'bus',
            queue: ENGINE_COMMAND_QUEUE,
            message: engineCommand(`start-items:${e.taskExecutionId}:${e.cursor}`, 'engine.start-items', {
              executionId: ex.id,
              taskExecutionId: e.taskExecutionId,
            }),
          },
        ];
      case 'control-sub-execution':
        return subExecutionControlItems(e, this.newId);
      case 'notify':
        return notifyItems(ex, decision, e, this.newId);
      case 'start-sub-workflow':
      case 'notify-parent':
      case 'notify-parent-rerun':
      case 'control-parent-execution':
        return null;
    }
  }
}
