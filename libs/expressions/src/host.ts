/**
 * What the engine supplies to expressions: Mistral's built-in functions read workflow state through
 * this interface, so the evaluators stay pure (no clock, no I/O of their own; randomness only through `random`).
 * Every member is optional; a function whose member is missing fails with a clear error, except
 * `env()` / `global()` which fall back to the data context (`__env`, top-level keys) as Mistral does.
 * Maps returned here are plain JSON-like objects (timestamps as `YYYY-MM-DD HH:MM:SS` strings).
 * Errors of the @osc/errors hierarchy thrown by a member (e.g. TransientError) reach the caller
 * unchanged; any other exception becomes an ExpressionError naming the expression.
 */
export interface ExpressionHost {
  /** `task(name?)`: without a name the current task; unknown → null. */
  task?(name?: string): unknown;
  /** `tasks(workflow_execution_id?, recursive?, state?, flat?)`. */
  tasks?(filter: TasksFilter): unknown[];
  /** `execution()`: {id, name, spec, input, state, params, created_at, updated_at, root_execution_id}. */
  execution?(): unknown;
  /** `executions(id?, root_execution_id?, state?, from_time?, to_time?)`. */
  executions?(filter: ExecutionsFilter): unknown[];
  /** `env()`: the execution environment ({} when none). */
  env?(): unknown;
  /** `global(name)`: a value of the execution's global context, or null. */
  global?(name: string): unknown;
  /** `uuid()`: a new UUID string. */
  uuid?(): string;
  /** Current time, for `now()`. */
  now?(): Date;
  /**
   * A float in [0, 1), for yaql's `random()` and Jinja's `random` filter and `lipsum()`
   * (Math.random when the host supplies none).
   */
  random?(): number;
}

export interface TasksFilter {
  workflowExecutionId?: string | null;
  recursive?: boolean;
  state?: string | null;
  flat?: boolean;
}

export interface ExecutionsFilter {
  id?: string | null;
  rootExecutionId?: string | null;
  state?: string | null;
  fromTime?: string | null;
  toTime?: string | null;
}
