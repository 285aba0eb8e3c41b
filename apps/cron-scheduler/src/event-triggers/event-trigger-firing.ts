import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, engineCommand } from '@osc/contracts';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import type { Clock } from '@osc/platform';
import { type WorkflowExecution, type WorkflowSpec, newExecution, pyJsonDumps } from '@osc/workflow-domain';
import {
  type EventTriggerRecord,
  claimNotification,
  eventTriggersFor,
  insertExecution,
  loadTriggerWorkflows,
  pruneNotifications,
  resolveNamedEnvironment,
} from '@osc/workflow-persistence';
import { type Notification, eventParams } from './notification';

/** The description of an execution an event trigger starts, as Mistral writes it (a JSON text). */
export function eventTriggerExecutionDescription(trigger: {
  readonly id: string;
  readonly name: string;
}): string {
  return pyJsonDumps({
    description: `Workflow execution created by event trigger '(${trigger.id})'.`,
    triggered_by: { type: 'event_trigger', id: trigger.id, name: trigger.name },
  });
}

/**
 * Mistral's choice among the triggers of an event: public ones, and those of the project the
 * notification's context names.
 */
export const triggersToFire = (
  triggers: readonly EventTriggerRecord[],
  n: Notification,
): EventTriggerRecord[] =>
  triggers.filter((t) => t.scope === 'public' || t.projectId === n.context['project_id']);

export interface EventFiringResult {
  /** False when the notification had been handled before (a redelivery): nothing was started. */
  readonly firstTime: boolean;
  readonly executionIds: readonly string[];
}

export interface EventFiringOptions {
  readonly log?: (level: 'warn' | 'error', message: string) => void;
  /** Runs inside the transaction just before it commits (crash tests). */
  readonly beforeCommit?: (tx: { query(sql: string, params?: unknown[]): Promise<unknown> }) => Promise<void>;
}

/**
 * Turns one notification into executions, exactly once: in one transaction it records the message id
 * (a second delivery of the same notification, to this or another replica, finds it and starts
 * nothing), creates an execution row per trigger to fire and writes their `engine.start-execution`
 * commands to the outbox. The caller acks the AMQP message only after this has committed.
 */
export class EventTriggerFiring {
  constructor(
    private readonly db: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    private readonly options: EventFiringOptions = {},
  ) {}

  async handle(exchange: string, topic: string, n: Notification): Promise<EventFiringResult> {
    // Most notifications on a topic match no trigger: look before writing anything.
    const candidates = triggersToFire(await eventTriggersFor(this.db, exchange, topic, n.eventType), n);
    if (candidates.length === 0) return { firstTime: true, executionIds: [] };
    const started: string[] = [];
    let firstTime = true;
    await this.db.transaction(async (em) => {
      started.length = 0;
      const now = this.clock.now();
      firstTime = await claimNotification(em, n.messageId, now);
      if (!firstTime) return;
      // Read again inside the transaction: a trigger deleted meanwhile fires no more.
      const triggers = triggersToFire(await eventTriggersFor(em, exchange, topic, n.eventType), n);
      const workflows = await loadTriggerWorkflows(
        em,
        triggers.map((t) => t.workflowId),
      );
      const commands: OutboxItem[] = [];
      for (const t of triggers) {
        const wf = workflows.get(t.workflowId);
        if (!wf) {
          this.options.log?.('warn', `event trigger ${t.id}: workflow ${t.workflowId} no longer exists`);
          continue;
        }
        let ex: WorkflowExecution;
        try {
          ex = newExecution(
            {
              id: randomUUID(),
              spec: wf.spec as WorkflowSpec,
              workflowId: wf.id,
              workflowNamespace: wf.namespace,
              projectId: t.projectId,
              description: eventTriggerExecutionDescription(t),
              input: t.workflowInput,
              // An environment named in the params is resolved now, in the trigger's project (as Mistral's engine does).
              params: {
                ...(await resolveNamedEnvironment(em, t.projectId, t.workflowParams)),
                event_params: eventParams(n),
              },
            },
            now,
          );
        } catch (err) {
          this.options.log?.(
            'warn',
            `event trigger ${t.id} cannot start ${wf.name}: ${(err as Error).message}`,
          );
          continue;
        }
        await insertExecution(em, ex);
        commands.push({
          destination: 'bus',
          queue: ENGINE_COMMAND_QUEUE,
          message: engineCommand(`start:${ex.id}`, 'engine.start-execution', { executionId: ex.id }),
        });
        started.push(ex.id);
      }
      await this.outbox.add(em, commands);
      await this.options.beforeCommit?.(em);
    });
    return { firstTime, executionIds: [...started] };
  }

  /** Forgets handled message ids older than `maxAgeMs`. */
  prune(maxAgeMs: number): Promise<number> {
    return pruneNotifications(this.db, new Date(this.clock.now().getTime() - maxAgeMs));
  }
}
