import type { DataSource } from 'typeorm';
import type { Clock } from '@osc/platform';
import { type ExpirationCutoff, expireExecutionsBatch } from '@osc/workflow-persistence';

/** `[execution_expiration_policy]` of Mistral, as this app's settings (README, docs/workflow-engine.md). */
export interface ExpirationPolicyConfig {
  /** Minutes between two passes (`evaluation_interval`); undefined = the policy is off. */
  readonly evaluationIntervalMinutes?: number;
  /** Remove completed root executions not updated for this many minutes (`older_than`); 0 = off. */
  readonly olderThanMinutes: number;
  /** Keep at most this many completed root executions (`max_finished_executions`); 0 = off. */
  readonly maxFinishedExecutions: number;
  /** Executions removed per transaction (`batch_size`); 0 = all at once. */
  readonly batchSize: number;
  /** Completed states never removed (`ignored_states`). */
  readonly ignoredStates: readonly string[];
}

export const EXPIRATION_OFF: ExpirationPolicyConfig = Object.freeze({
  olderThanMinutes: 0,
  maxFinishedExecutions: 0,
  batchSize: 0,
  ignoredStates: [],
});

/** Mistral runs the policy only with an interval and at least one of the two limits (≥ 1). */
export function isExpirationEnabled(c: ExpirationPolicyConfig): boolean {
  return (
    c.evaluationIntervalMinutes !== undefined &&
    c.evaluationIntervalMinutes > 0 &&
    (c.olderThanMinutes >= 1 || c.maxFinishedExecutions >= 1)
  );
}

export interface ExpirationLog {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * The execution expiration policy: every `evaluation_interval` (and once at start, as Mistral's
 * `run_immediately`), remove completed root executions older than `older_than`, then those beyond
 * the newest `max_finished_executions`, in transactions of `batch_size`. Running executions, ones
 * with an unfinished descendant and sub-workflow executions (removed only with their root) are
 * never removed. Safe with replicas: a batch runs under a transaction-scoped advisory lock, and a
 * replica that finds it taken leaves the pass to the holder.
 */
export class ExpirationPolicy {
  private timer?: NodeJS.Timeout;
  private pass?: Promise<number>;
  private stopped = false;

  constructor(
    private readonly db: DataSource,
    private readonly clock: Clock,
    private readonly config: ExpirationPolicyConfig,
    private readonly log: ExpirationLog,
  ) {}

  start(): void {
    if (!isExpirationEnabled(this.config)) return;
    const every = (this.config.evaluationIntervalMinutes as number) * 60_000;
    const tick = () => {
      if (this.stopped) return;
      this.pass = this.runOnce().catch((err: unknown) => {
        this.log.warn({ err }, 'execution expiration pass failed; retrying at the next interval');
        return 0;
      });
      void this.pass.finally(() => {
        if (!this.stopped) this.timer = setTimeout(tick, every);
      });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.pass;
  }

  /**
   * One pass: batches until what was due at the pass's scans is gone (or another replica holds the lock). Returns how many
   * were removed. Logs a line per batch (its ids and duration) and, when it removed anything, one
   * for the pass (count, batches, duration) — the figures the expiration benchmark reads.
   */
  async runOnce(): Promise<number> {
    const c = this.config;
    const expireBefore =
      c.olderThanMinutes >= 1
        ? new Date(this.clock.now().getTime() - c.olderThanMinutes * 60_000)
        : undefined;
    const passStarted = performance.now();
    let total = 0;
    let batches = 0;
    let lockTaken = false;
    let cutoff: ExpirationCutoff | undefined;
    while (!this.stopped) {
      const batchStarted = performance.now();
      const batch = await this.db.transaction(async (em) => {
        const [lock] = (await em.query(
          `SELECT pg_try_advisory_xact_lock(hashtext('workflow-execution-expiration')) AS "ok"`,
        )) as { ok: boolean }[];
        if (!lock?.ok) return null;
        return expireExecutionsBatch(em, {
          expireBefore,
          maxFinishedExecutions: c.maxFinishedExecutions,
          batchSize: c.batchSize,
          ignoredStates: c.ignoredStates,
          cutoff,
        });
      });
      if (batch === null) {
        lockTaken = true;
        break;
      }
      cutoff = batch.cutoff;
      if (batch.removed.length > 0) {
        total += batch.removed.length;
        batches += 1;
        const durationMs = Math.round(performance.now() - batchStarted);
        this.log.info(
          { executionIds: batch.removed, count: batch.removed.length, durationMs },
          'expiration policy removed executions',
        );
      }
      // What finished after the scan waits for the next pass: under a steady load a pass that
      // chased every new finish would never end, rescanning the kept executions batch after batch.
      if (!batch.more) break;
    }
    if (total > 0) {
      const durationMs = Math.round(performance.now() - passStarted);
      this.log.info(
        { count: total, batches, durationMs, yieldedToReplica: lockTaken },
        'expiration policy pass finished',
      );
    }
    return total;
  }
}
