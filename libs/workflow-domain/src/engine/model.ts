import type { NotifyEventName } from '@osc/contracts';
import type { WorkflowSpec } from '../dsl/model';
import type { ActionState, ExecutionState, TaskState } from './states';

export type Json = unknown;
export type JsonMap = Record<string, unknown>;

/**
 * A workflow execution as the engine sees it. Plain data: the persistence layer maps rows to this
 * and back (`*.mapper.ts` in the app). Timestamps are `Date`s.
 */
export interface WorkflowExecution {
  readonly id: string;
  readonly workflowId: string;
  readonly workflowName: string;
  readonly workflowNamespace: string;
  /** The spec the execution started with (stored with the execution). */
  readonly spec: WorkflowSpec;
  readonly description: string;
  readonly tags: readonly string[];
  readonly projectId: string;
  state: ExecutionState;
  stateInfo: string | null;
  readonly input: JsonMap;
  output: JsonMap;
  /** `env`, `evaluate_env`, `task_name`, `namespace`, `notify`, sub-executions: `root_execution_id`, `task_execution_id`, `index`. */
  params: JsonMap;
  /** Global context: `__execution`, `vars`, global publishes (DSL-9.2 layer 5). */
  context: JsonMap;
  /** Keys of `vars` (excluded from `published_global`, DSL-14.7). */
  varNames: readonly string[];
  readonly taskExecutionId: string | null;
  readonly rootExecutionId: string | null;
  /** Targets kept after a `pause` command, started on resume (DSL-4.5). */
  deferred: DeferredTarget[];
  readonly createdAt: Date;
  updatedAt: Date | null;
}

export interface DeferredTarget {
  readonly target: string;
  readonly event: TransitionEventName;
  readonly fromTaskExecutionId: string;
}

export type TransitionEventName = 'on-success' | 'on-error' | 'on-complete' | 'on-skip';

/**
 * with-items bookkeeping kept in the task's runtime context (`with_items`, shown by the API as
 * Mistral shows it): the number of items and the concurrency. The items themselves live in their own
 * rows ({@link TaskItem}), so that the task row stays the same size whatever the number of items.
 */
export interface WithItemsState {
  count: number;
  /** 0 = all at once. */
  concurrency: number;
}

/** The state of one item in the current attempt of a with-items task: null while it waits to start. */
export type ItemState = 'RUNNING' | 'SUCCESS' | 'ERROR' | 'CANCELLED';

/**
 * Progress of a with-items task (`with_items_progress` in its runtime context, not shown by the API):
 * counters only, so that an item completion rewrites a row of constant size. The per-item states
 * and results are {@link TaskItem} rows, each written when its item starts or completes.
 */
export interface WithItemsProgress {
  /** The items of the attempt start in index order; every item below `cursor` has started (or kept its SUCCESS). */
  cursor: number;
  /** Items started and not completed. */
  running: number;
  /** Items with an accepted outcome (those that kept their SUCCESS from an earlier attempt included). */
  done: number;
}

/**
 * One item of a with-items task (the store's `task_execution_items`): its bound variables, evaluated
 * once when the task starts, and its outcome in the current attempt. Items keep their SUCCESS across
 * a retry or a `reset: false` rerun.
 */
export interface TaskItem {
  readonly taskExecutionId: string;
  readonly index: number;
  /** The item's variables (`{x: <value>}` for `with-items: x in ...`). */
  readonly vars: JsonMap;
  /** null while it waits to start in this attempt, RUNNING, then the accepted outcome. */
  state: ItemState | null;
  /** The accepted result (the action's result or error, the sub-workflow's output); null before. */
  result: unknown;
}

/** An item's outcome as a decision writes it (its variables never change). */
export type TaskItemUpdate = Omit<TaskItem, 'vars'>;

/**
 * Items of one with-items task a decision needs: every one (`count: 'all'`: the results when the
 * task completes, the outcomes when an attempt is prepared), or the next ones to start — the first
 * `count` items with index ≥ `from` that wait to start (state null), in index order.
 */
export interface ItemsRequest {
  readonly taskExecutionId: string;
  readonly from: number;
  readonly count: number | 'all';
}

/** The answer to an {@link ItemsRequest}: the rows it asked for, in index order. */
export interface LoadedItems extends ItemsRequest {
  readonly rows: readonly TaskItem[];
}

/** A pending engine timer (policies, DSL-6): one at a time per task execution. */
export interface TaskTimer {
  readonly id: string;
  readonly kind: 'wait-before' | 'wait-after' | 'retry' | 'timeout';
  readonly dueAt: string;
  /** For `wait-after`: the state the task takes when the timer fires. */
  readonly thenState?: TaskState;
}

/** One arrival at a task (`runtime_context.triggered_by`): the task execution it came from, by which event. */
export interface TaskTrigger {
  task_id: string;
  event: string;
}

/**
 * A sub-execution started by a WORKFLOW task (one per item of a with-items task), as the task keeps
 * it in `runtime_context.sub_executions`: its last known state and, once accepted, its result.
 */
export interface SubUnit {
  id: string;
  /** The with-items index; null for a plain task. */
  index: number | null;
  state: string;
  result: unknown;
  stateInfo: string | null;
  /** False once a retry or rerun started a new attempt: its outcome no longer counts. */
  accepted: boolean;
}

/**
 * A task's runtime record, stored as the JSON object `runtime_context` (the API shows part of it,
 * see `publicRuntimeContext`): the property names are the stored keys, so the record is written and
 * read as it is, without a conversion. Every key is absent until the engine sets it.
 */
export type TaskRuntime = {
  /** The arrivals that created the task, or (a join) that reached it so far. */
  triggered_by?: TaskTrigger[];
  /** The retries made by the retry policy (DSL-6.8); removed by a rerun. */
  retry_task_policy?: { retry_no: number };
  with_items?: WithItemsState;
  with_items_progress?: WithItemsProgress;
  /** The task's timeout for its items (seconds), null without one. */
  with_items_timeout?: number | null;
  /** The pending policy timer (one at a time). */
  timer?: TaskTimer;
  /** The state info the task had when its wait-after delay began, restored when it ends. */
  wait_after_info?: string | null;
  /** The before-start policies ran (they run once per task execution, not again on a retry). */
  pause_before_done?: boolean;
  wait_before_done?: boolean;
  /** `keep-result: false` cleared the result. */
  result_cleared?: boolean;
  sub_executions?: SubUnit[];
  /** A rerun or skip accepted by the API and not yet applied (its request id, see `CONTROL_REQUEST`). */
  control_request?: string;
};

export interface TaskExecution {
  readonly id: string;
  readonly name: string;
  readonly executionId: string;
  readonly type: 'ACTION' | 'WORKFLOW';
  readonly tags: readonly string[];
  state: TaskState;
  stateInfo: string | null;
  /** Inbound context (branch variables only, DSL-14.5). */
  inContext: JsonMap;
  published: JsonMap;
  publishedGlobal: JsonMap;
  /** The engine's bookkeeping of the task (wire and store field `runtime_context`). */
  runtimeContext: TaskRuntime;
  /** Task result (`task().result`): the action result, the sub-workflow output, or item results. */
  result: Json;
  processed: boolean;
  /** `[target, event]` pairs routed to (DSL-4.7). */
  nextTasks: [string, TransitionEventName][];
  errorHandled: boolean;
  startedAt: Date | null;
  finishedAt: Date | null;
  readonly createdAt: Date;
  updatedAt: Date | null;
}

export interface ActionExecution {
  readonly id: string;
  readonly taskExecutionId: string;
  readonly executionId: string;
  readonly name: string;
  state: ActionState;
  stateInfo: string | null;
  readonly input: JsonMap;
  /** `{"result": <value>}` once completed (DSL-17.1). */
  output: JsonMap | null;
  accepted: boolean;
  /** with-items index; null for plain tasks. */
  readonly itemIndex: number | null;
  /**
   * Position among its task's action executions in creation order (the failure summary's `idx`), set
   * by the store when it loads a snapshot that omits rows, on the with-items rows whose position a
   * decision may print: those in ERROR and those its events complete with ERROR. Absent, the position
   * in the snapshot counts.
   */
  readonly ordinal?: number;
  readonly createdAt: Date;
  updatedAt: Date | null;
}

/** A sub-execution started by a task of this execution (only what the parent needs). */
export interface SubExecutionRef {
  readonly id: string;
  readonly taskExecutionId: string;
  readonly state: ExecutionState;
}

/** Everything `decide` needs about one execution, loaded under the execution's row lock. */
export interface ExecutionSnapshot {
  readonly execution: WorkflowExecution;
  readonly tasks: readonly TaskExecution[];
  /**
   * Action executions: at least those of plain tasks that have not succeeded, every one in ERROR,
   * and every one an event of the decision names. Other item actions of with-items tasks (RUNNING or
   * SUCCESS) may be left out: their tasks' {@link WithItemsProgress} stands for them, and changes to
   * them are set-based ({@link EngineChanges.actionsUnaccepted}); so may the successful actions of a
   * task in SUCCESS (its result is on the task, and only a task in ERROR is rerun).
   */
  readonly actions: readonly ActionExecution[];
  readonly subExecutions: readonly SubExecutionRef[];
  /**
   * Executions of the execution's project and their tasks, for `tasks()`/`executions()` over any
   * execution (DSL-9.6). Loaded only for workflows whose spec calls those functions; without it they
   * see this execution alone.
   */
  readonly world?: ExpressionWorld;
  /**
   * Items of with-items tasks, loaded on demand: a decision that needs items the snapshot does not
   * hold throws {@link ItemsNeeded} naming them, and the caller loads them and decides again. A batch
   * of item results so reads only the rows it needs, never the whole list.
   */
  readonly items?: readonly LoadedItems[];
}

/**
 * Thrown by `decide` when it needs with-items rows the snapshot lacks; decide again with them added
 * (`snapshot.items`). Nothing was decided: the snapshot is unchanged.
 */
export class ItemsNeeded extends Error {
  constructor(readonly requests: readonly ItemsRequest[]) {
    super(
      `with-items rows needed: ${requests.map((r) => `${r.taskExecutionId}[${r.from}+${r.count}]`).join(', ')}`,
    );
    this.name = 'ItemsNeeded';
  }
}

/** A read-only view of other executions and their tasks, each list in creation order. */
export interface ExpressionWorld {
  readonly executions: readonly WorkflowExecution[];
  readonly tasks: readonly TaskExecution[];
}

/** Events fed to `decide`: the engine commands of @osc/contracts minus the routing ids. */
export type EngineEvent =
  | { type: 'start' }
  | {
      type: 'action-completed';
      taskExecutionId: string;
      actionExecutionId: string;
      state: 'SUCCESS' | 'ERROR' | 'CANCELLED';
      result?: unknown;
      error?: unknown;
      fatal?: { message: string };
    }
  | {
      type: 'action-state-changed';
      taskExecutionId: string;
      actionExecutionId: string;
      state: 'PAUSED' | 'RUNNING';
    }
  | {
      type: 'sub-workflow-completed';
      taskExecutionId: string;
      subExecutionId: string;
      state: 'SUCCESS' | 'ERROR' | 'CANCELLED';
      output?: unknown;
      stateInfo?: string | null;
    }
  | { type: 'sub-workflow-start-failed'; taskExecutionId: string; message: string }
  | { type: 'sub-workflow-rerun'; taskExecutionId: string; subExecutionId: string }
  | { type: 'pause'; message?: string | null }
  | { type: 'resume'; env?: JsonMap }
  | { type: 'cancel'; message?: string | null }
  | {
      type: 'force-state';
      state: 'SUCCESS' | 'ERROR';
      message?: string | null;
      taskExecutionId?: string;
      taskUpdatedAt?: string;
    }
  /**
   * `requestId`: the API's command id, which it set as the task's claim (`control_request`) when it
   * accepted the request; a command whose claim is not the task's (a redelivered one, once the
   * first released it) changes nothing.
   */
  | { type: 'rerun-task'; taskExecutionId: string; reset: boolean; env?: JsonMap; requestId?: string }
  | { type: 'skip-task'; taskExecutionId: string; requestId?: string }
  | { type: 'timer-fired'; taskExecutionId: string; timerId: string; kind: TaskTimer['kind'] }
  /** Start the next items of a with-items task that an earlier decision left waiting (see `start-items` effect). */
  | { type: 'start-items'; taskExecutionId: string };

/** State to write: full rows (the handler upserts them; the execution row is locked). */
export interface EngineChanges {
  /** The execution row when it changed. */
  execution?: WorkflowExecution;
  tasksCreated: TaskExecution[];
  tasksUpdated: TaskExecution[];
  actionsCreated: ActionExecution[];
  actionsUpdated: ActionExecution[];
  /**
   * Set-based updates, applied before the row updates: mark not accepted the accepted action
   * executions of a task (those in `states`, or all), including rows the snapshot left out.
   */
  actionsUnaccepted?: { taskExecutionId: string; states?: ActionState[] }[];
  /** Tasks whose item rows are removed, before the items below are written (a rerun with reset evaluates the list again). */
  itemsDeleted?: string[];
  /** Item rows of the lists evaluated by this decision (with their final state). */
  itemsCreated?: TaskItem[];
  /** Item rows whose state or result this decision changed (one row per item that started or completed). */
  itemsUpdated?: TaskItemUpdate[];
}

/** Effects to perform after commit (written to the outbox in the same transaction). */
export type EngineEffect =
  | {
      type: 'run-action';
      actionExecutionId: string;
      taskExecutionId: string;
      taskName: string;
      actionName: string;
      input: JsonMap;
      itemIndex: number | null;
      timeoutSeconds?: number;
      safeRerun: boolean;
      /**
       * The task's expression data (`$`) for an ad-hoc action's base-input (DSL-7.2); absent for
       * standard actions, which never read it.
       */
      taskData?: JsonMap;
    }
  | {
      type: 'start-sub-workflow';
      subExecutionId: string;
      taskExecutionId: string;
      taskName: string;
      workflowName: string;
      /** Evaluated task input: keys the sub-workflow declares become its input, the rest its params (DSL-3.7). */
      input: JsonMap;
      /** Params inherited from the parent (`namespace`, `env`, `notify`, root/task ids, `index`). */
      params: JsonMap;
      rootExecutionId: string;
      itemIndex: number | null;
    }
  | {
      type: 'notify-parent';
      /** The parent task; the handler finds the parent execution from it. */
      taskExecutionId: string;
      subExecutionId: string;
      state: 'SUCCESS' | 'ERROR' | 'CANCELLED';
      output: JsonMap;
      stateInfo: string | null;
    }
  | {
      type: 'notify-parent-rerun';
      /** The parent task; the handler finds the parent execution from it. */
      taskExecutionId: string;
      subExecutionId: string;
    }
  | {
      type: 'control-sub-execution';
      subExecutionId: string;
      command: 'pause' | 'resume' | 'cancel';
      message?: string | null;
    }
  | {
      /** Sent to the parent as an `action-state-changed` of its task, with the sub-execution as the action. */
      type: 'control-parent-execution';
      /** The parent task; the handler finds the parent execution from it. */
      taskExecutionId: string;
      /** This (the child) execution. */
      subExecutionId: string;
      command: 'pause' | 'resume';
    }
  | { type: 'arm-timer'; taskExecutionId: string; timerId: string; kind: TaskTimer['kind']; delayMs: number }
  /**
   * A with-items task has items waiting that this decision did not start (it starts at most
   * `ITEMS_STARTED_PER_DECISION`): the handler sends the execution a `start-items` event, whose
   * decision starts the next ones. `cursor` is the task's next item index (a deterministic command id).
   */
  | { type: 'start-items'; taskExecutionId: string; cursor: number }
  | {
      type: 'notify';
      event: NotifyEventName;
      taskExecutionId?: string;
      /** State and state_info of the subject when the event happened (a decision may move it further). */
      state: string;
      stateInfo: string | null;
      /** For task events: the task's start and finish times when the event happened. */
      startedAt?: Date | null;
      finishedAt?: Date | null;
    };

export interface Decision {
  changes: EngineChanges;
  commands: EngineEffect[];
}
