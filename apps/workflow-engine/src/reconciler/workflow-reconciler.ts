import type { DataSource, EntityManager } from 'typeorm';
import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_JOB,
  ENGINE_COMMAND_QUEUE,
  type EngineCommandMessage,
  engineCommand,
} from '@osc/contracts';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import {
  type ReconcileBounds,
  judgeClaimedAction,
  judgeIdleExecution,
  judgeStuckTask,
} from '@osc/workflow-domain';
import {
  claimUnpickedAction,
  completeStandaloneAction,
  databaseNow,
  deleteDeadServiceInstances,
  executionsWithPendingOutbox,
  findIdleRunningExecutions,
  findLostExecutorActions,
  findStuckTaskCandidates,
  loadIdleExecutionFacts,
  loadTaskFacts,
  lockRunningExecution,
  releaseLostClaim,
  tryLockReconciler,
} from '@osc/workflow-persistence';
import { type ReconcilerLog, jsonLineLog } from './reconciler-log';

export interface ReconcilerSettings {
  /** An executor silent for longer is dead. */
  readonly executorDeadAfterSeconds: number;
  /** A task or execution unchanged for longer with nothing pending is stuck. */
  readonly stuckAfterSeconds: number;
  /** Most rows of each kind one pass looks at. Default 200. */
  readonly batchSize?: number;
}

/** What one pass did about one execution (also logged as a warn line). */
export interface Resolution {
  readonly kind:
    | 'fail-action'
    | 'run-action-again'
    | 'fire-timer'
    | 'complete-sub-workflow'
    | 'fail-task'
    | 'start-execution'
    | 'fail-execution';
  readonly executionId: string | null;
  readonly taskExecutionId?: string;
  readonly actionExecutionId?: string;
  readonly reason: string;
}

/**
 * The workflow reconciler (issue #15): a periodic pass that finds work whose owner died and resumes
 * or ends it, saying why where users look (`state_info`):
 *
 * 1. RUNNING actions claimed by an executor whose heartbeat is older than the dead bound: a
 *    `safe-rerun` one is enqueued again; any other fails through the normal
 *    `engine.action-completed` ERROR command (`action-completed:<id>`, the id an executor's own
 *    report has, so whichever comes second is ignored), and the task's retry/on-error decide.
 * 2. RUNNING, DELAYED or WAITING tasks unchanged for the stuck bound with no live action, pending
 *    timer, outbox row or running sub-execution: re-driven by the command that takes them further
 *    (a lost timer fired, a finished child reported again), otherwise failed.
 * 3. RUNNING executions unchanged for the stuck bound with no active task: started again when the
 *    start was lost, otherwise failed.
 *
 * A pass is one transaction under an advisory lock, so with any number of replicas one pass runs at
 * a time; resolutions leave through the outbox in that transaction, and an execution with outbox
 * rows is never judged, so a resolution is decided once. Executions an engine holds locked are
 * skipped (`SKIP LOCKED`): they are being worked on.
 */
export class WorkflowReconciler {
  private timer?: NodeJS.Timeout;
  private running?: Promise<unknown>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly settings: ReconcilerSettings,
    private readonly log: ReconcilerLog = jsonLineLog,
  ) {}

  /** Runs a pass every `intervalMs` until {@link stop}. */
  start(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.pass()
        .catch((e: unknown) => this.log('error', 'reconciler pass failed', { error: String(e) }))
        .finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass; resolves to what it did (nothing when another replica's pass holds the lock). */
  async pass(): Promise<Resolution[]> {
    const bounds: ReconcileBounds = {
      executorDeadAfterMs: this.settings.executorDeadAfterSeconds * 1000,
      stuckAfterMs: this.settings.stuckAfterSeconds * 1000,
    };
    const limit = this.settings.batchSize ?? 200;
    const done: Resolution[] = [];
    await this.dataSource.transaction(async (em) => {
      if (!(await tryLockReconciler(em))) return;
      const now = await databaseNow(em);
      const busy = await executionsWithPendingOutbox(em);
      const items: OutboxItem[] = [];
      const resolve = (r: Resolution, item?: OutboxItem) => {
        done.push(r);
        if (item) items.push(item);
        if (r.executionId) busy.add(r.executionId);
      };

      for (const a of await findLostExecutorActions(em, this.settings.executorDeadAfterSeconds, limit)) {
        if (a.executionId && busy.has(a.executionId)) continue;
        const canRunAgain = a.executionId !== null && a.rerunJob !== null;
        const verdict = judgeClaimedAction(
          { executorId: a.executorId, lastHeartbeat: a.lastHeartbeat, canRunAgain },
          now,
          bounds,
        );
        const ids = {
          executionId: a.executionId,
          ...(a.taskExecutionId ? { taskExecutionId: a.taskExecutionId } : {}),
          actionExecutionId: a.actionExecutionId,
        };
        if (verdict.kind === 'alive') continue;
        if (verdict.kind === 'run-again') {
          if (!(await releaseLostClaim(em, a.actionExecutionId, a.executorId))) continue;
          const reason = `reconciler: executor ${a.executorId} of safe-rerun action ${a.actionExecutionId} stopped (last heartbeat ${a.lastHeartbeat?.toISOString() ?? 'unknown'}); running it again`;
          const job = {
            id: `rerun:${a.actionExecutionId}:${now.getTime()}`,
            name: ACTION_RUN_JOB,
            data: a.rerunJob,
          };
          resolve(
            { kind: 'run-action-again', ...ids, reason },
            { destination: 'jobs', queue: ACTION_JOB_QUEUE, job },
          );
        } else if (a.executionId === null) {
          await completeStandaloneAction(
            em,
            a.actionExecutionId,
            { state: 'ERROR', error: verdict.error },
            now,
          );
          resolve({ kind: 'fail-action', ...ids, reason: verdict.error });
        } else {
          resolve(
            { kind: 'fail-action', ...ids, reason: verdict.error },
            bus(actionFailed(a.executionId, a.taskExecutionId ?? '', a.actionExecutionId, verdict.error)),
          );
        }
      }

      const candidates = await findStuckTaskCandidates(em, this.settings.stuckAfterSeconds, limit);
      for (const c of candidates) {
        if (busy.has(c.executionId)) continue;
        const r = await this.resolveTask(em, c.executionId, c.taskExecutionId, now, bounds);
        if (r) resolve(r.resolution, r.item);
      }

      for (const x of await findIdleRunningExecutions(em, this.settings.stuckAfterSeconds, limit)) {
        if (busy.has(x.id) || !(await lockRunningExecution(em, x.id))) continue;
        const facts = await loadIdleExecutionFacts(em, x.id);
        if (!facts) continue;
        const verdict = judgeIdleExecution(facts, now, bounds);
        if (verdict.kind === 'start') {
          resolve(
            { kind: 'start-execution', executionId: x.id, reason: verdict.reason },
            bus(engineCommand(`start:${x.id}`, 'engine.start-execution', { executionId: x.id })),
          );
        } else if (verdict.kind === 'fail') {
          const id = `reconcile:${x.id}:${facts.lastChange.getTime()}`;
          resolve(
            { kind: 'fail-execution', executionId: x.id, reason: verdict.stateInfo },
            bus(
              engineCommand(id, 'engine.force-execution-state', {
                executionId: x.id,
                state: 'ERROR',
                message: verdict.stateInfo,
              }),
            ),
          );
        }
      }

      await this.outbox.add(em, items);
      await deleteDeadServiceInstances(em, this.settings.executorDeadAfterSeconds);
    });
    for (const r of done) {
      const { reason, kind, ...ids } = r;
      this.log('warn', reason, { reconciler: kind, ...ids });
    }
    return done;
  }

  private async resolveTask(
    em: EntityManager,
    executionId: string,
    taskExecutionId: string,
    now: Date,
    bounds: ReconcileBounds,
  ): Promise<{ resolution: Resolution; item: OutboxItem } | null> {
    if (!(await lockRunningExecution(em, executionId))) return null;
    const t = await loadTaskFacts(em, taskExecutionId);
    if (!t) return null;
    const verdict = judgeStuckTask(t, now, bounds);
    const ids = { executionId, taskExecutionId };
    switch (verdict.kind) {
      case 'leave':
        return null;
      case 'fire-timer':
        return {
          resolution: { kind: 'fire-timer', ...ids, reason: verdict.reason },
          item: bus(
            engineCommand(`timer:${verdict.timerId}`, 'engine.timer-fired', {
              ...ids,
              timerId: verdict.timerId,
              kind: verdict.timerKind as 'wait-before' | 'wait-after' | 'retry' | 'timeout',
            }),
          ),
        };
      case 'complete-sub-workflow': {
        const s = verdict.sub;
        return {
          resolution: { kind: 'complete-sub-workflow', ...ids, reason: verdict.reason },
          item: bus(
            engineCommand(`sub-workflow-completed:${s.id}`, 'engine.sub-workflow-completed', {
              ...ids,
              subExecutionId: s.id,
              state: s.state,
              output: s.output,
              stateInfo: s.stateInfo,
            }),
          ),
        };
      }
      case 'fail-action':
        // claimed on the reconciler's behalf first: a job delivered late must not start it now
        if (!(await claimUnpickedAction(em, verdict.actionExecutionId))) return null;
        return {
          resolution: {
            kind: 'fail-action',
            ...ids,
            actionExecutionId: verdict.actionExecutionId,
            reason: verdict.error,
          },
          item: bus(actionFailed(executionId, taskExecutionId, verdict.actionExecutionId, verdict.error)),
        };
      case 'fail-task':
        return {
          resolution: { kind: 'fail-task', ...ids, reason: verdict.stateInfo },
          item: bus(
            engineCommand(
              `reconcile:${taskExecutionId}:${t.updatedAt.getTime()}`,
              'engine.force-execution-state',
              {
                executionId,
                state: 'ERROR',
                message: verdict.stateInfo,
                taskExecutionId,
                taskUpdatedAt: t.updatedAt.toISOString(),
              },
            ),
          ),
        };
    }
  }
}

/** The normal ERROR report of an action, with the id its executor's own report has. */
export const actionFailed = (
  executionId: string,
  taskExecutionId: string,
  actionExecutionId: string,
  error: string,
): EngineCommandMessage =>
  engineCommand(`action-completed:${actionExecutionId}`, 'engine.action-completed', {
    executionId,
    taskExecutionId,
    actionExecutionId,
    state: 'ERROR',
    error,
  });

const bus = (message: EngineCommandMessage): OutboxItem => ({
  destination: 'bus',
  queue: ENGINE_COMMAND_QUEUE,
  message,
});
