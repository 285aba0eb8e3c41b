import type { DataSource } from 'typeorm';
import { type MessagingLogger, type OutboxWriter, isRetryableError } from '@osc/messaging';
import { decide } from '@osc/workflow-domain';
import { type SpecCache, failExecutionRow, lockSnapshot } from '@osc/workflow-persistence';
import type { FailureHandler, Waiter } from './command-batches';
import type { DecisionStore } from './decision-store';
import { type EngineLog, type TouchedExecutions, announceHistory } from './history-announcements';

/**
 * A failure inside `decide` (or an inline action it ran): the engine's pure core threw for this
 * snapshot and these events, so applying them again can only throw again.
 */
export class DecisionError extends Error {
  readonly retryable = false;
  constructor(cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = cause instanceof Error ? cause.name : 'Error';
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

export const stderrLogger: MessagingLogger = {
  warn: (msg, context) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'warn', time: new Date().toISOString(), app: 'workflow-engine', msg, ...context })}\n`,
    ),
  error: (msg, context) =>
    process.stderr.write(
      `${JSON.stringify({ level: 'error', time: new Date().toISOString(), app: 'workflow-engine', msg, ...context })}\n`,
    ),
};

/**
 * What the engine does with a command it could not apply: never leave its execution RUNNING with
 * nothing happening (see {@link onFailure}).
 */
export class FailedCommands implements FailureHandler {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly specs: SpecCache,
    private readonly store: DecisionStore,
    private readonly now: () => Date,
    private readonly newId: () => string,
    private readonly maxDeliveries: number,
    private readonly logger: MessagingLogger,
    private readonly log: EngineLog | undefined,
  ) {}

  /**
   * One command of `executionId` failed on its own. Curable and not the last delivery: warn and let
   * the bus redeliver it. Otherwise: end the execution in ERROR and acknowledge the command; if even
   * that fails, the bus gets the command back (and dead-letters it after its last delivery) and the
   * reconciler is left to find the execution.
   */
  async onFailure(executionId: string, w: Waiter, err: unknown): Promise<void> {
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
      const touched: TouchedExecutions = new Map();
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
        await this.outbox.add(em, await this.store.store(em, snapshot, decision, touched));
      });
      announceHistory(touched, this.log);
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
}
