/**
 * Action runs: the engine writes one job per action execution (queue {@link ACTION_JOB_QUEUE}, job name
 * {@link ACTION_RUN_JOB}, job id = the action execution id, so a duplicate add is a no-op). Executor
 * workers run the action and report its outcome to the engine as an `engine.action-completed` command.
 */

/** Everything an action may know about where it runs (std.mistral_http headers, std.javascript `$`). */
export interface ActionContext {
  workflowName: string;
  workflowNamespace: string;
  workflowExecutionId: string;
  rootExecutionId: string | null;
  taskExecutionId: string;
  taskName: string;
  actionExecutionId: string;
  projectId: string;
  /** `<api base>/v2/action_executions/<id>` for async actions; absent when the API base is unknown. */
  callbackUrl?: string;
  /** Hard time limit for this run (task `timeout` policy, DSL-6.6); absent = none. */
  timeoutMs?: number;
  /** Aborted when the run must stop (timeout, shutdown). */
  signal?: AbortSignal;
  /** The task's expression data (`$`), for actions that read it (std.javascript `context`). */
  data?: Record<string, unknown>;
}

/** Payload of an {@link ACTION_RUN_JOB} job. */
export interface ActionRunJob {
  actionExecutionId: string;
  executionId: string;
  taskExecutionId: string;
  /** Action name as the task resolved it (std.* or an ad-hoc action's full name). */
  actionName: string;
  /** The evaluated task input (ad-hoc actions: the ad-hoc action's own input). */
  input: Record<string, unknown>;
  /** Namespace used to resolve ad-hoc actions (then the default namespace). */
  namespace: string;
  /** Workbook name of the workflow, for `<workbook>.<name>` resolution (DSL-7.5). */
  workbookName?: string;
  /**
   * The task's `safe-rerun` (DSL-6.10): when a previous run of this job may have started (its executor
   * died), the action runs again only if true; otherwise it fails instead of repeating side effects.
   */
  safeRerun?: boolean;
  /** with-items index, absent for plain tasks. */
  itemIndex?: number;
  /** The task's expression data, for ad-hoc base-input evaluation (DSL-7.2) and std.javascript. */
  taskData?: Record<string, unknown>;
  context: Omit<ActionContext, 'signal' | 'data'>;
  /**
   * A run of `POST /v2/action_executions` outside any workflow (`executionId` and `taskExecutionId`
   * are empty): the executor writes the outcome to the action execution row itself instead of
   * reporting it to the engine.
   */
  standalone?: boolean;
}

/**
 * Payload of an {@link ACTION_RUN_BATCH_JOB} job: item runs of one task, in item order, or the lone
 * runs one engine transaction started (of one or several executions). Each run is claimed and
 * reported on its own.
 */
export interface ActionRunBatchJob {
  runs: ActionRunJob[];
}

/**
 * What an action returns. `async` means the action completes later through
 * `PUT /v2/action_executions/{id}` (std.async_noop, std.mistral_http).
 * Mistral: results are stored as `{"result": <value>}` (DSL-17.1); an error value is stored the same way.
 */
export type ActionOutcome =
  { kind: 'success'; result: unknown } | { kind: 'error'; error: unknown } | { kind: 'async' };

/**
 * The executor side of actions (implemented by @osc/actions). `run` throws `NotFoundError` for an
 * unknown action and `InvalidInputError` (message `Invalid input [name=..., class=..., missing=[...],
 * unexpected=[...]]`) for bad input: both are fatal task failures (DSL-13.6); any other throw is an
 * action error with the text of DSL-14.3.
 */
export interface ActionRunner {
  run(name: string, input: Record<string, unknown>, ctx: ActionContext): Promise<ActionOutcome>;
  has(name: string): boolean;
}

/** Stored shape of an action execution's output (DSL-17.1). */
export interface StoredActionOutput {
  result: unknown;
}
