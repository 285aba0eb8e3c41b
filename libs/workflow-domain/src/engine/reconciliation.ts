/**
 * Reconciliation decisions (issue #15): what to do about work whose owner died. Pure: the facts, the
 * bounds and `now` (the database clock, which writes the heartbeats) come in as arguments; the app
 * reads the facts and delivers the answer as a normal engine command, so the task's policies
 * (retry, on-error) decide what follows, as for any other action error.
 */
import type { JsonMap } from './model';

/**
 * The error an action gets when its executor stopped before reporting (Mistral's action heartbeat
 * checker: `[action_heartbeat] max_missed_heartbeats` × `check_interval`). The redelivery path uses
 * the same words: keep them as they are.
 */
export const EXECUTOR_LOST = 'the executor running this action stopped before reporting a result';

/** `EXECUTOR_LOST (executor <id>, last heartbeat <time>)`. */
export const executorLostMessage = (executorId: string | null, lastHeartbeat: Date | null): string =>
  `${EXECUTOR_LOST} (executor ${executorId ?? 'unknown'}, last heartbeat ${lastHeartbeat ? lastHeartbeat.toISOString() : 'unknown'})`;

/** The bounds, in milliseconds. */
export interface ReconcileBounds {
  /** An executor silent for longer is dead (`WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS`). */
  readonly executorDeadAfterMs: number;
  /** A task or execution unchanged for longer with nothing pending is stuck (`WORKFLOW_STUCK_AFTER_SECONDS`). */
  readonly stuckAfterMs: number;
}

const isDead = (lastHeartbeat: Date | null, now: Date, bounds: ReconcileBounds): boolean =>
  lastHeartbeat === null || now.getTime() - lastHeartbeat.getTime() > bounds.executorDeadAfterMs;

/** A RUNNING action claimed by an executor instance. */
export interface ClaimedAction {
  readonly executorId: string;
  /** The instance's last heartbeat; null when its row is gone. */
  readonly lastHeartbeat: Date | null;
  /** The task is `safe-rerun` and the claimed job is known, so the action can simply run again. */
  readonly canRunAgain: boolean;
}

export type LostActionDecision = { kind: 'alive' } | { kind: 'run-again' } | { kind: 'fail'; error: string };

/**
 * DSL-6.10 applied to a dead executor: a `safe-rerun` action runs again; any other fails with
 * {@link executorLostMessage} (its side effects may have happened, so it must not repeat).
 */
export function judgeClaimedAction(a: ClaimedAction, now: Date, bounds: ReconcileBounds): LostActionDecision {
  if (!isDead(a.lastHeartbeat, now, bounds)) return { kind: 'alive' };
  if (a.canRunAgain) return { kind: 'run-again' };
  return { kind: 'fail', error: executorLostMessage(a.executorId, a.lastHeartbeat) };
}

/** The accepted RUNNING actions of a task, by claim and executor. */
export interface TaskActionGroup {
  readonly claimed: boolean;
  /** Null when unclaimed, and for an async action handed over to its external system. */
  readonly executorId: string | null;
  readonly lastHeartbeat: Date | null;
  readonly sampleActionExecutionId: string;
}

/** A sub-execution the task still counts on; `state` null when its row is gone. */
export interface TaskSubExecution {
  readonly id: string;
  readonly state: string | null;
  readonly output: JsonMap;
  readonly stateInfo: string | null;
}

/** A task RUNNING, DELAYED or WAITING in a RUNNING execution with no command or job in the outbox. */
export interface TaskFacts {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly updatedAt: Date;
  readonly timer: { readonly id: string; readonly kind: string; readonly dueAt: string } | null;
  readonly withItems: boolean;
  readonly actions: readonly TaskActionGroup[];
  readonly subExecutions: readonly TaskSubExecution[];
}

export type StuckTaskDecision =
  | { kind: 'leave' }
  /** The timer's job was lost: fire it now (`timer:<id>`; ignored if the task moved on). */
  | { kind: 'fire-timer'; timerId: string; timerKind: string; reason: string }
  /** The child finished but the parent never heard: tell it again (`sub-workflow-completed:<id>`). */
  | {
      kind: 'complete-sub-workflow';
      sub: TaskSubExecution & { state: 'SUCCESS' | 'ERROR' | 'CANCELLED' };
      reason: string;
    }
  /** The action's job was never picked up: fail the action; retry/on-error decide. */
  | { kind: 'fail-action'; actionExecutionId: string; error: string }
  /** Nothing can take the task further: fail it (DSL-13.6), and with it the execution. */
  | { kind: 'fail-task'; stateInfo: string };

const TERMINAL = new Set(['SUCCESS', 'ERROR', 'CANCELLED']);
const seconds = (ms: number): number => Math.floor(ms / 1000);

/**
 * Decides about one task. Left alone: anything changed within the stuck bound, a pending timer, an
 * action claimed by a live executor or handed to an external system (async), an unclaimed item of a
 * with-items task (it may wait behind the others), a running sub-execution, and an action claimed by
 * a dead executor (the executor check handles those). Otherwise the task is re-driven when a command
 * can take it further (a timer due long ago, a finished child), or failed saying why.
 */
export function judgeStuckTask(t: TaskFacts, now: Date, bounds: ReconcileBounds): StuckTaskDecision {
  const idleMs = now.getTime() - t.updatedAt.getTime();
  if (t.timer) {
    const overdueMs = now.getTime() - Date.parse(t.timer.dueAt);
    if (!(overdueMs > bounds.stuckAfterMs)) return { kind: 'leave' };
    return {
      kind: 'fire-timer',
      timerId: t.timer.id,
      timerKind: t.timer.kind,
      reason: `reconciler: the ${t.timer.kind} timer of task ${t.name} was due ${seconds(overdueMs)} s ago and never fired`,
    };
  }
  if (!(idleMs > bounds.stuckAfterMs)) return { kind: 'leave' };
  const idle = seconds(idleMs);
  if (t.state === 'WAITING') return { kind: 'leave' }; // a join: its execution is judged as a whole
  if (t.state === 'DELAYED') {
    return {
      kind: 'fail-task',
      stateInfo: `reconciler: task ${t.name} was DELAYED with no timer or pending command for ${idle} s`,
    };
  }
  if (t.state !== 'RUNNING') return { kind: 'leave' };
  // a claimed action is live (its executor heartbeats, or it waits for an external system) or is
  // judged by judgeClaimedAction; an unclaimed item may wait behind its siblings' jobs
  if (t.actions.some((g) => g.claimed || t.withItems)) return { kind: 'leave' };
  for (const s of t.subExecutions) if (s.state !== null && !TERMINAL.has(s.state)) return { kind: 'leave' };
  const finished = t.subExecutions.find((s) => s.state !== null && TERMINAL.has(s.state));
  if (finished) {
    return {
      kind: 'complete-sub-workflow',
      sub: finished as TaskSubExecution & { state: 'SUCCESS' | 'ERROR' | 'CANCELLED' },
      reason: `reconciler: sub-workflow ${finished.id} of task ${t.name} ended ${finished.state} but the task did not hear of it for ${idle} s`,
    };
  }
  const unclaimed = t.actions.find((g) => !g.claimed);
  if (unclaimed) {
    return {
      kind: 'fail-action',
      actionExecutionId: unclaimed.sampleActionExecutionId,
      error: `reconciler: task ${t.name} was RUNNING with its action never picked up by an executor and no timer or pending command for ${idle} s`,
    };
  }
  return {
    kind: 'fail-task',
    stateInfo: `reconciler: task ${t.name} was RUNNING with no action, timer or pending command for ${idle} s`,
  };
}

/** A RUNNING execution none of whose tasks is RUNNING, DELAYED, PAUSED, IDLE or has a timer. */
export interface IdleExecutionFacts {
  /** `start` was applied (its context holds `__execution`). */
  readonly started: boolean;
  readonly taskCount: number;
  readonly lastChange: Date;
}

export type IdleExecutionDecision =
  { kind: 'leave' } | { kind: 'start'; reason: string } | { kind: 'fail'; stateInfo: string };

/**
 * An execution whose start command was lost is started again (`start:<id>`, a no-op if it did start);
 * one that started yet has nothing left that could move it is failed saying why.
 */
export function judgeIdleExecution(
  x: IdleExecutionFacts,
  now: Date,
  bounds: ReconcileBounds,
): IdleExecutionDecision {
  const idleMs = now.getTime() - x.lastChange.getTime();
  if (!(idleMs > bounds.stuckAfterMs)) return { kind: 'leave' };
  if (!x.started && x.taskCount === 0) {
    return {
      kind: 'start',
      reason: `reconciler: the execution was RUNNING but never started for ${seconds(idleMs)} s`,
    };
  }
  return {
    kind: 'fail',
    stateInfo: `reconciler: the execution was RUNNING with no running task, timer or pending command for ${seconds(idleMs)} s`,
  };
}
