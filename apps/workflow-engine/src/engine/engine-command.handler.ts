import { randomUUID } from 'node:crypto';
import { type Context, type Span, SpanStatusCode, context, trace } from '@opentelemetry/api';
import { productMetrics, tracer } from '@osc/telemetry';
import type { DataSource, EntityManager } from 'typeorm';
import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_JOB,
  ENGINE_COMMAND_QUEUE,
  ENGINE_TIMER_QUEUE,
  NOTIFY_DELIVER_JOB,
  TIMER_FIRED_JOB,
  type ActionCompletedPayload,
  type ActionRunJob,
  type EngineCommandMessage,
  type NotifyJob,
  type NotifyPublisher,
  type TimerFiredPayload,
  engineCommand,
  isEngineCommandType,
} from '@osc/contracts';
import { AppError, InvalidInputError } from '@osc/errors';
import {
  type CommandMessage,
  DEFAULT_MAX_DELIVERIES,
  type DeliveryInfo,
  type MessagingLogger,
  type OutboxItem,
  type OutboxWriter,
  isRetryableError,
  withTraceData,
  withTraceHeaders,
} from '@osc/messaging';
import { notifyQueueOf } from '@osc/notify';
import {
  type Decision,
  type EngineEffect,
  type EngineEvent,
  type ExecutionSnapshot,
  type WorkflowExecution,
  type WorkflowSpec,
  type EngineChanges,
  ItemsNeeded,
  applyItemChanges,
  decide,
  decideBatch,
  decideInline,
  type HistoryEvent,
  historyEvents,
  formatTimestamp,
  newExecution,
  splitSubWorkflowInput,
} from '@osc/workflow-domain';
import {
  SpecCache,
  appendExecutionEvents,
  appendExecutionEventsOfMany,
  applyChanges,
  applyChangesOfMany,
  failExecutionRow,
  localExecutionEvents,
  findExecutionIdOfTask,
  findWorkflowForRun,
  insertExecution,
  loadTaskItems,
  lockSnapshot,
  lockSnapshots,
} from '@osc/workflow-persistence';
import { StandardActionRunner } from '@osc/actions';
import { runInline } from './inline-actions';
import { batchItemRuns } from './item-run-batches';
import { batchActionRuns } from './action-run-batches';

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

export interface EngineHandlerOptions {
  /** `<public api url>` for async callbacks (`Mistral-Callback-URL`); optional. */
  apiUrl?: string;
  now?: () => Date;
  newId?: () => string;
  /**
   * Complete side-effect-free standard actions (std.noop, std.echo without delay, std.fail) inside
   * the engine's transaction instead of through an executor job (see `inline-actions.ts`); default true.
   */
  inlineActions?: boolean;
  /** Deliveries the bus makes of a failing command (its consumer's `maxDeliveries`); default the bus default. */
  maxDeliveries?: number;
  /** Where failures to apply a command are reported; default one JSON line on stderr. */
  logger?: MessagingLogger;
  /** Where the story of executions is told: one info line per execution and task state change. */
  log?: (fields: Record<string, unknown>, message: string) => void;
}

/**
 * A failure inside `decide` (or an inline action it ran): the engine's pure core threw for this
 * snapshot and these events, so applying them again can only throw again.
 */
class DecisionError extends Error {
  readonly retryable = false;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = cause instanceof Error ? cause.name : 'Error';
  }
}

/** A failure of the database while a decision loaded what it needed (not the pure core's). */
class StoreFailure extends Error {
  constructor(override readonly cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause));
  }
}

/**
 * Failures that no redelivery can cure: `decide` threw, or PostgreSQL refused the data itself
 * (SQLSTATE class 22, data exception — e.g. a NUL character in a result — or 54, program limit
 * exceeded — e.g. a value or row too large).
 */
const isDeterministicFailure = (err: unknown): boolean => {
  if (err instanceof DecisionError) return true;
  const code =
    (err as { driverError?: { code?: unknown }; code?: unknown } | null)?.driverError?.code ??
    (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^(22|54)/.test(code);
};

/** A short, secret-free description of a failure (no SQL parameters: only the error's own message). */
const describeFailure = (err: unknown): string => {
  const e = err instanceof DecisionError ? err.cause : err;
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
};

const stderrLogger: MessagingLogger = {
  warn: (msg, context) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'warn', time: new Date().toISOString(), app: 'workflow-engine', msg, ...context })}\n`,
    ),
  error: (msg, context) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'error', time: new Date().toISOString(), app: 'workflow-engine', msg, ...context })}\n`,
    ),
};

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  type: string;
  deliveryCount: number;
}

/**
 * The engine's only I/O: per command, in one transaction, lock the execution row and load its
 * snapshot, `decide`, write the changes and the outgoing messages (outbox), commit. A redelivered
 * command finds its effect applied and `decide` returns nothing, so handling is idempotent.
 */
export class EngineCommandHandler {
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly specs = new SpecCache();
  private readonly inlineRunner: StandardActionRunner | null;
  private readonly maxDeliveries: number;
  private readonly logger: MessagingLogger;

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly options: EngineHandlerOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.newId = options.newId ?? randomUUID;
    this.inlineRunner = options.inlineActions === false ? null : new StandardActionRunner();
    this.maxDeliveries = options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES;
    this.logger = options.logger ?? stderrLogger;
  }

  /** Events waiting for the batch in progress of their execution, by execution id. */
  private readonly pending = new Map<string, { events: EngineEvent[]; waiters: Waiter[]; ctx: Context }>();
  private readonly draining = new Set<string>();

  /**
   * Handles one bus message; unknown types are rejected (dead-lettered) without retry. Messages of
   * one execution that arrive while a transaction of that execution is running are applied together
   * in the next one (one lock, one snapshot load, one write): each message is acknowledged only
   * after the transaction holding its event committed, so delivery stays at least once.
   *
   * A command that cannot be applied never leaves its execution RUNNING with nothing happening: a
   * failure that another delivery may cure (a lost connection) is logged and the command redelivered;
   * one that cannot be cured (see {@link isDeterministicFailure}), or any failure of the last delivery
   * (`info.deliveryCount` reaching `maxDeliveries`), is logged at error and ends the execution in
   * ERROR with a `state_info` naming the command and the failure, and the command is acknowledged.
   */
  async handle(msg: CommandMessage, info?: DeliveryInfo): Promise<void> {
    if (!isEngineCommandType(msg.type))
      throw new InvalidInputError(`unknown engine command type ${msg.type}`);
    const events = toEngineEvents(msg as EngineCommandMessage);
    if (events.length === 1) return this.enqueue(events[0]!.executionId, events[0]!.event, msg.type, info);
    // several results: each joins its execution's next batch; the message is done when all are
    // (one failing retryably brings the whole message back, and the applied ones are no-ops then)
    await Promise.all(
      events.map((e) => this.enqueue(e.executionId, e.event, 'engine.action-completed', info)),
    );
  }

  private enqueue(executionId: string, event: EngineEvent, type: string, info?: DeliveryInfo): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let batch = this.pending.get(executionId);
      if (!batch) {
        // The trace of the first message of a batch continues into its transaction and what it sends.
        batch = { events: [], waiters: [], ctx: context.active() };
        this.pending.set(executionId, batch);
      }
      batch.events.push(event);
      batch.waiters.push({ resolve, reject, type, deliveryCount: info?.deliveryCount ?? 1 });
      if (!this.draining.has(executionId)) void this.drain(executionId);
    });
  }

  private async drain(executionId: string): Promise<void> {
    this.draining.add(executionId);
    try {
      for (let batch = this.pending.get(executionId); batch; batch = this.pending.get(executionId)) {
        this.pending.delete(executionId);
        try {
          await this.applyEvents(executionId, batch.events, batch.ctx);
          for (const w of batch.waiters) w.resolve();
        } catch (err) {
          if (batch.events.length === 1) {
            const w = batch.waiters[0];
            if (w) await this.onFailure(executionId, w, err);
            continue;
          }
          // one bad event must not fail the others: apply them one by one
          for (let i = 0; i < batch.events.length; i++) {
            const w = batch.waiters[i];
            try {
              await this.applyEvents(executionId, [batch.events[i] as EngineEvent], batch.ctx);
              w?.resolve();
            } catch (one) {
              if (w) await this.onFailure(executionId, w, one);
            }
          }
        }
      }
    } finally {
      this.draining.delete(executionId);
    }
  }

  /**
   * One command of `executionId` failed on its own. Curable and not the last delivery: warn and let
   * the bus redeliver it. Otherwise: end the execution in ERROR and acknowledge the command; if even
   * that fails, the bus gets the command back (and dead-letters it after its last delivery) and the
   * reconciler is left to find the execution.
   */
  private async onFailure(executionId: string, w: Waiter, err: unknown): Promise<void> {
    const context = {
      executionId,
      command: w.type,
      delivery: w.deliveryCount,
      maxDeliveries: this.maxDeliveries,
      error: describeFailure(err),
    };
    if (!isDeterministicFailure(err) && isRetryableError(err) && w.deliveryCount < this.maxDeliveries) {
      this.logger.warn(
        `engine could not apply ${w.type} to execution ${executionId}; the command will be redelivered`,
        context,
      );
      w.reject(err);
      return;
    }
    this.logger.error(
      `engine cannot apply ${w.type} to execution ${executionId}; ending the execution in ERROR`,
      context,
    );
    const stateInfo = `The engine failed to apply the command ${w.type} to this execution [error=${describeFailure(err)}]`;
    try {
      await this.failExecution(executionId, stateInfo);
      w.resolve();
    } catch (failed) {
      this.logger.error(`engine could not end execution ${executionId} in ERROR`, {
        ...context,
        failure: describeFailure(failed),
      });
      w.reject(err);
    }
  }

  /**
   * Ends the execution in ERROR as `force-state` does (tasks, parent, notifications follow the
   * domain's rules); if the execution cannot be loaded or decided either, sets the row alone.
   */
  private async failExecution(executionId: string, stateInfo: string): Promise<void> {
    try {
      const touched = new Map<WorkflowExecution, HistoryEvent[]>();
      await this.dataSource.transaction(async (em) => {
        touched.clear();
        const snapshot = await lockSnapshot(em, executionId, this.specs, []);
        if (!snapshot) return;
        const decision = decide(
          snapshot,
          { type: 'force-state', state: 'ERROR', message: stateInfo },
          this.now(),
          this.newId,
        );
        await this.outbox.add(em, await this.store(em, snapshot, decision, touched));
      });
      announceHistory(touched, this.options.log);
    } catch (err) {
      this.logger.warn(
        `engine could not end execution ${executionId} through its snapshot; setting its row to ERROR`,
        {
          executionId,
          error: describeFailure(err),
        },
      );
      await this.dataSource.transaction((em) => failExecutionRow(em, executionId, stateInfo, this.now()));
    }
  }

  /** Decision requests waiting for a transaction, and the group transactions running. */
  private readonly queued: GroupMember[] = [];
  private running = 0;

  /**
   * Applies `events` to one execution. Requests of different executions that wait at the same time
   * share a transaction (see {@link runGroup}); at most {@link MAX_GROUP_TRANSACTIONS} run at once.
   */
  private applyEvents(executionId: string, events: EngineEvent[], ctx: Context): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ executionId, events, ctx, resolve, reject });
      this.startGroups();
    });
  }

  private startGroups(): void {
    while (this.running < MAX_GROUP_TRANSACTIONS && this.queued.length > 0) {
      const group = this.queued.splice(0, MAX_GROUP_SIZE);
      this.running++;
      void this.runGroup(group).finally(() => {
        this.running--;
        this.startGroups();
      });
    }
  }

  /**
   * One transaction for the decisions of several executions: lock them all (in id order), load their
   * snapshots with one statement, decide each, write each, add every outgoing message, commit; the
   * fixed costs (begin, lock, load, outbox insert, commit) are paid once per group instead of once
   * per command. If the group fails, each member is retried in a transaction of its own, so one bad
   * execution cannot hold the others back.
   */
  private async runGroup(group: GroupMember[]): Promise<void> {
    if (group.length > 1) {
      const spans = group.map((m) => transactionSpan(m, group.length));
      try {
        const touched = new Map<WorkflowExecution, HistoryEvent[]>();
        await this.dataSource.transaction(async (em) => {
          touched.clear();
          const named = new Map(group.map((m) => [m.executionId, namedActions(m.events)]));
          const snapshots = await lockSnapshots(em, [...named.keys()], this.specs, named);
          const decided: { i: number; snapshot: ExecutionSnapshot; decision: Decision }[] = [];
          for (const [i, m] of group.entries()) {
            const snapshot = snapshots.get(m.executionId);
            if (!snapshot) continue;
            decided.push({ i, snapshot, decision: await this.decideEvents(em, snapshot, m.events) });
          }
          // every member's rows in one statement, then each member's history and messages
          await applyChangesOfMany(
            em,
            decided.map(({ snapshot, decision }) => ({
              ex: decision.changes.execution ?? snapshot.execution,
              changes: decision.changes,
              before: snapshot,
            })),
          );
          // every member's history in one statement, its trees in root id order (see appendExecutionEventsOfMany)
          const histories = decided.map(({ snapshot, decision }) => ({
            ex: decision.changes.execution ?? snapshot.execution,
            events: historyEvents(snapshot, decision.changes),
          }));
          const written = await appendExecutionEventsOfMany(em, histories, this.now());
          histories.forEach((h, k) => {
            if ((written[k] ?? 0) > 0) touched.set(h.ex, h.events);
          });
          const items: OutboxItem[] = [];
          for (const { i, snapshot, decision } of decided) {
            const out = await this.storeEffects(
              em,
              decision.changes.execution ?? snapshot.execution,
              decision,
            );
            items.push(...inTrace(spans[i], group[i]!.ctx, out));
          }
          await this.outbox.add(em, batchActionRuns(items));
        });
        announceHistory(touched, this.options.log);
        for (const span of spans) span.end();
        for (const m of group) m.resolve();
        return;
      } catch {
        // fall through: each on its own
        for (const span of spans) {
          span.setAttribute('osc.engine.group_failed', true);
          span.end();
        }
      }
    }
    for (const m of group) {
      const span = transactionSpan(m, 1);
      try {
        const touched = new Map<WorkflowExecution, HistoryEvent[]>();
        await this.dataSource.transaction(async (em) => {
          touched.clear();
          const snapshot = await lockSnapshot(em, m.executionId, this.specs, namedActions(m.events));
          if (!snapshot) return; // deleted execution: nothing to do
          const out = await this.store(
            em,
            snapshot,
            await this.decideEvents(em, snapshot, m.events),
            touched,
          );
          await this.outbox.add(em, batchActionRuns(inTrace(span, m.ctx, out)));
        });
        announceHistory(touched, this.options.log);
        m.resolve();
      } catch (err) {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR });
        m.reject(err);
      } finally {
        span.end();
      }
    }
  }

  private async decideEvents(
    em: EntityManager,
    snapshot: ExecutionSnapshot,
    events: readonly EngineEvent[],
  ): Promise<Decision> {
    // each inline round is a later moment, at least 1 ms after the previous one: tasks created by
    // successive rounds keep their order in lists sorted by created_at (Mistral's default sort)
    let prev = 0;
    /** Changes of the earlier rounds of this transaction, not yet in the database. */
    const earlier: EngineChanges[] = [];
    const decideEvents = async (s: ExecutionSnapshot, evs: readonly EngineEvent[]): Promise<Decision> => {
      prev = Math.max(this.now().getTime(), prev + 1);
      const now = new Date(prev);
      // with-items rows are loaded when a decision asks for them (the next items to start, or every
      // item when a task completes), then the same events are decided again with them
      let current = s;
      for (let attempt = 0; ; attempt++) {
        try {
          const d =
            evs.length === 1
              ? decide(current, evs[0] as EngineEvent, now, this.newId)
              : decideBatch(current, evs, now, this.newId);
          earlier.push(d.changes);
          return d;
        } catch (err) {
          if (!(err instanceof ItemsNeeded) || attempt >= MAX_ITEM_LOADS) throw err;
          const asked = new Set(err.requests.map((r) => r.taskExecutionId));
          let loads = await loadTaskItems(em, err.requests).catch((e: unknown) =>
            Promise.reject(new StoreFailure(e)),
          );
          for (const c of earlier)
            loads = applyItemChanges(loads, c).filter((l) => asked.has(l.taskExecutionId));
          current = {
            ...current,
            items: [...(current.items ?? []).filter((l) => !asked.has(l.taskExecutionId)), ...loads],
          };
        }
      }
    };
    const runner = this.inlineRunner;
    try {
      return runner
        ? await decideInline(snapshot, events, decideEvents, (ex, e) => runInline(runner, ex, e))
        : await decideEvents(snapshot, events);
    } catch (err) {
      // the database failed while loading items: as any failure of the store
      if (err instanceof StoreFailure) throw err.cause;
      // an AppError of an inline action may be transient (it says so); anything else thrown here is the pure core's
      throw err instanceof AppError ? err : new DecisionError(err);
    }
  }

  /** Writes a decision's rows; returns its outgoing messages for the outbox. */
  /** `touched`: executions that got history entries, announced in this process after the commit. */
  private async store(
    em: EntityManager,
    snapshot: ExecutionSnapshot,
    decision: Decision,
    touched: Map<WorkflowExecution, HistoryEvent[]>,
  ): Promise<OutboxItem[]> {
    await applyChanges(em, decision.changes.execution ?? snapshot.execution, decision.changes, snapshot);
    return this.storeHistoryAndEffects(em, snapshot, decision, touched);
  }

  /** What {@link store} writes after a decision's rows: its history entries; returns its outgoing messages. */
  private async storeHistoryAndEffects(
    em: EntityManager,
    snapshot: ExecutionSnapshot,
    decision: Decision,
    touched: Map<WorkflowExecution, HistoryEvent[]>,
  ): Promise<OutboxItem[]> {
    const ex = decision.changes.execution ?? snapshot.execution;
    const history = historyEvents(snapshot, decision.changes);
    if ((await appendExecutionEvents(em, ex, history, this.now())) > 0) touched.set(ex, history);
    return this.storeEffects(em, ex, decision);
  }

  /** A decision's outgoing messages (for the outbox). */
  private async storeEffects(
    em: EntityManager,
    ex: WorkflowExecution,
    decision: Decision,
  ): Promise<OutboxItem[]> {
    const items: OutboxItem[] = [];
    for (const effect of decision.commands) items.push(...(await this.effectItems(em, ex, decision, effect)));
    return batchItemRuns(items);
  }

  private async effectItems(
    em: EntityManager,
    ex: WorkflowExecution,
    decision: Decision,
    e: EngineEffect,
  ): Promise<OutboxItem[]> {
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
            workflowName: ex.workflowName,
            workflowNamespace: ex.workflowNamespace,
            workflowExecutionId: ex.id,
            rootExecutionId: ex.rootExecutionId,
            taskExecutionId: e.taskExecutionId,
            taskName: e.taskName,
            actionExecutionId: e.actionExecutionId,
            projectId: ex.projectId,
            ...(this.options.apiUrl
              ? { callbackUrl: `${this.options.apiUrl}/v2/action_executions/${e.actionExecutionId}` }
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
      case 'start-sub-workflow':
        return this.startSubWorkflow(em, ex, e);
      case 'notify-parent': {
        const parentId = await findExecutionIdOfTask(em, e.taskExecutionId);
        if (!parentId) return [];
        return [
          bus(
            engineCommand(`sub-workflow-completed:${e.subExecutionId}`, 'engine.sub-workflow-completed', {
              executionId: parentId,
              taskExecutionId: e.taskExecutionId,
              subExecutionId: e.subExecutionId,
              state: e.state,
              output: e.output,
              stateInfo: e.stateInfo,
            }),
          ),
        ];
      }
      case 'notify-parent-rerun': {
        const parentId = await findExecutionIdOfTask(em, e.taskExecutionId);
        if (!parentId) return [];
        return [
          bus(
            engineCommand(
              `sub-workflow-rerun:${e.subExecutionId}:${this.newId()}`,
              'engine.sub-workflow-rerun',
              {
                executionId: parentId,
                taskExecutionId: e.taskExecutionId,
                subExecutionId: e.subExecutionId,
              },
            ),
          ),
        ];
      }
      case 'control-sub-execution': {
        const id = `${e.command}:${e.subExecutionId}:${this.newId()}`;
        const msg =
          e.command === 'pause'
            ? engineCommand(id, 'engine.pause-execution', { executionId: e.subExecutionId })
            : e.command === 'resume'
              ? engineCommand(id, 'engine.resume-execution', { executionId: e.subExecutionId })
              : engineCommand(id, 'engine.cancel-execution', {
                  executionId: e.subExecutionId,
                  message: e.message ?? null,
                });
        return [bus(msg)];
      }
      case 'control-parent-execution': {
        const parentId = await findExecutionIdOfTask(em, e.taskExecutionId);
        if (!parentId) return [];
        // the parent task sees its sub-execution as its action moving to PAUSED or back to RUNNING
        const id = `${e.command}-up:${ex.id}:${this.newId()}`;
        return [
          bus(
            engineCommand(id, 'engine.action-state-changed', {
              executionId: parentId,
              taskExecutionId: e.taskExecutionId,
              actionExecutionId: e.subExecutionId,
              state: e.command === 'pause' ? 'PAUSED' : 'RUNNING',
            }),
          ),
        ];
      }
      case 'notify':
        return this.notifyItems(ex, decision, e);
    }
  }

  /**
   * Creates the child execution row (id chosen by `decide`, so a redelivery inserts nothing twice) and
   * its start command; an unknown workflow or invalid input is reported back to the parent (DSL-13.6).
   */
  private async startSubWorkflow(
    em: EntityManager,
    parent: WorkflowExecution,
    e: Extract<EngineEffect, { type: 'start-sub-workflow' }>,
  ): Promise<OutboxItem[]> {
    const namespace = String(e.params['namespace'] ?? parent.workflowNamespace);
    const visibility = { kind: 'project', projectId: parent.projectId } as const;
    const candidates = parent.workflowName.includes('.')
      ? [
          `${parent.workflowName.slice(0, parent.workflowName.lastIndexOf('.'))}.${e.workflowName}`,
          e.workflowName,
        ]
      : [e.workflowName];
    let stored = null;
    for (const name of candidates) {
      stored = await findWorkflowForRun(em, {
        identifier: name,
        namespace,
        projectId: parent.projectId,
        visibility,
      });
      if (stored) break;
    }
    const fail = (message: string): OutboxItem[] => [
      bus(
        engineCommand(`sub-workflow-start-failed:${e.subExecutionId}`, 'engine.sub-workflow-start-failed', {
          executionId: parent.id,
          taskExecutionId: e.taskExecutionId,
          message,
        }),
      ),
    ];
    if (!stored) return fail(`Failed to find workflow [name=${e.workflowName}] [namespace=${namespace}]`);
    const spec = stored.spec as WorkflowSpec;
    const { input, params } = splitSubWorkflowInput(spec, e.input);
    let child: WorkflowExecution;
    try {
      child = newExecution(
        {
          id: e.subExecutionId,
          spec,
          workflowId: stored.id,
          workflowNamespace: stored.namespace,
          projectId: parent.projectId,
          input,
          params: { ...e.params, ...params },
          taskExecutionId: e.taskExecutionId,
          rootExecutionId: e.rootExecutionId,
        },
        this.now(),
      );
    } catch (err) {
      if (err instanceof AppError) return fail(err.message);
      throw err;
    }
    await insertExecution(em, child, { parentExecutionId: parent.id });
    return [bus(engineCommand(`start:${child.id}`, 'engine.start-execution', { executionId: child.id }))];
  }

  /** Notification jobs (issue 7): one per event, partitioned by execution for ordered delivery. */
  private notifyItems(
    ex: WorkflowExecution,
    decision: Decision,
    e: Extract<EngineEffect, { type: 'notify' }>,
  ): OutboxItem[] {
    const publishers = ex.params['notify'] as NotifyPublisher[] | undefined;
    if (!Array.isArray(publishers) || publishers.length === 0) return [];
    const wanted = publishers.filter((p) => !p.event_types || p.event_types.includes(e.event));
    if (wanted.length === 0) return [];
    const common = {
      workflow_name: ex.workflowName,
      workflow_namespace: ex.workflowNamespace,
      workflow_id: ex.workflowId,
      project_id: ex.projectId,
    };
    let event: NotifyJob['event'];
    if (e.taskExecutionId) {
      const t = [...decision.changes.tasksCreated, ...decision.changes.tasksUpdated].find(
        (x) => x.id === e.taskExecutionId,
      );
      if (!t) return [];
      event = {
        id: t.id,
        name: t.name,
        workflow_execution_id: ex.id,
        ...common,
        state: e.state,
        state_info: e.stateInfo,
        type: t.type,
        created_at: formatTimestamp(t.createdAt)!,
        updated_at: formatTimestamp(t.updatedAt),
        // times as they were at the event: one decision may take the task further (inline actions)
        started_at: formatTimestamp(e.startedAt !== undefined ? e.startedAt : t.startedAt),
        finished_at: formatTimestamp(e.finishedAt !== undefined ? e.finishedAt : t.finishedAt),
        event: e.event as NotifyJob['event']['event'] & `TASK_${string}`,
      };
    } else {
      event = {
        id: ex.id,
        name: ex.workflowName,
        ...common,
        state: e.state,
        state_info: e.stateInfo,
        task_execution_id: ex.taskExecutionId,
        root_execution_id: ex.rootExecutionId,
        created_at: formatTimestamp(ex.createdAt)!,
        updated_at: formatTimestamp(ex.updatedAt),
        event: e.event as NotifyJob['event']['event'] & `WORKFLOW_${string}`,
      };
    }
    const job: NotifyJob = { executionId: ex.id, seq: Date.now(), publishers: wanted, event };
    return [
      {
        destination: 'jobs',
        queue: notifyQueueOf(ex.rootExecutionId ?? ex.id),
        job: {
          id: this.newId(),
          name: NOTIFY_DELIVER_JOB,
          data: job,
          attempts: 5,
          backoff: { type: 'exponential', delayMs: 500 },
        },
        partitionKey: ex.rootExecutionId ?? ex.id,
      },
    ];
  }
}

/** Item loads one decision may ask for before it is given up (each asks for more than the last). */
const MAX_ITEM_LOADS = 4;

/** Group transactions one engine runs at once, and executions per group. */
const MAX_GROUP_TRANSACTIONS = 4;
const MAX_GROUP_SIZE = 32;

interface GroupMember {
  executionId: string;
  events: EngineEvent[];
  /** The trace context of the message that brought the events. */
  ctx: Context;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * One span per execution and transaction, under the trace of the message that brought its events
 * (a transaction shared by several executions has one span in each of their traces).
 */
function transactionSpan(m: GroupMember, groupSize: number): Span {
  return tracer().startSpan(
    'engine transaction',
    {
      attributes: {
        'osc.execution.id': m.executionId,
        'osc.engine.events': m.events.length,
        'osc.engine.group_size': groupSize,
      },
    },
    m.ctx,
  );
}

/** The outgoing items carrying the trace of this execution's transaction span (not another member's). */
function inTrace(span: Span | undefined, ctx: Context, items: OutboxItem[]): OutboxItem[] {
  if (!span) return items;
  return context.with(trace.setSpan(ctx, span), () =>
    items.map((item) =>
      item.destination === 'bus'
        ? { ...item, message: withTraceHeaders(item.message) }
        : { ...item, job: withTraceData(item.job) },
    ),
  );
}

/**
 * Only the action rows the events name (plus plain tasks' and failed ones): with-items items are
 * counted in their task. Those completed with ERROR also need their position in the task (the
 * failure summary's `idx`); the others do not, which spares the store a window over every action.
 */
const namedActions = (events: readonly EngineEvent[]): { ids: string[]; failing: string[] } => ({
  ids: events.flatMap((e) => ('actionExecutionId' in e ? [e.actionExecutionId] : [])),
  failing: events.flatMap((e) =>
    e.type === 'action-completed' && e.state === 'ERROR' ? [e.actionExecutionId] : [],
  ),
});

const bus = (message: EngineCommandMessage): OutboxItem => ({
  destination: 'bus',
  queue: ENGINE_COMMAND_QUEUE,
  message,
});

/** Tells this process's event streams (embedded mode, or an API beside the engine) that history grew. */
function announceHistory(
  touched: ReadonlyMap<WorkflowExecution, HistoryEvent[]>,
  log: EngineHandlerOptions['log'],
): void {
  for (const [ex, history] of touched) {
    localExecutionEvents.emit('events', {
      projectId: ex.projectId,
      rootExecutionId: ex.rootExecutionId ?? ex.id,
    });
    for (const e of history) {
      if (e.state !== e.previousState)
        productMetrics.transitions.labels(e.subject, e.previousState ?? 'NONE', e.state).inc();
    }
    if (!log) continue;
    for (const e of history) {
      if (e.subject === 'action' || e.state === e.previousState) continue;
      const ids = {
        executionId: e.executionId,
        rootExecutionId: ex.rootExecutionId ?? ex.id,
        projectId: ex.projectId,
      };
      if (e.subject === 'execution') {
        log(
          {
            ...ids,
            workflow: e.name,
            state: e.state,
            previousState: e.previousState,
            stateInfo: e.stateInfo ?? undefined,
          },
          `execution ${e.state}`,
        );
      } else {
        log(
          {
            ...ids,
            taskExecutionId: e.taskExecutionId,
            task: e.name,
            state: e.state,
            previousState: e.previousState,
            ...(e.details.retryNo ? { retryNo: e.details.retryNo } : {}),
            stateInfo: e.stateInfo ?? undefined,
          },
          `task ${e.state}`,
        );
      }
    }
  }
}
