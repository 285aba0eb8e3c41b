/** States of executions, tasks and action executions (DSL-12.1). */
export const STATES = [
  'IDLE',
  'WAITING',
  'RUNNING',
  'DELAYED',
  'PAUSED',
  'SUCCESS',
  'ERROR',
  'CANCELLED',
  'SKIPPED',
] as const;
export type State = (typeof STATES)[number];

/** States a workflow execution may have (never WAITING, DELAYED or SKIPPED). */
export const EXECUTION_STATES = ['IDLE', 'RUNNING', 'PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export type TaskState = State;

export const ACTION_STATES = ['IDLE', 'RUNNING', 'PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED'] as const;
export type ActionState = (typeof ACTION_STATES)[number];

const COMPLETED: ReadonlySet<string> = new Set(['SUCCESS', 'ERROR', 'CANCELLED', 'SKIPPED']);

/** SUCCESS, ERROR, CANCELLED or SKIPPED. */
export const isCompleted = (s: string): boolean => COMPLETED.has(s);

/**
 * Workflow and action execution transitions (DSL-12.2); staying in the same state is always allowed.
 * Mistral: SUCCESS is final; ERROR can only go back to RUNNING (rerun).
 */
const NEXT: Readonly<Record<ExecutionState, readonly ExecutionState[]>> = {
  IDLE: ['RUNNING', 'ERROR', 'CANCELLED'],
  RUNNING: ['PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED'],
  PAUSED: ['RUNNING', 'ERROR', 'CANCELLED'],
  CANCELLED: ['RUNNING'],
  ERROR: ['RUNNING'],
  SUCCESS: [],
};

/** True when an execution may move from `from` to `to` (the same state included). */
export const isValidExecutionTransition = (from: ExecutionState, to: ExecutionState): boolean =>
  from === to || NEXT[from].includes(to);

/** The states an execution may move to `to` from: the compare-and-set allowed set. */
export const allowedExecutionSources = (to: ExecutionState): ExecutionState[] =>
  EXECUTION_STATES.filter((from) => isValidExecutionTransition(from, to));
