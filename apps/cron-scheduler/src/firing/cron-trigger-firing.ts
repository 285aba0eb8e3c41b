import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, engineCommand } from '@osc/contracts';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import { productMetrics } from '@osc/telemetry';
import type { Clock } from '@osc/platform';
import {
  type WorkflowExecution,
  type WorkflowSpec,
  advanceCronTrigger,
  cronTriggerExecutionDescription,
  newExecution,
} from '@osc/workflow-domain';
import {
  type CronTriggerUpdate,
  applyCronTriggerUpdates,
  claimDueCronTriggers,
  insertExecution,
  loadTriggerWorkflows,
  resolveNamedEnvironment,
} from '@osc/workflow-persistence';
import { fireUntilDrained } from '../due-poller';

/** One firing, as reported after its transaction committed. */
export interface FiredTrigger {
  readonly triggerId: string;
  readonly triggerName: string;
  readonly scheduledAt: Date;
  /** Null when the trigger fired but could not start an execution (its workflow or input went bad). */
  readonly executionId: string | null;
}

export interface CronFiringOptions {
  /** Triggers claimed and fired per transaction. */
  readonly batchSize: number;
  readonly log?: (level: 'warn' | 'error', message: string) => void;
  /** Called after each committed batch (metrics, benchmarks). */
  readonly onFired?: (fired: readonly FiredTrigger[], committedAt: Date) => void;
  /** Runs inside the batch's transaction just before it commits (crash tests kill the session here). */
  readonly beforeCommit?: (tx: { query(sql: string, params?: unknown[]): Promise<unknown> }) => Promise<void>;
}

/**
 * Fires due cron triggers, exactly once across any number of replicas. The database is the only
 * source of truth: each batch is one transaction that claims due rows with `FOR UPDATE SKIP LOCKED`
 * (replicas take disjoint rows; an API delete holds the row lock too, so a trigger being deleted is
 * either fired before the delete or never), creates each execution row, writes its
 * `engine.start-execution` command to the outbox and advances (or deletes) the trigger. Everything
 * commits together or not at all: a replica dying mid-batch leaves the rows due for another one.
 */
export class CronTriggerFiring {
  constructor(
    private readonly db: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    private readonly options: CronFiringOptions,
  ) {}

  /** Fires every trigger due now; returns how many fired. */
  fireDue(): Promise<number> {
    return fireUntilDrained(() => this.fireBatch(), this.options.batchSize);
  }

  /** One transaction: claim up to batchSize due triggers and fire them. */
  async fireBatch(): Promise<number> {
    const fired: FiredTrigger[] = [];
    await this.db.transaction(async (em) => {
      fired.length = 0;
      const now = this.clock.now();
      const due = await claimDueCronTriggers(em, now, this.options.batchSize);
      if (due.length === 0) return;
      const workflows = await loadTriggerWorkflows(
        em,
        due.map((t) => t.workflowId),
      );
      const updates: CronTriggerUpdate[] = [];
      const commands: OutboxItem[] = [];
      for (const t of due) {
        const advance = advanceCronTrigger(t, now);
        updates.push(advance.kind === 'delete' ? { id: t.id, kind: 'delete' } : { id: t.id, ...advance });
        const wf = workflows.get(t.workflowId);
        let ex: WorkflowExecution | null = null;
        if (!wf)
          this.options.log?.(
            'warn',
            `cron trigger ${t.name} (${t.id}): workflow ${t.workflowId} no longer exists`,
          );
        else {
          try {
            ex = newExecution(
              {
                id: randomUUID(),
                spec: wf.spec as WorkflowSpec,
                workflowId: wf.id,
                workflowNamespace: wf.namespace,
                projectId: t.projectId,
                description: cronTriggerExecutionDescription(t),
                input: t.workflowInput,
                // Mistral resolves an environment named in the params when the trigger fires, in its project.
                params: await resolveNamedEnvironment(em, t.projectId, t.workflowParams),
              },
              this.clock.now(),
            );
          } catch (err) {
            this.options.log?.(
              'warn',
              `cron trigger ${t.name} (${t.id}) cannot start ${wf.name}: ${(err as Error).message}`,
            );
          }
        }
        if (ex) {
          await insertExecution(em, ex);
          commands.push({
            destination: 'bus',
            queue: ENGINE_COMMAND_QUEUE,
            message: engineCommand(`start:${ex.id}`, 'engine.start-execution', { executionId: ex.id }),
          });
        }
        fired.push({
          triggerId: t.id,
          triggerName: t.name,
          scheduledAt: t.nextExecutionTime,
          executionId: ex?.id ?? null,
        });
      }
      await this.outbox.add(em, commands);
      await applyCronTriggerUpdates(em, updates, now);
      await this.options.beforeCommit?.(em);
    });
    if (fired.length) {
      // Committed: how late each firing was against its due time (docs/metrics.md).
      const firedAt = this.clock.now().getTime();
      for (const f of fired) {
        productMetrics.cronLateness.observe(
          Math.max(0, (firedAt - new Date(f.scheduledAt).getTime()) / 1000),
        );
        productMetrics.cronFirings.labels(f.executionId ? 'started' : 'failed').inc();
      }
      this.options.onFired?.(fired, this.clock.now());
    }
    return fired.length;
  }
}
