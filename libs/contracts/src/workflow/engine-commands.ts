/**
 * Engine commands: the messages the workflow engine consumes from the command bus (queue
 * {@link ENGINE_COMMAND_QUEUE}). Each is a discriminated union member keyed by a dotted name; the bus
 * envelope is `{ id, type, payload }` (`CommandMessage` of @osc/messaging) with `type` the name below and
 * `payload` the matching payload. Every payload names the workflow execution it concerns
 * (`executionId`; `engine.actions-completed` names one per result): the engine serialises all
 * commands of one execution with a row lock on it.
 *
 * Idempotency: command ids are deterministic where a redelivery or a duplicate sender is possible
 * (e.g. `action-completed:<actionExecutionId>`), and the engine ignores a command whose effect is
 * already applied (an action execution already completed, a timer already consumed, ...).
 */

/** Completed states an action execution or a sub-workflow can report. */
export const ACTION_RESULT_STATES = ['SUCCESS', 'ERROR', 'CANCELLED'] as const;
export type ActionResultState = (typeof ACTION_RESULT_STATES)[number];

/** Start a freshly created execution (state RUNNING, no task executions yet). */
export interface StartExecutionPayload {
  executionId: string;
}

/**
 * An action execution finished (executor, async callback `PUT /v2/action_executions/{id}`, or a
 * timeout). `result` is the action's value on SUCCESS; `error` its error value (any JSON, usually a
 * message string) on ERROR.
 *
 * `fatal` marks a failure of the workflow's own logic found while preparing the action (action not
 * found, invalid action input, ad-hoc base-input expression error): per DSL-13.6 the task fails and the
 * execution is forced to ERROR at once, without `on-error`. `fatal.message` is the bare error message.
 */
export interface ActionCompletedPayload {
  executionId: string;
  taskExecutionId: string;
  actionExecutionId: string;
  state: ActionResultState;
  result?: unknown;
  error?: unknown;
  fatal?: { message: string };
}

/**
 * Several action executions finished: what an executor reports when results pile up while its
 * previous report is being published (one broker message instead of one each). The only command
 * that concerns several executions: the engine applies each result as an `engine.action-completed`
 * of its own execution and acknowledges the message once all are applied, so a redelivery re-applies
 * the lot and the ones already applied are ignored, as for single results.
 */
export interface ActionsCompletedPayload {
  results: ActionCompletedPayload[];
}

/** An async action moved to PAUSED or back to RUNNING by its callback (DSL-15.1). */
export interface ActionStateChangedPayload {
  executionId: string;
  taskExecutionId: string;
  actionExecutionId: string;
  state: 'PAUSED' | 'RUNNING';
}

/**
 * A sub-workflow execution reached a completed state; sent to the parent execution
 * (`executionId`) for the parent task (`taskExecutionId`). SUCCESS carries the child's output as
 * `output`; ERROR/CANCELLED carry the child's `stateInfo`.
 */
export interface SubWorkflowCompletedPayload {
  executionId: string;
  taskExecutionId: string;
  subExecutionId: string;
  state: ActionResultState;
  output?: unknown;
  stateInfo?: string | null;
}

/**
 * A sub-workflow could not be created (unknown workflow, invalid input): the parent task fails and the
 * parent execution is forced to ERROR (DSL-13.6) with `message` as the error.
 */
export interface SubWorkflowStartFailedPayload {
  executionId: string;
  taskExecutionId: string;
  message: string;
}

/**
 * A task of sub-execution `subExecutionId` was rerun (DSL-15.6): the parent task
 * (`taskExecutionId` of execution `executionId`) and the parent execution go back to RUNNING and wait
 * for the sub-execution again; the same goes on up to the root.
 */
export interface SubWorkflowRerunPayload {
  executionId: string;
  taskExecutionId: string;
  subExecutionId: string;
}

/** Pause a RUNNING execution (and its running sub-executions, DSL-15.1). */
export interface PauseExecutionPayload {
  executionId: string;
  message?: string | null;
}

/** Resume a PAUSED execution; `env` is merged into the stored env first (DSL-15.2). */
export interface ResumeExecutionPayload {
  executionId: string;
  env?: Record<string, unknown>;
}

/** Cancel an execution (DSL-15.3); running sub-executions are cancelled recursively. */
export interface CancelExecutionPayload {
  executionId: string;
  message?: string | null;
}

/**
 * Force SUCCESS or ERROR (DSL-15.4); `message` becomes state_info. With `taskExecutionId` (the
 * reconciler, ERROR only) that task fails with the message and the execution with it (DSL-13.6),
 * provided the task is unfinished and unchanged since `taskUpdatedAt` (ISO time): a task that moved
 * on meanwhile was not stuck after all.
 */
export interface ForceExecutionStatePayload {
  executionId: string;
  state: 'SUCCESS' | 'ERROR';
  message?: string | null;
  taskExecutionId?: string;
  taskUpdatedAt?: string;
}

/** Rerun a task in ERROR (DSL-15.6). `reset: false` reruns only failed with-items items. */
export interface RerunTaskPayload {
  executionId: string;
  taskExecutionId: string;
  reset: boolean;
  env?: Record<string, unknown>;
}

/** Skip a task in ERROR (DSL-15.7). */
export interface SkipTaskPayload {
  executionId: string;
  taskExecutionId: string;
}

/** Timer kinds of the engine (task policies, DSL-6). */
export const TIMER_KINDS = ['wait-before', 'wait-after', 'retry', 'timeout'] as const;
export type TimerKind = (typeof TIMER_KINDS)[number];

/**
 * A timer the engine armed came due. Timers are delayed jobs ({@link ENGINE_TIMER_QUEUE}); their
 * processor turns them into this command. `timerId` is stored with the task execution when armed: a
 * timer that no longer matches (the task moved on, was rerun) is ignored.
 */
export interface TimerFiredPayload {
  executionId: string;
  taskExecutionId: string;
  timerId: string;
  kind: TimerKind;
}

/**
 * The engine to itself: start the next waiting items of a with-items task (a decision starts at most
 * a thousand; it sends this for the rest). A redelivered one starts nothing twice: items start once.
 */
export interface StartItemsPayload {
  executionId: string;
  taskExecutionId: string;
}

/** Every engine command, by name. */
export interface EngineCommandPayloads {
  'engine.start-execution': StartExecutionPayload;
  'engine.action-completed': ActionCompletedPayload;
  'engine.actions-completed': ActionsCompletedPayload;
  'engine.action-state-changed': ActionStateChangedPayload;
  'engine.sub-workflow-completed': SubWorkflowCompletedPayload;
  'engine.sub-workflow-start-failed': SubWorkflowStartFailedPayload;
  'engine.sub-workflow-rerun': SubWorkflowRerunPayload;
  'engine.pause-execution': PauseExecutionPayload;
  'engine.resume-execution': ResumeExecutionPayload;
  'engine.cancel-execution': CancelExecutionPayload;
  'engine.force-execution-state': ForceExecutionStatePayload;
  'engine.rerun-task': RerunTaskPayload;
  'engine.skip-task': SkipTaskPayload;
  'engine.timer-fired': TimerFiredPayload;
  'engine.start-items': StartItemsPayload;
}

export type EngineCommandType = keyof EngineCommandPayloads;

export const ENGINE_COMMAND_TYPES = [
  'engine.start-execution',
  'engine.action-completed',
  'engine.actions-completed',
  'engine.action-state-changed',
  'engine.sub-workflow-completed',
  'engine.sub-workflow-start-failed',
  'engine.sub-workflow-rerun',
  'engine.pause-execution',
  'engine.resume-execution',
  'engine.cancel-execution',
  'engine.force-execution-state',
  'engine.rerun-task',
  'engine.skip-task',
  'engine.timer-fired',
  'engine.start-items',
] as const satisfies readonly EngineCommandType[];

/** `PayloadOf<'engine.action-completed'>` is that command's payload. */
export type PayloadOf<T extends EngineCommandType> = EngineCommandPayloads[T];

/** One engine command as a discriminated union: `{ type, payload }`. */
export type EngineCommand = {
  [K in EngineCommandType]: { type: K; payload: EngineCommandPayloads[K] };
}[EngineCommandType];

/** The command bus envelope of an engine command (structurally a `CommandMessage`). */
export type EngineCommandMessage = EngineCommand & { id: string; headers?: Record<string, string> };

export const isEngineCommandType = (type: string): type is EngineCommandType =>
  (ENGINE_COMMAND_TYPES as readonly string[]).includes(type);

/** Builds an engine command envelope; `id` should be deterministic for idempotent senders. */
export const engineCommand = <T extends EngineCommandType>(
  id: string,
  type: T,
  payload: EngineCommandPayloads[T],
): EngineCommandMessage => ({ id, type, payload }) as EngineCommandMessage;
