import { type PreparedContext, prepareContext, prepareLayeredContext } from '@osc/expressions';
import { DEFAULT_ACTION, type TaskSpec } from '../dsl/model';
import { buildHost, evaluateWith } from './expression-context';
import type {
  ActionExecution,
  EngineChanges,
  EngineEffect,
  ExecutionSnapshot,
  JsonMap,
  TaskExecution,
  TaskItem,
  TaskTrigger,
  WorkflowExecution,
} from './model';
import type { TaskState } from './states';

/** state_info is truncated to this many characters (DSL-13.7). */
export const STATE_INFO_LIMIT = 65_500;

export const truncate = (s: string | null): string | null =>
  s !== null && s.length > STATE_INFO_LIMIT ? s.slice(0, STATE_INFO_LIMIT) : s;

/** Deep copy of plain data (objects, arrays, Dates); same-realm objects, unlike structuredClone under jest. */
export const clone = <T>(v: T): T => {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Date) return new Date(v.getTime()) as T;
  if (Array.isArray(v)) return v.map(clone) as T;
  // a plain loop over own keys: Object.entries' pair arrays were most of the cost of every decision's copy
  const out: Record<string, unknown> = {};
  const src = v as Record<string, unknown>;
  for (const k of Object.keys(src)) out[k] = clone(src[k]);
  return out as T;
};

/**
 * Whether `a` and `b` serialise to the same JSON (`JSON.stringify` of one equals the other's, key order
 * aside: the stored jsonb keeps none), without serialising them: walks both, stops at the first
 * difference. Properties holding `undefined` or functions count as absent, as in JSON.
 */
export const sameJson = (a: unknown, b: unknown): boolean => {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (a instanceof Date && b instanceof Date) {
    const [x, y] = [a.getTime(), b.getTime()];
    return x === y || (Number.isNaN(x) && Number.isNaN(y));
  }
  if (a instanceof Date || b instanceof Date) return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const k of Object.keys(x)) {
    if (!present(x, k)) continue;
    count++;
    if (!present(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k of Object.keys(y)) if (present(y, k)) count--;
  return count === 0;
};

/** Whether `o[k]` appears in `o`'s JSON. */
const present = (o: Record<string, unknown>, k: string): boolean =>
  o[k] !== undefined && typeof o[k] !== 'function';

/**
 * An action row to decide on: a decision only ever sets its top-level fields (state, output, state
 * info, accepted, updated at) and replaces its output, never edits its input or output in place, so
 * a shallow copy keeps the snapshot untouched without copying every action's input and result.
 */
const cloneAction = (a: ActionExecution): ActionExecution => ({ ...a });

/**
 * A task row to decide on: what a decision changes in place (runtime record, routing) is copied; the
 * data it only ever replaces (inbound context, published values, result) is shared — a with-items
 * task's inbound context may hold its whole list, which a copy per decision would make O(N) per
 * batch of item results.
 */
const cloneTask = (t: TaskExecution): TaskExecution => ({
  ...t,
  tags: [...t.tags],
  runtimeContext: clone(t.runtimeContext),
  nextTasks: clone(t.nextTasks),
  startedAt: t.startedAt && new Date(t.startedAt.getTime()),
  finishedAt: t.finishedAt && new Date(t.finishedAt.getTime()),
  updatedAt: t.updatedAt && new Date(t.updatedAt.getTime()),
});

/**
 * Converted executions' inputs, by identity: an input never changes, and the engine keeps large
 * ones across transactions, so a with-items list passed as input is converted for the evaluator
 * once, not once per decision that starts items.
 */
const preparedInputs = new WeakMap<object, PreparedContext>();

const preparedInput = (input: JsonMap): PreparedContext => {
  let p = preparedInputs.get(input);
  if (!p) preparedInputs.set(input, (p = prepareContext(input)));
  return p;
};

export const INCOMPLETE_TASK_STATES: ReadonlySet<TaskState> = new Set([
  'IDLE',
  'WAITING',
  'RUNNING',
  'DELAYED',
  'PAUSED',
]);

/**
 * A failure of the workflow's own logic (DSL-13.6): the task fails and the execution is forced to
 * ERROR at once, without `on-error`. Thrown anywhere in a decision, caught per event.
 */
export class FatalTaskError extends Error {
  constructor(
    readonly task: TaskExecution,
    readonly stateInfo: string,
  ) {
    super(stateInfo);
  }
}

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** Outbound context (DSL-14.4). */
export const outbound = (t: TaskExecution): JsonMap => ({ ...t.inContext, ...t.published });

/**
 * The item rows of one with-items task a decision holds: every one (`all`), or those of the windows
 * loaded for it (each window lists every item waiting to start in its index range), plus those it
 * changed.
 */
export interface ItemBook {
  rows: Map<number, TaskItem>;
  all: boolean;
  windows: { from: number; to: number }[];
  /** The list was evaluated by this decision: every row is written as new. */
  created: boolean;
  /** Indexes whose state or result this decision changed. */
  changed: Set<number>;
}

/**
 * The steps the modules of a decision reach through the state rather than by import, because they
 * call back into a module that imports theirs: completion → policies → routing → control.
 */
export interface DecisionFlow {
  /** policies: after-completion policies, then routing. */
  afterPolicies(task: TaskExecution, from: 'wait-after' | 'fail-on'): void;
  /** routing: routes a completed task. */
  afterComplete(task: TaskExecution): void;
  /** control: pauses the running execution, its sub-executions and its parent. */
  enterPause(message: string | null): void;
}

/**
 * The working state of one decision: copies of the snapshot's rows that the decision's modules
 * change in place, what they changed, and the effects they emit. Built once per decision (a batch
 * of events shares it), so an event costs its own work, not a copy of the snapshot.
 */
export class WorkingState {
  readonly ex: WorkflowExecution;
  /** The execution as loaded (never changed: `ex` is a copy), to tell whether the decision changed it. */
  readonly initialEx: WorkflowExecution;
  readonly tasks: TaskExecution[];
  readonly actions: ActionExecution[];
  readonly actionsById: Map<string, ActionExecution>;
  readonly unaccepted: NonNullable<EngineChanges['actionsUnaccepted']> = [];
  /** States of the sub-executions started by this execution's tasks, as known now. */
  readonly subStates: Map<string, string>;
  readonly world: ExecutionSnapshot['world'];
  readonly createdTasks = new Set<string>();
  readonly touchedTasks = new Set<string>();
  readonly createdActions = new Set<string>();
  readonly touchedActions = new Set<string>();
  readonly effects: EngineEffect[] = [];
  /** The converted data of each task's items without their variables (see {@link itemData}). */
  private readonly itemBases = new Map<string, { key: readonly unknown[]; prepared: PreparedContext }>();
  /** Bumped when the global context changes in place (workflow vars, a global publish). */
  dataVersion = 0;
  /** The item rows of with-items tasks this decision knows (loaded, or evaluated by it), by task. */
  readonly books = new Map<string, ItemBook>();
  /** Tasks whose item rows this decision deletes before writing new ones. */
  readonly itemsDeleted = new Set<string>();
  /** Events of the decision naming each task: an upper bound of the items their completions let start. */
  readonly eventsPerTask = new Map<string, number>();
  /** Items this decision started, by with-items task (bounded by `ITEMS_STARTED_PER_DECISION`). */
  readonly itemsStarted = new Map<string, number>();
  /** With-items tasks for which this decision sends a `start-items` event (once per task). */
  readonly itemsContinued = new Set<string>();

  constructor(
    snapshot: ExecutionSnapshot,
    readonly now: Date,
    readonly newId: () => string,
    readonly flow: DecisionFlow,
    /** Items a decision starts per with-items task (see `DecideOptions`); 0: all it may. */
    readonly itemsPerDecision = 0,
  ) {
    // The spec and the input are immutable: shared, not copied, and left out of the change detection
    // (an input holding a with-items list would otherwise be copied and serialised twice per decision).
    const { spec, input } = snapshot.execution;
    this.ex = { ...clone({ ...snapshot.execution, spec: null, input: null }), spec, input };
    this.initialEx = snapshot.execution;
    this.tasks = snapshot.tasks.map(cloneTask);
    this.actions = snapshot.actions.map(cloneAction);
    this.actionsById = new Map(this.actions.map((a) => [a.id, a]));
    this.subStates = new Map(snapshot.subExecutions.map((s) => [s.id, s.state]));
    this.world = snapshot.world;
  }

  task(id: string): TaskExecution | undefined {
    return this.tasks.find((t) => t.id === id);
  }

  spec(task: TaskExecution | string): TaskSpec {
    const name = typeof task === 'string' ? task : task.name;
    const s = this.ex.spec.tasks.find((t) => t.name === name);
    if (!s) throw new Error(`task ${name} is not in workflow ${this.ex.workflowName}`);
    return s;
  }

  /** Marks the task changed (written by the decision). */
  touch(task: TaskExecution): void {
    task.updatedAt = this.now;
    this.touchedTasks.add(task.id);
  }

  touchAction(a: ActionExecution): void {
    a.updatedAt = this.now;
    this.touchedActions.add(a.id);
  }

  createTask(
    name: string,
    inContext: JsonMap,
    triggeredBy: TaskTrigger[],
    state: TaskState = 'IDLE',
  ): TaskExecution {
    const spec = this.spec(name);
    const task: TaskExecution = {
      id: this.newId(),
      name,
      executionId: this.ex.id,
      type: spec.type,
      tags: [...spec.tags],
      state,
      stateInfo: null,
      inContext: clone(inContext),
      published: {},
      publishedGlobal: {},
      runtimeContext: { triggered_by: triggeredBy },
      result: null,
      processed: false,
      nextTasks: [],
      errorHandled: false,
      startedAt: null,
      finishedAt: null,
      createdAt: this.now,
      updatedAt: null,
    };
    this.tasks.push(task);
    this.createdTasks.add(task.id);
    return task;
  }

  get env(): JsonMap {
    const env = this.ex.params['env'];
    return env && typeof env === 'object' && !Array.isArray(env) ? (env as JsonMap) : {};
  }

  private host(current?: TaskExecution) {
    return buildHost(
      {
        execution: this.ex,
        tasks: () => this.tasks,
        actions: () => this.actions,
        now: this.now,
        newId: this.newId,
        world: this.world,
      },
      current,
    );
  }

  /** DSL-9.2: marker › env › items › inbound › global › input (first hit wins). */
  taskData(task: TaskExecution, itemVars: JsonMap = {}): JsonMap {
    return {
      ...this.ex.input,
      ...this.ex.context,
      ...task.inContext,
      ...itemVars,
      __env: this.env,
      __task_execution: { id: task.id, name: task.name },
    };
  }

  /**
   * The data of one with-items item (DSL-9.2, as {@link taskData} with the item's variables), ready
   * for the evaluator. The evaluator converts its data before evaluating, at a cost proportional to
   * its size; the task's data holds the whole list when it comes from the input or a published value,
   * so converting it for each item made N items cost O(N²). It is converted once per task and data
   * version, and each item only adds its variables on top.
   */
  itemData(task: TaskExecution, itemVars: JsonMap): PreparedContext {
    const key = [this.dataVersion, this.ex.input, this.ex.context, task.inContext, this.ex.params['env']];
    let base = this.itemBases.get(task.id);
    if (!base || base.key.some((k, i) => k !== key[i])) {
      // DSL-9.2 layers, first hit wins: markers › inbound › global › input (the input converted once)
      const markers = { __env: this.env, __task_execution: { id: task.id, name: task.name } };
      base = {
        key,
        prepared: prepareLayeredContext(
          markers,
          task.inContext,
          this.ex.context,
          preparedInput(this.ex.input),
        ),
      };
      this.itemBases.set(task.id, base);
    }
    // the markers (`__env`, `__task_execution`) win over item variables, as in taskData
    const vars = Object.fromEntries(
      Object.entries(itemVars).filter(([k]) => k !== '__env' && k !== '__task_execution'),
    );
    return prepareLayeredContext(vars, base.prepared);
  }

  /** DSL-9.3: marker › outbound context › env › global › input. */
  outboundData(task: TaskExecution): JsonMap {
    return {
      ...this.ex.input,
      ...this.ex.context,
      ...outbound(task),
      __env: this.env,
      __task_execution: { id: task.id, name: task.name },
    };
  }

  eval(value: unknown, data: JsonMap | PreparedContext, task?: TaskExecution): unknown {
    return evaluateWith(value, data, this.host(task));
  }

  runFailure(task: TaskExecution, message: string): string {
    return `Failed to run task [error=${message}, wf=${this.ex.workflowName}, task=${task.name}]`;
  }

  completionFailure(task: TaskExecution, message: string): string {
    const action = this.spec(task).action ?? this.spec(task).workflow ?? DEFAULT_ACTION;
    return `Failed to handle action completion [error=${message}, wf=${this.ex.workflowName}, task=${task.name}, action=${action}]`;
  }
}
