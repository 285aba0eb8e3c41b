import type { NotifyEventName } from '@osc/contracts';
import { type PreparedContext, prepareContext, prepareLayeredContext } from '@osc/expressions';
import { pyRepr, pyStr } from '../dsl/python-text';
import { resolvePublish, type CompletedTaskState } from '../dsl/spec-queries';
import { DEFAULT_ACTION, type TaskSpec, type Transition, type TransitionEvent } from '../dsl/model';
import { isStandardAction } from '../dsl/standard-actions';
import { buildHost, evaluateWith, isTruthy } from './expression-context';
import {
  type ActionExecution,
  type Decision,
  type EngineChanges,
  type EngineEffect,
  type EngineEvent,
  type ExecutionSnapshot,
  ItemsNeeded,
  type ItemsRequest,
  type TaskItem,
  type TaskItemUpdate,
  type JsonMap,
  type TaskExecution,
  type TaskTimer,
  type TransitionEventName,
  type WithItemsProgress,
  type WithItemsState,
  type WorkflowExecution,
} from './model';
import { type ExecutionState, type TaskState, isCompleted, isValidExecutionTransition } from './states';

/**
 * Key of a task's runtime context that marks a rerun or skip accepted by the API and not yet applied:
 * a second request finding it is refused, so two concurrent reruns are never both accepted.
 */
export const CONTROL_REQUEST = 'control_request';

/** state_info is truncated to this many characters (DSL-13.7). */
export const STATE_INFO_LIMIT = 65_500;

const truncate = (s: string | null): string | null =>
  s !== null && s.length > STATE_INFO_LIMIT ? s.slice(0, STATE_INFO_LIMIT) : s;

/** Deep copy of plain data (objects, arrays, Dates); same-realm objects, unlike structuredClone under jest. */
const clone = <T>(v: T): T => {
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
const sameJson = (a: unknown, b: unknown): boolean => {
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
 * An action row to decide on: `decide` only ever sets its top-level fields (state, output, state
 * info, accepted, updated at) and replaces its output, never edits its input or output in place, so
 * a shallow copy keeps the snapshot untouched without copying every action's input and result.
 */
const cloneAction = (a: ActionExecution): ActionExecution => ({ ...a });

/**
 * A task row to decide on: what `decide` changes in place (runtime context, routing) is copied; the
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

const INCOMPLETE_TASK_STATES: ReadonlySet<TaskState> = new Set([
  'IDLE',
  'WAITING',
  'RUNNING',
  'DELAYED',
  'PAUSED',
]);

/**
 * A failure of the workflow's own logic (DSL-13.6): the task fails and the execution is forced to
 * ERROR at once, without `on-error`.
 */
class FatalTaskError extends Error {
  constructor(
    readonly task: TaskExecution,
    readonly stateInfo: string,
  ) {
    super(stateInfo);
  }
}

const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * The engine's pure core: given the state of one execution and one event, returns the rows to write
 * and the effects to send. It never performs I/O; `now` and `newId` are its only sources of time and
 * identity, so a test feeding the same events gets the same decisions.
 *
 * Idempotency: an event whose effect is already visible in the snapshot (an action that is no longer
 * RUNNING, a timer that is no longer armed, a start of a started execution) yields no changes.
 */
export function decide(
  snapshot: ExecutionSnapshot,
  event: EngineEvent,
  now: Date,
  newId: () => string,
): Decision {
  const d = new Decider(snapshot, now, newId, [event]);
  d.handle(event);
  return d.decision();
}

/**
 * Several events of one execution in order, as one decision: the same result as feeding them one by
 * one to {@link decide} and merging the changes, without copying the snapshot per event (a with-items
 * task of 10,000 items would otherwise cost 10,000 × 10,000 row copies).
 */
export function decideBatch(
  snapshot: ExecutionSnapshot,
  events: readonly EngineEvent[],
  now: Date,
  newId: () => string,
): Decision {
  const d = new Decider(snapshot, now, newId, events);
  for (const event of events) d.handle(event);
  return d.decision();
}

class Decider {
  private readonly ex: WorkflowExecution;
  /** The execution as loaded (never changed here: `ex` is a copy), to tell whether the decision changed it. */
  private readonly initialEx: WorkflowExecution;
  private readonly tasks: TaskExecution[];
  private readonly actions: ActionExecution[];
  private readonly actionsById: Map<string, ActionExecution>;
  private readonly unaccepted: NonNullable<EngineChanges['actionsUnaccepted']> = [];
  private readonly subStates: Map<string, string>;
  private readonly world: ExecutionSnapshot['world'];
  private readonly createdTasks = new Set<string>();
  private readonly touchedTasks = new Set<string>();
  private readonly createdActions = new Set<string>();
  private readonly touchedActions = new Set<string>();
  private readonly effects: EngineEffect[] = [];
  /** The converted data of each task's items without their variables (see {@link itemData}). */
  private readonly itemBases = new Map<string, { key: readonly unknown[]; prepared: PreparedContext }>();
  /** Bumped when the global context changes in place (workflow vars, a global publish). */
  private dataVersion = 0;
  /** The item rows of with-items tasks this decision knows (loaded, or evaluated by it), by task. */
  private readonly books = new Map<string, ItemBook>();
  /** Tasks whose item rows this decision deletes before writing new ones. */
  private readonly itemsDeleted = new Set<string>();
  /** Events of the decision naming each task: an upper bound of the items their completions let start. */
  private readonly eventsPerTask = new Map<string, number>();

  constructor(
    snapshot: ExecutionSnapshot,
    private readonly now: Date,
    private readonly newId: () => string,
    events: readonly EngineEvent[],
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
    for (const load of snapshot.items ?? []) this.addLoad(load);
    for (const e of events) {
      if ('taskExecutionId' in e && e.taskExecutionId)
        this.eventsPerTask.set(e.taskExecutionId, (this.eventsPerTask.get(e.taskExecutionId) ?? 0) + 1);
    }
  }

  decision(): Decision {
    // the spec and the input never change (shared, see the constructor)
    const exChanged = !sameJson(
      { ...this.ex, spec: null, input: null },
      { ...this.initialEx, spec: null, input: null },
    );
    if (exChanged) this.ex.updatedAt = this.now;
    return {
      changes: {
        ...(exChanged ? { execution: this.ex } : {}),
        tasksCreated: this.tasks.filter((t) => this.createdTasks.has(t.id)),
        tasksUpdated: this.tasks.filter((t) => this.touchedTasks.has(t.id) && !this.createdTasks.has(t.id)),
        actionsCreated: this.actions.filter((a) => this.createdActions.has(a.id)),
        actionsUpdated: this.actions.filter(
          (a) => this.touchedActions.has(a.id) && !this.createdActions.has(a.id),
        ),
        ...(this.unaccepted.length ? { actionsUnaccepted: this.unaccepted } : {}),
        ...this.itemChanges(),
      },
      commands: this.effects,
    };
  }

  handle(event: EngineEvent): void {
    try {
      this.dispatchEvent(event);
    } catch (e) {
      if (!(e instanceof FatalTaskError)) throw e;
      this.failFatally(e.task, e.stateInfo);
    }
  }

  private dispatchEvent(event: EngineEvent): void {
    switch (event.type) {
      case 'start':
        return this.start();
      case 'action-completed':
        return this.onActionCompleted(event);
      case 'action-state-changed':
        return this.onActionStateChanged(event);
      case 'sub-workflow-completed':
        return this.onSubWorkflowCompleted(event);
      case 'sub-workflow-start-failed': {
        const task = this.task(event.taskExecutionId);
        if (!task || task.state !== 'RUNNING') return;
        throw new FatalTaskError(task, this.runFailure(task, event.message));
      }
      case 'sub-workflow-rerun':
        return this.onSubWorkflowRerun(event.taskExecutionId, event.subExecutionId);
      case 'pause':
        return this.pause(event.message ?? null);
      case 'resume':
        return this.resume(event.env);
      case 'cancel':
        return this.cancel(event.message ?? null);
      case 'force-state':
        if (event.taskExecutionId !== undefined)
          return this.failStuckTask(event.taskExecutionId, event.taskUpdatedAt, event.message ?? null);
        if (isCompleted(this.ex.state) || !isValidExecutionTransition(this.ex.state, event.state)) return;
        return this.finish(event.state, event.message ?? null);
      case 'rerun-task':
        if (!this.claimedBy(event.taskExecutionId, event.requestId)) return;
        return this.rerunTask(event.taskExecutionId, event.reset, event.env);
      case 'skip-task':
        if (!this.claimedBy(event.taskExecutionId, event.requestId)) return;
        return this.skipTask(event.taskExecutionId);
      case 'timer-fired':
        return this.onTimer(event.taskExecutionId, event.timerId);
    }
  }

  // ---------------------------------------------------------------- bookkeeping

  private task(id: string): TaskExecution | undefined {
    return this.tasks.find((t) => t.id === id);
  }

  private spec(task: TaskExecution | string): TaskSpec {
    const name = typeof task === 'string' ? task : task.name;
    const s = this.ex.spec.tasks.find((t) => t.name === name);
    if (!s) throw new Error(`task ${name} is not in workflow ${this.ex.workflowName}`);
    return s;
  }

  private touch(task: TaskExecution): void {
    task.updatedAt = this.now;
    this.touchedTasks.add(task.id);
  }

  private touchAction(a: ActionExecution): void {
    a.updatedAt = this.now;
    this.touchedActions.add(a.id);
  }

  private setTaskState(task: TaskExecution, state: TaskState, stateInfo: string | null): void {
    const before = task.state;
    task.state = state;
    task.stateInfo = truncate(stateInfo);
    if (isCompleted(state) && !isCompleted(before)) task.finishedAt = this.now;
    this.touch(task);
    const event = taskEvent(before, state, task.startedAt !== null);
    if (event) this.notify(event, task.id);
  }

  private setExecutionState(state: ExecutionState, stateInfo: string | null): void {
    const before = this.ex.state;
    this.ex.state = state;
    this.ex.stateInfo = truncate(stateInfo);
    const event = workflowEvent(before, state);
    if (event) this.notify(event);
  }

  private notify(event: NotifyEventName, taskExecutionId?: string): void {
    const publishers = this.ex.params['notify'];
    if (!Array.isArray(publishers) || publishers.length === 0) return;
    const subject = taskExecutionId ? this.task(taskExecutionId) : undefined;
    this.effects.push({
      type: 'notify',
      event,
      ...(taskExecutionId ? { taskExecutionId } : {}),
      state: subject ? subject.state : this.ex.state,
      stateInfo: subject ? subject.stateInfo : this.ex.stateInfo,
      ...(subject ? { startedAt: subject.startedAt, finishedAt: subject.finishedAt } : {}),
    });
  }

  private get env(): JsonMap {
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
  private taskData(task: TaskExecution, itemVars: JsonMap = {}): JsonMap {
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
  private itemData(task: TaskExecution, itemVars: JsonMap): PreparedContext {
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
  private outboundData(task: TaskExecution): JsonMap {
    return {
      ...this.ex.input,
      ...this.ex.context,
      ...outbound(task),
      __env: this.env,
      __task_execution: { id: task.id, name: task.name },
    };
  }

  private eval(value: unknown, data: JsonMap | PreparedContext, task?: TaskExecution): unknown {
    return evaluateWith(value, data, this.host(task));
  }

  private runFailure(task: TaskExecution, message: string): string {
    return `Failed to run task [error=${message}, wf=${this.ex.workflowName}, task=${task.name}]`;
  }

  private completionFailure(task: TaskExecution, message: string): string {
    const action = this.spec(task).action ?? this.spec(task).workflow ?? DEFAULT_ACTION;
    return `Failed to handle action completion [error=${message}, wf=${this.ex.workflowName}, task=${task.name}, action=${action}]`;
  }

  // ---------------------------------------------------------------- with-items rows

  private addLoad(load: ItemsRequest & { rows: readonly TaskItem[] }): void {
    const book = this.book(load.taskExecutionId);
    for (const r of load.rows) if (!book.rows.has(r.index)) book.rows.set(r.index, { ...r });
    if (load.count === 'all') book.all = true;
    else {
      const last = load.rows[load.rows.length - 1];
      book.windows.push({
        from: load.from,
        to: load.rows.length < load.count || !last ? Infinity : last.index,
      });
    }
  }

  private book(taskId: string): ItemBook {
    let b = this.books.get(taskId);
    if (!b)
      this.books.set(
        taskId,
        (b = { rows: new Map(), all: false, windows: [], created: false, changed: new Set() }),
      );
    return b;
  }

  /** The list of a with-items task, evaluated now: its rows replace any the task had. */
  private createItems(task: TaskExecution, items: JsonMap[]): void {
    if (!this.createdTasks.has(task.id)) this.itemsDeleted.add(task.id);
    const book: ItemBook = { rows: new Map(), all: true, windows: [], created: true, changed: new Set() };
    items.forEach((vars, index) =>
      book.rows.set(index, { taskExecutionId: task.id, index, vars, state: null, result: null }),
    );
    this.books.set(task.id, book);
  }

  private setItem(task: TaskExecution, index: number, state: TaskItem['state'], result: unknown): void {
    const book = this.book(task.id);
    const row = book.rows.get(index);
    if (row) {
      row.state = state;
      row.result = result;
    } else book.rows.set(index, { taskExecutionId: task.id, index, vars: {}, state, result });
    book.changed.add(index);
  }

  /** Every item of the task, in index order (its outcomes: the task's result, the next attempt's items). */
  private allItems(task: TaskExecution, count: number): TaskItem[] {
    const book = this.book(task.id);
    if (!book.all) throw new ItemsNeeded([{ taskExecutionId: task.id, from: 0, count: 'all' }]);
    const out: TaskItem[] = [];
    for (let i = 0; i < count; i++) {
      const row = book.rows.get(i);
      if (!row) throw new Error(`item ${i} of task ${task.name} is missing`);
      out.push(row);
    }
    return out;
  }

  /**
   * The first item with index ≥ `from` that waits to start, or undefined when none does. Rows this
   * decision does not hold are asked for: `want` items the first time (an upper bound of what the
   * decision can start), every item if that was not enough.
   */
  private nextItem(
    task: TaskExecution,
    from: number,
    count: number,
    want: () => number,
  ): TaskItem | undefined {
    const book = this.book(task.id);
    for (let i = from; i < count; i++) {
      const known = book.all || book.windows.some((w) => w.from <= i && i <= w.to);
      if (!known) {
        throw new ItemsNeeded([
          book.windows.length === 0
            ? { taskExecutionId: task.id, from, count: Math.max(1, want()) }
            : { taskExecutionId: task.id, from: 0, count: 'all' },
        ]);
      }
      const row = book.rows.get(i);
      if (row && row.state === null) return row;
    }
    return undefined;
  }

  private itemChanges(): Pick<EngineChanges, 'itemsDeleted' | 'itemsCreated' | 'itemsUpdated'> {
    const created: TaskItem[] = [];
    const updated: TaskItemUpdate[] = [];
    for (const book of this.books.values()) {
      if (book.created) created.push(...[...book.rows.values()].sort((a, b) => a.index - b.index));
      else {
        for (const i of [...book.changed].sort((a, b) => a - b)) {
          const r = book.rows.get(i)!;
          updated.push({
            taskExecutionId: r.taskExecutionId,
            index: r.index,
            state: r.state,
            result: r.result,
          });
        }
      }
    }
    return {
      ...(this.itemsDeleted.size ? { itemsDeleted: [...this.itemsDeleted] } : {}),
      ...(created.length ? { itemsCreated: created } : {}),
      ...(updated.length ? { itemsUpdated: updated } : {}),
    };
  }

  // ---------------------------------------------------------------- start

  private start(): void {
    if (this.ex.state !== 'RUNNING' || '__execution' in this.ex.context || this.tasks.length > 0) return;
    this.ex.context = { __execution: { id: this.ex.id }, ...this.ex.context };
    const spec = this.ex.spec;
    if (Object.keys(spec.vars).length > 0) {
      try {
        const vars = this.eval(spec.vars, {
          ...this.ex.input,
          ...this.ex.context,
          __env: this.env,
        }) as JsonMap;
        Object.assign(this.ex.context, vars);
        this.dataVersion++;
        this.ex.varNames = Object.keys(spec.vars);
      } catch (e) {
        this.finish(
          'ERROR',
          `Failed to evaluate workflow vars [error=${errorMessage(e)}, wf=${this.ex.workflowName}]`,
        );
        return;
      }
    }
    this.notify('WORKFLOW_LAUNCHED');
    if (spec.type === 'direct') {
      for (const name of spec.startTasks) this.runTask(this.createTask(name, {}, []));
    } else {
      for (const name of this.reverseReady())
        this.runTask(this.createTask(name, this.reverseInContext(name), []));
    }
    this.checkCompletion();
  }

  private createTask(
    name: string,
    inContext: JsonMap,
    triggeredBy: { task_id: string; event: string }[],
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

  // ---------------------------------------------------------------- running tasks

  /** Before-start policies (DSL-6.2), then start. Tasks created while paused wait IDLE for resume. */
  private runTask(task: TaskExecution): void {
    if (this.ex.state !== 'RUNNING') return;
    const spec = this.spec(task);
    const data = this.taskData(task);
    if (spec.policies.pauseBefore !== undefined && !task.runtimeContext['pause_before_done']) {
      const pause = this.evalPolicy(task, 'PauseBeforePolicy', spec.policies.pauseBefore, data, 'boolean');
      task.runtimeContext['pause_before_done'] = true;
      this.touch(task);
      if (isTruthy(pause)) {
        task.stateInfo = "Set by 'pause-before' policy";
        this.setExecutionState('PAUSED', null);
        this.pauseSubExecutions();
        this.controlParent('pause');
        return;
      }
    }
    if (spec.policies.waitBefore !== undefined && !task.runtimeContext['wait_before_done']) {
      const delay = Number(
        this.evalPolicy(task, 'WaitBeforePolicy', spec.policies.waitBefore, data, 'number'),
      );
      task.runtimeContext['wait_before_done'] = true;
      if (delay > 0) {
        this.setTaskState(task, 'DELAYED', `Delayed by 'wait-before' policy [delay=${delay}]`);
        this.armTimer(task, 'wait-before', delay);
        return;
      }
    }
    this.startTask(task);
  }

  private evalPolicy(
    task: TaskExecution,
    policy: string,
    value: unknown,
    data: JsonMap,
    type: 'number' | 'boolean',
  ): unknown {
    let v: unknown;
    try {
      v = this.eval(value, data, task);
    } catch (e) {
      throw new FatalTaskError(task, this.runFailure(task, errorMessage(e)));
    }
    if (type === 'number' && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
      throw new FatalTaskError(task, this.runFailure(task, `Invalid data type in ${policy}: ${pyRepr(v)}`));
    }
    return v;
  }

  private armTimer(
    task: TaskExecution,
    kind: TaskTimer['kind'],
    delaySeconds: number,
    thenState?: TaskState,
  ): void {
    const timer: TaskTimer = {
      id: this.newId(),
      kind,
      dueAt: new Date(this.now.getTime() + delaySeconds * 1000).toISOString(),
      ...(thenState ? { thenState } : {}),
    };
    task.runtimeContext['timer'] = timer;
    this.touch(task);
    this.effects.push({
      type: 'arm-timer',
      taskExecutionId: task.id,
      timerId: timer.id,
      kind,
      delayMs: Math.round(delaySeconds * 1000),
    });
  }

  /** RUNNING, timeout armed, input evaluated, the action(s) or sub-workflow(s) started (DSL-14.1). */
  private startTask(task: TaskExecution): void {
    const spec = this.spec(task);
    const rerun = task.state === 'ERROR';
    const firstStart = task.startedAt === null;
    if (firstStart) task.startedAt = this.now;
    const before = task.state;
    task.state = 'RUNNING';
    task.stateInfo = null;
    task.finishedAt = null;
    task.processed = false;
    this.touch(task);
    const ev: NotifyEventName | null = rerun
      ? 'TASK_RERUN'
      : firstStart || before === 'DELAYED'
        ? 'TASK_LAUNCHED'
        : before === 'IDLE' || before === 'WAITING' || before === 'PAUSED'
          ? 'TASK_RESUMED'
          : null;
    if (ev) this.notify(ev, task.id);
    const data = this.taskData(task);
    delete task.runtimeContext['timer'];
    let timeoutSeconds: number | undefined;
    if (spec.policies.timeout !== undefined) {
      const t = Number(this.evalPolicy(task, 'TimeoutPolicy', spec.policies.timeout, data, 'number'));
      if (t > 0) {
        timeoutSeconds = t;
        this.armTimer(task, 'timeout', t);
      }
    }

    if (spec.withItems.length > 0) return this.startWithItems(task, spec, data, timeoutSeconds);
    task.runtimeContext['with_items'] = undefined;
    delete task.runtimeContext['with_items'];
    this.startUnit(task, spec, {}, null, timeoutSeconds);
  }

  private startWithItems(
    task: TaskExecution,
    spec: TaskSpec,
    data: JsonMap,
    timeoutSeconds: number | undefined,
  ): void {
    let state = task.runtimeContext['with_items'] as WithItemsState | undefined;
    if (!state) {
      const lists: unknown[][] = [];
      for (const v of spec.withItems) {
        let list: unknown;
        try {
          list = this.eval(v.source, data, task);
        } catch (e) {
          throw new FatalTaskError(task, this.runFailure(task, errorMessage(e)));
        }
        if (!Array.isArray(list)) {
          throw new FatalTaskError(
            task,
            this.runFailure(
              task,
              `Wrong input format for: ${pyRepr(list)}. List type is expected for each with-items variable.`,
            ),
          );
        }
        lists.push(list);
      }
      const count = lists[0]?.length ?? 0;
      if (lists.some((l) => l.length !== count)) {
        throw new FatalTaskError(
          task,
          this.runFailure(
            task,
            `Wrong input format for: ${pyRepr(Object.fromEntries(spec.withItems.map((v, i) => [v.variable, lists[i]])))}. All arrays must have the same length.`,
          ),
        );
      }
      let concurrency = 0;
      if (spec.policies.concurrency !== undefined) {
        concurrency = Number(
          this.evalPolicy(task, 'ConcurrencyPolicy', spec.policies.concurrency, data, 'number'),
        );
      }
      state = { count, concurrency };
      this.createItems(
        task,
        Array.from({ length: count }, (_, i) =>
          Object.fromEntries(spec.withItems.map((v, j) => [v.variable, lists[j]![i]])),
        ),
      );
      task.runtimeContext['with_items'] = state;
      task.runtimeContext[PROGRESS] = newProgress();
    }
    if (!task.runtimeContext[PROGRESS]) task.runtimeContext[PROGRESS] = newProgress();
    if (state.count === 0) {
      task.result = [];
      this.completeTask(task, 'SUCCESS', null);
      return;
    }
    task.runtimeContext['with_items_timeout'] = timeoutSeconds ?? null;
    this.scheduleItems(task);
  }

  /**
   * Starts the next items of the attempt while fewer than `concurrency` run (DSL-6.9): O(1) per
   * item, from the task's counters and the rows of the items it starts, whatever the number of
   * items. Nothing starts while the execution is not RUNNING: a paused execution lets its running
   * items finish (their results are counted) and starts the waiting ones on resume.
   */
  private scheduleItems(task: TaskExecution): void {
    if (this.ex.state !== 'RUNNING') return;
    const spec = this.spec(task);
    const wi = task.runtimeContext['with_items'] as WithItemsState;
    const p = progressOf(task);
    const limit = wi.concurrency > 0 ? wi.concurrency : wi.count;
    const timeout = (task.runtimeContext['with_items_timeout'] as number | null) ?? undefined;
    const want = () =>
      Math.min(wi.count - p.done - p.running, limit - p.running + (this.eventsPerTask.get(task.id) ?? 0));
    while (p.running < limit && p.done + p.running < wi.count) {
      const item = this.nextItem(task, p.cursor, wi.count, want);
      if (!item) break;
      p.cursor = item.index + 1;
      p.running++;
      this.setItem(task, item.index, 'RUNNING', null);
      this.touch(task);
      this.startUnit(task, spec, item.vars, item.index, timeout);
    }
  }

  /**
   * Prepares the next attempt of a with-items task (retry, rerun): the items without an accepted
   * SUCCESS run again and their previous units are no longer accepted; the others keep their result.
   * With `all` (reset, or an attempt after which no item failed) every item runs again.
   */
  private requeueItems(task: TaskExecution, all: boolean): void {
    const wi = task.runtimeContext['with_items'] as WithItemsState | undefined;
    const p = task.runtimeContext[PROGRESS] as WithItemsProgress | undefined;
    if (!wi || !p) {
      this.unacceptUnits(task, false);
      delete task.runtimeContext['with_items'];
      delete task.runtimeContext[PROGRESS];
      return;
    }
    const items = this.allItems(task, wi.count);
    const succeeded = items.filter((r) => r.state === 'SUCCESS').length;
    const everything = all || succeeded === wi.count;
    this.unacceptUnits(task, !everything);
    // the items that run again wait to start; the others keep their SUCCESS and result
    for (const r of items)
      if ((everything || r.state !== 'SUCCESS') && (r.state !== null || r.result !== null))
        this.setItem(task, r.index, null, null);
    const next = newProgress();
    if (!everything) next.done = succeeded;
    task.runtimeContext[PROGRESS] = next;
    this.touch(task);
  }

  /**
   * Marks the task's accepted units (action executions, sub-executions) not accepted; with
   * `keepSucceeded`, those in SUCCESS stay. Action rows the snapshot does not hold are reached by a
   * set-based change.
   */
  private unacceptUnits(task: TaskExecution, keepSucceeded: boolean, onlyUnfinished = false): void {
    const matches = (state: string) =>
      onlyUnfinished ? !isCompleted(state) : !(keepSucceeded && state === 'SUCCESS');
    for (const a of this.actions) {
      if (a.taskExecutionId === task.id && a.accepted && matches(a.state)) {
        a.accepted = false;
        this.touchAction(a);
      }
    }
    if (task.type === 'ACTION') {
      this.unaccepted.push({
        taskExecutionId: task.id,
        ...(onlyUnfinished
          ? { states: ['IDLE', 'RUNNING', 'PAUSED'] }
          : keepSucceeded
            ? { states: ['IDLE', 'RUNNING', 'PAUSED', 'ERROR', 'CANCELLED'] }
            : {}),
      });
      return;
    }
    const units = subUnits(task);
    if (units.some((u) => u.accepted && matches(u.state))) {
      task.runtimeContext['sub_executions'] = units.map((u) =>
        u.accepted && matches(u.state) ? { ...u, accepted: false } : u,
      );
      this.touch(task);
    }
  }

  /** Starts one action execution or sub-workflow for the task (one item of with-items, or the only one). */
  private startUnit(
    task: TaskExecution,
    spec: TaskSpec,
    itemVars: JsonMap,
    index: number | null,
    timeoutSeconds: number | undefined,
  ): void {
    const data = index === null ? this.taskData(task) : this.itemData(task, itemVars);
    let input: unknown;
    try {
      input = this.eval(spec.input, data, task);
    } catch (e) {
      throw new FatalTaskError(task, this.runFailure(task, errorMessage(e)));
    }
    if (input === null || typeof input !== 'object' || Array.isArray(input)) {
      throw new FatalTaskError(
        task,
        this.runFailure(
          task,
          `Wrong dynamic input for task: ${task.name}. Dict type is expected. Actual type: ${pyTypeName(input)}. Actual value: ${pyStr(input)}`,
        ),
      );
    }
    const evaluatedInput = input as JsonMap;
    if (spec.type === 'WORKFLOW') {
      let name: unknown;
      try {
        name = this.eval(spec.workflow, data, task);
      } catch (e) {
        throw new FatalTaskError(task, this.runFailure(task, errorMessage(e)));
      }
      const subId = this.newId();
      const units = subUnits(task);
      units.push({ id: subId, index, state: 'RUNNING', result: null, stateInfo: null, accepted: true });
      task.runtimeContext['sub_executions'] = units;
      this.touch(task);
      const params: JsonMap = {
        namespace: this.ex.params['namespace'] ?? this.ex.workflowNamespace,
        env: this.env,
        evaluate_env: false,
        root_execution_id: this.ex.rootExecutionId ?? this.ex.id,
        task_execution_id: task.id,
        ...(index !== null ? { index } : {}),
        ...(this.ex.params['notify'] !== undefined ? { notify: this.ex.params['notify'] } : {}),
      };
      this.effects.push({
        type: 'start-sub-workflow',
        subExecutionId: subId,
        taskExecutionId: task.id,
        taskName: task.name,
        workflowName: String(name),
        input: evaluatedInput,
        params,
        rootExecutionId: this.ex.rootExecutionId ?? this.ex.id,
        itemIndex: index,
      });
      return;
    }
    let actionName: unknown = spec.action ?? DEFAULT_ACTION;
    try {
      actionName = this.eval(actionName, data, task);
    } catch (e) {
      throw new FatalTaskError(task, this.runFailure(task, errorMessage(e)));
    }
    const name =
      actionName === null || actionName === undefined || actionName === ''
        ? DEFAULT_ACTION
        : String(actionName);
    const defaults = (this.env['__actions'] as JsonMap | undefined)?.[name];
    const finalInput =
      defaults && typeof defaults === 'object' && !Array.isArray(defaults)
        ? { ...(defaults as JsonMap), ...evaluatedInput }
        : evaluatedInput;
    const action: ActionExecution = {
      id: this.newId(),
      taskExecutionId: task.id,
      executionId: this.ex.id,
      name,
      state: 'RUNNING',
      stateInfo: null,
      input: finalInput,
      output: null,
      accepted: true,
      itemIndex: index,
      createdAt: this.now,
      updatedAt: null,
    };
    this.actions.push(action);
    this.actionsById.set(action.id, action);
    this.createdActions.add(action.id);
    this.effects.push({
      type: 'run-action',
      actionExecutionId: action.id,
      taskExecutionId: task.id,
      taskName: task.name,
      actionName: name,
      input: finalInput,
      itemIndex: index,
      ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
      safeRerun: spec.safeRerun === true,
      // Only an ad-hoc action reads the task's data (its base-input, DSL-7.2); a standard one never
      // does. Sent with every item of a with-items task, that data (which holds the list when it
      // comes from the input or a published variable) made N items cost O(N²) bytes.
      ...(isStandardAction(name) ? {} : { taskData: stripInternal(this.taskData(task, itemVars)) }),
    });
  }

  // ---------------------------------------------------------------- results

  private onActionCompleted(ev: Extract<EngineEvent, { type: 'action-completed' }>): void {
    const action = this.actionsById.get(ev.actionExecutionId);
    if (!action || isCompleted(action.state)) return;
    action.state = ev.state;
    action.output = {
      result: ev.state === 'SUCCESS' ? (ev.result ?? null) : ev.state === 'ERROR' ? (ev.error ?? null) : null,
    };
    action.stateInfo = ev.state === 'ERROR' ? truncate(ev.fatal?.message ?? pyStr(ev.error ?? null)) : null;
    this.touchAction(action);
    const task = this.task(action.taskExecutionId);
    if (!task || !action.accepted || task.state !== 'RUNNING') return;
    if (ev.fatal) throw new FatalTaskError(task, this.runFailure(task, ev.fatal.message));
    if (action.itemIndex !== null)
      return this.onItemCompleted(task, action.itemIndex, ev.state, action.output['result']);
    task.result = action.output['result'];
    this.completeTask(task, ev.state, ev.state === 'ERROR' ? pyStr(ev.error ?? null) : null);
  }

  /**
   * An async action, or a sub-execution of a WORKFLOW task (`actionExecutionId` is then the
   * sub-execution's id), was paused or resumed. Mistral: the task takes that state; a pause pauses
   * this execution (and so its other sub-executions); a resume resumes it once no task is PAUSED.
   */
  private onActionStateChanged(ev: Extract<EngineEvent, { type: 'action-state-changed' }>): void {
    const action = this.actionsById.get(ev.actionExecutionId);
    let task: TaskExecution | undefined;
    if (action) {
      if (isCompleted(action.state) || action.state === ev.state) return;
      action.state = ev.state;
      this.touchAction(action);
      task = this.task(action.taskExecutionId);
    } else {
      task = this.task(ev.taskExecutionId);
      const unit = task ? subUnits(task).find((u) => u.id === ev.actionExecutionId) : undefined;
      if (!task || !unit || isCompleted(unit.state) || isCompleted(this.subStates.get(unit.id) ?? unit.state))
        return;
    }
    if (ev.state === 'PAUSED') {
      if (task && task.state === 'RUNNING') this.setTaskState(task, 'PAUSED', null);
      if (this.ex.state === 'RUNNING') this.pause(null);
    } else {
      if (task && task.state === 'PAUSED') this.setTaskState(task, 'RUNNING', null);
      if (this.ex.state === 'PAUSED' && !this.tasks.some((t) => t.state === 'PAUSED')) this.resume(undefined);
    }
  }

  private onSubWorkflowCompleted(ev: Extract<EngineEvent, { type: 'sub-workflow-completed' }>): void {
    this.subStates.set(ev.subExecutionId, ev.state);
    const task = this.task(ev.taskExecutionId);
    if (!task) return;
    const units = subUnits(task);
    const unit = units.find((u) => u.id === ev.subExecutionId);
    if (!unit || isCompleted(unit.state)) return;
    unit.state = ev.state;
    unit.result = ev.state === 'SUCCESS' ? (ev.output ?? {}) : null;
    unit.stateInfo = ev.stateInfo ?? null;
    task.runtimeContext['sub_executions'] = units;
    this.touch(task);
    // a task PAUSED with its paused sub-execution takes the result too (a paused child may be cancelled or failed)
    if (!unit.accepted || (task.state !== 'RUNNING' && task.state !== 'PAUSED')) return;
    if (unit.index !== null) return this.onItemCompleted(task, unit.index, ev.state, unit.result);
    task.result = unit.result;
    this.completeTask(task, ev.state, ev.state === 'SUCCESS' ? null : (ev.stateInfo ?? null));
  }

  /**
   * One item's accepted outcome (DSL-14.8): counted in the task's progress, a slot freed for the next
   * item; when every item has an outcome the task completes with the results in item order.
   */
  private onItemCompleted(
    task: TaskExecution,
    index: number,
    state: 'SUCCESS' | 'ERROR' | 'CANCELLED',
    result: unknown,
  ): void {
    const wi = task.runtimeContext['with_items'] as WithItemsState | undefined;
    const p = task.runtimeContext[PROGRESS] as WithItemsProgress | undefined;
    // the unit is accepted and was running, so its item is one of this attempt's running items
    if (!wi || !p || p.running <= 0) return;
    p.running--;
    p.done++;
    this.setItem(task, index, state, result);
    this.touch(task);
    if (p.done < wi.count) {
      this.scheduleItems(task);
      return;
    }
    // the last outcome: the results are gathered once, in item order
    const items = this.allItems(task, wi.count);
    task.result = items.map((r) => r.result ?? null);
    if (items.some((r) => r.state === 'CANCELLED'))
      this.completeTask(task, 'CANCELLED', 'One or more actions was cancelled.');
    else if (items.some((r) => r.state === 'ERROR'))
      this.completeTask(task, 'ERROR', 'One or more actions had failed.');
    else this.completeTask(task, 'SUCCESS', null);
  }

  /** A task reached a completed state: publish, after-policies, then route (DSL-14.2). */
  private completeTask(
    task: TaskExecution,
    state: 'SUCCESS' | 'ERROR' | 'CANCELLED',
    stateInfo: string | null,
  ): void {
    const timer = task.runtimeContext['timer'] as TaskTimer | undefined;
    if (timer?.kind === 'timeout') delete task.runtimeContext['timer'];
    this.setTaskState(task, state, stateInfo);
    if (state !== 'CANCELLED') this.publish(task, state);
    this.afterPolicies(task, 'wait-after');
  }

  private publish(task: TaskExecution, state: CompletedTaskState): void {
    const spec = this.spec(task);
    const scopes = resolvePublish(spec, state);
    task.published = {};
    task.publishedGlobal = {};
    if (scopes) {
      const data = this.taskData(task);
      try {
        if (scopes.branch) task.published = this.eval(scopes.branch, data, task) as JsonMap;
        if (scopes.global) {
          task.publishedGlobal = this.eval(scopes.global, data, task) as JsonMap;
          Object.assign(this.ex.context, task.publishedGlobal);
          this.dataVersion++;
        }
      } catch (e) {
        throw new FatalTaskError(task, this.completionFailure(task, errorMessage(e)));
      }
    }
    if (spec.keepResult === false) {
      task.runtimeContext['result_cleared'] = true;
      task.result = null;
    }
    this.touch(task);
  }

  /** After-completion policies in order wait-after, fail-on, retry (DSL-6.2), then routing. */
  private afterPolicies(task: TaskExecution, from: 'wait-after' | 'fail-on'): void {
    const spec = this.spec(task);
    const state = task.state as 'SUCCESS' | 'ERROR' | 'CANCELLED' | 'SKIPPED';
    if (state !== 'CANCELLED' && state !== 'SKIPPED') {
      const data = this.outboundData(task);
      if (from === 'wait-after' && spec.policies.waitAfter !== undefined) {
        const delay = Number(
          this.evalPolicyOnCompletion(task, 'WaitAfterPolicy', spec.policies.waitAfter, data, 'number'),
        );
        if (delay > 0) {
          const info = task.stateInfo;
          task.runtimeContext['wait_after_info'] = info;
          this.setTaskState(task, 'DELAYED', `Delayed by 'wait-after' policy [delay=${delay}]`);
          task.finishedAt = null;
          this.armTimer(task, 'wait-after', delay, state);
          return;
        }
      }
      if (state === 'SUCCESS' && spec.policies.failOn !== undefined) {
        const fail = this.evalPolicyOnCompletion(task, 'FailOnPolicy', spec.policies.failOn, data, 'boolean');
        if (isTruthy(fail)) this.setTaskState(task, 'ERROR', "Failed by 'fail-on' policy");
      }
      if (spec.policies.retry && this.shouldRetry(task, data)) return;
    }
    this.afterComplete(task);
  }

  private evalPolicyOnCompletion(
    task: TaskExecution,
    policy: string,
    value: unknown,
    data: JsonMap,
    type: 'number' | 'boolean',
  ): unknown {
    let v: unknown;
    try {
      v = this.eval(value, data, task);
    } catch (e) {
      throw new FatalTaskError(task, this.completionFailure(task, errorMessage(e)));
    }
    if (type === 'number' && (typeof v !== 'number' || !Number.isFinite(v) || v < 0)) {
      throw new FatalTaskError(
        task,
        this.completionFailure(task, `Invalid data type in ${policy}: ${pyRepr(v)}`),
      );
    }
    return v;
  }

  /** DSL-6.8: when the retry policy asks for another attempt, arm it and return true. */
  private shouldRetry(task: TaskExecution, data: JsonMap): boolean {
    const retry = this.spec(task).policies.retry!;
    const count = Number(this.evalPolicyOnCompletion(task, 'RetryPolicy', retry.count, data, 'number'));
    const delay = Number(this.evalPolicyOnCompletion(task, 'RetryPolicy', retry.delay, data, 'number'));
    const policy = (task.runtimeContext['retry_task_policy'] as { retry_no: number } | undefined) ?? {
      retry_no: 0,
    };
    if (policy.retry_no >= count) return false;
    if (
      task.state === 'ERROR' &&
      retry.breakOn !== undefined &&
      isTruthy(this.evalPolicyOnCompletion(task, 'RetryPolicy', retry.breakOn, data, 'boolean'))
    ) {
      return false;
    }
    if (task.state === 'SUCCESS' && retry.continueOn === undefined) return false;
    if (
      retry.continueOn !== undefined &&
      !isTruthy(this.evalPolicyOnCompletion(task, 'RetryPolicy', retry.continueOn, data, 'boolean'))
    ) {
      return false;
    }
    // with-items: only the items without a SUCCESS run again (all of them when none failed)
    if (this.spec(task).withItems.length > 0) this.requeueItems(task, task.state === 'SUCCESS');
    else this.unacceptUnits(task, false);
    task.runtimeContext['retry_task_policy'] = { retry_no: policy.retry_no + 1 };
    const join = this.spec(task).join !== undefined;
    this.setTaskState(task, join ? 'WAITING' : 'DELAYED', `Delayed by 'retry' policy [delay=${delay}]`);
    task.finishedAt = null;
    this.armTimer(task, 'retry', delay);
    return true;
  }

  private onTimer(taskId: string, timerId: string): void {
    const task = this.task(taskId);
    const timer = task?.runtimeContext['timer'] as TaskTimer | undefined;
    if (!task || !timer || timer.id !== timerId) return;
    delete task.runtimeContext['timer'];
    this.touch(task);
    switch (timer.kind) {
      case 'wait-before':
        if (task.state === 'DELAYED') this.startTask(task);
        return;
      case 'retry':
        if (task.state === 'DELAYED' || task.state === 'WAITING') {
          if (this.ex.state !== 'RUNNING') {
            this.setTaskState(task, 'IDLE', null);
            return;
          }
          this.startTask(task);
        }
        return;
      case 'wait-after': {
        if (task.state !== 'DELAYED') return;
        const then = timer.thenState ?? 'SUCCESS';
        this.setTaskState(
          task,
          then,
          (task.runtimeContext['wait_after_info'] as string | null | undefined) ?? null,
        );
        delete task.runtimeContext['wait_after_info'];
        this.afterPolicies(task, 'fail-on');
        return;
      }
      case 'timeout': {
        if (task.state !== 'RUNNING') return;
        const seconds = task.runtimeContext['with_items_timeout'] ?? this.timeoutSeconds(task);
        if (task.type === 'ACTION') this.unacceptUnits(task, false, true);
        this.completeTask(task, 'ERROR', `Task timed out [timeout(s)=${String(seconds)}].`);
        return;
      }
    }
  }

  private timeoutSeconds(task: TaskExecution): unknown {
    try {
      return this.eval(this.spec(task).policies.timeout, this.taskData(task), task);
    } catch {
      return this.spec(task).policies.timeout;
    }
  }

  // ---------------------------------------------------------------- routing

  /** Routes a completed task unless the execution is paused (then on resume, DSL-14.2). */
  private afterComplete(task: TaskExecution): void {
    if (this.ex.state !== 'RUNNING') return;
    if (this.ex.spec.type === 'direct') this.routeDirect(task);
    else this.routeReverse(task);
    task.processed = true;
    this.touch(task);
    this.recheckJoins();
    this.checkCompletion();
  }

  private collectTargets(
    task: TaskExecution,
  ): { item: Transition; event: TransitionEventName; params: JsonMap }[] {
    const spec = this.spec(task);
    const events: TransitionEvent[] = [];
    if (task.state === 'ERROR') events.push('on-error');
    if (task.state === 'SKIPPED') events.push(spec.transitions['on-skip'].length ? 'on-skip' : 'on-success');
    if (task.state === 'SUCCESS') events.push('on-success');
    if (task.state === 'SUCCESS' || task.state === 'ERROR') events.push('on-complete');
    const data = this.outboundData(task);
    const out: { item: Transition; event: TransitionEventName; params: JsonMap }[] = [];
    for (const event of events) {
      for (const item of spec.transitions[event]) {
        try {
          if (item.condition !== undefined && !isTruthy(this.eval(item.condition, data, task))) continue;
          const params = item.kind === 'command' ? (this.eval(item.params, data, task) as JsonMap) : {};
          out.push({ item, event: task.state === 'SKIPPED' ? 'on-skip' : event, params });
        } catch (e) {
          throw new FatalTaskError(task, this.completionFailure(task, errorMessage(e)));
        }
      }
    }
    return out;
  }

  private routeDirect(task: TaskExecution): void {
    const collected = this.collectTargets(task);
    task.errorHandled = task.state === 'ERROR' && collected.some((c) => c.event === 'on-error');
    const items = collected.filter((c) => !(c.item.kind === 'command' && c.item.target === 'noop'));
    const next: [string, TransitionEventName][] = [];
    const first = items[0];
    if (
      first &&
      first.item.kind === 'command' &&
      (first.item.target === 'succeed' || first.item.target === 'fail')
    ) {
      task.nextTasks = [];
      this.executeCommand(first.item.target, first.params, task, []);
      return;
    }
    const cmdIndex = items.findIndex((c) => c.item.kind === 'command');
    const before = cmdIndex < 0 ? items : items.slice(0, cmdIndex);
    for (const c of before) next.push([c.item.target, c.event]);
    task.nextTasks = next;
    this.touch(task);
    const cmd = cmdIndex < 0 ? undefined : items[cmdIndex]!;
    const after = cmdIndex < 0 ? [] : items.slice(cmdIndex + 1).filter((c) => c.item.kind === 'task');
    for (const c of before) this.startTarget(c.item.target, c.event, task);
    if (cmd) {
      if (cmd.item.target === 'pause') {
        for (const c of after) task.nextTasks.push([c.item.target, c.event]);
        this.executeCommand(
          'pause',
          cmd.params,
          task,
          after.map((c) => ({ target: c.item.target, event: c.event, fromTaskExecutionId: task.id })),
        );
      } else {
        this.executeCommand(cmd.item.target, cmd.params, task, []);
      }
    }
  }

  private executeCommand(
    command: string,
    params: JsonMap,
    task: TaskExecution,
    deferred: WorkflowExecution['deferred'],
  ): void {
    const msg = params['msg'] === undefined || params['msg'] === null ? null : pyStr(params['msg']);
    task.processed = true;
    this.touch(task);
    if (command === 'succeed') this.finish('SUCCESS', msg);
    else if (command === 'fail') this.finish('ERROR', msg);
    else if (command === 'pause') {
      this.ex.deferred = [...this.ex.deferred, ...deferred];
      this.setExecutionState('PAUSED', msg);
      this.pauseSubExecutions();
      this.controlParent('pause');
    }
  }

  /** Starts the task `target` reached from `from` (DSL-4.6, join DSL-4.8). */
  private startTarget(target: string, event: TransitionEventName, from: TaskExecution): void {
    const spec = this.spec(target);
    const trigger = { task_id: from.id, event };
    if (spec.join !== undefined && spec.join !== 0) {
      // One join execution takes one arrival per inbound task: a later arrival from a task that has
      // not arrived yet joins the existing execution (a no-op once it ran, as for `join: 1`); a new
      // execution is made only when every existing one already has this inbound task (loops).
      const arrivedFrom = (t: TaskExecution) =>
        ((t.runtimeContext['triggered_by'] as { task_id: string }[] | undefined) ?? []).some(
          (x) => this.task(x.task_id)?.name === from.name,
        );
      let join = this.tasks.find((t) => t.name === target && !arrivedFrom(t));
      if (!join) join = this.createTask(target, {}, [], 'WAITING');
      const triggered = (join.runtimeContext['triggered_by'] as { task_id: string; event: string }[]) ?? [];
      triggered.push(trigger);
      join.runtimeContext['triggered_by'] = triggered;
      this.touch(join);
      return;
    }
    this.runTask(this.createTask(target, outbound(from), [trigger]));
  }

  /** Join readiness (DSL-4.9) for every waiting join task. */
  private recheckJoins(): void {
    for (;;) {
      let progressed = false;
      for (const join of this.tasks.filter((t) => t.state === 'WAITING' && !t.runtimeContext['timer'])) {
        const spec = this.spec(join);
        if (spec.join === undefined) continue;
        const inbound = this.ex.spec.inboundTasks[join.name] ?? [];
        const triggered = (join.runtimeContext['triggered_by'] as { task_id: string }[]) ?? [];
        const arrivedTasks = triggered
          .map((t) => this.task(t.task_id))
          .filter((t): t is TaskExecution => !!t);
        const arrived = new Set(arrivedTasks.map((t) => t.name));
        const live = this.liveTaskNames(join);
        const pending = inbound.filter((n) => !arrived.has(n) && live.has(n));
        const dead = inbound.filter((n) => !arrived.has(n) && !live.has(n));
        const need = spec.join === 'all' ? inbound.length : spec.join;
        if (arrived.size >= need) {
          join.inContext = Object.assign(
            {},
            ...[...arrivedTasks]
              .sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0))
              .map(outbound),
          );
          join.stateInfo = null;
          this.touch(join);
          this.runTask(join);
          progressed = true;
        } else if (dead.length > inbound.length - need) {
          join.result = [];
          this.setTaskState(join, 'ERROR', `Failed by tasks: ${pyRepr(dead)}`);
          this.publish(join, 'ERROR');
          this.afterPolicies(join, 'wait-after');
          progressed = true;
        } else {
          const info = `Blocked by tasks: ${pyRepr(pending)}`;
          if (join.stateInfo !== info) {
            join.stateInfo = info;
            this.touch(join);
          }
        }
        if (progressed) break;
      }
      if (!progressed || this.ex.state !== 'RUNNING') return;
    }
  }

  /** Task names that may still run: active tasks and everything reachable from them (except through `exclude`). */
  private liveTaskNames(exclude: TaskExecution): Set<string> {
    const active = new Set<string>();
    for (const t of this.tasks) {
      if (t.id === exclude.id) continue;
      if (INCOMPLETE_TASK_STATES.has(t.state) || !t.processed) active.add(t.name);
    }
    for (const d of this.ex.deferred) active.add(d.target);
    const live = new Set<string>();
    const stack = [...active];
    while (stack.length) {
      const n = stack.pop()!;
      if (live.has(n)) continue;
      live.add(n);
      if (n === exclude.name) continue;
      const s = this.ex.spec.tasks.find((t) => t.name === n);
      if (!s) continue;
      for (const ev of ['on-success', 'on-error', 'on-complete', 'on-skip'] as const) {
        for (const tr of s.transitions[ev]) if (tr.kind === 'task') stack.push(tr.target);
      }
    }
    return live;
  }

  // ---------------------------------------------------------------- reverse workflows

  private reverseNeeded(): Set<string> {
    const target = String(this.ex.params['task_name'] ?? '');
    const needed = new Set<string>();
    const stack = [target];
    while (stack.length) {
      const n = stack.pop()!;
      if (needed.has(n)) continue;
      const s = this.ex.spec.tasks.find((t) => t.name === n);
      if (!s) continue;
      needed.add(n);
      stack.push(...s.requires);
    }
    return needed;
  }

  /**
   * Needed tasks not yet started whose prerequisites all have a SUCCESS execution (DSL-5.2); a
   * prerequisite skipped by hand (DSL-15.7) counts as done, so skipping it lets its dependants run.
   */
  private reverseReady(): string[] {
    const ok = new Set(
      this.tasks.filter((t) => t.state === 'SUCCESS' || t.state === 'SKIPPED').map((t) => t.name),
    );
    const started = new Set(this.tasks.map((t) => t.name));
    return [...this.reverseNeeded()].filter(
      (n) => !started.has(n) && this.spec(n).requires.every((r) => ok.has(r)),
    );
  }

  private reverseInContext(name: string): JsonMap {
    const out: JsonMap = {};
    for (const r of this.spec(name).requires) {
      const t = [...this.tasks]
        .reverse()
        .find((x) => x.name === r && (x.state === 'SUCCESS' || x.state === 'SKIPPED'));
      if (t) Object.assign(out, outbound(t));
    }
    return out;
  }

  private routeReverse(task: TaskExecution): void {
    task.nextTasks = [];
    if (task.state !== 'SUCCESS' && task.state !== 'SKIPPED') return;
    for (const name of this.reverseReady()) {
      if (this.spec(name).requires.includes(task.name)) task.nextTasks.push([name, 'on-success']);
      this.runTask(
        this.createTask(name, this.reverseInContext(name), [{ task_id: task.id, event: 'on-success' }]),
      );
    }
  }

  // ---------------------------------------------------------------- completion

  /** DSL-13.2. */
  private checkCompletion(): void {
    if (this.ex.state !== 'RUNNING') return;
    if (this.ex.deferred.length > 0) return;
    if (this.tasks.some((t) => INCOMPLETE_TASK_STATES.has(t.state) || !t.processed)) return;
    const cancelled = this.tasks.filter((t) => t.state === 'CANCELLED');
    if (cancelled.length) {
      this.finish('CANCELLED', `Cancelled tasks: ${cancelled.map((t) => t.name).join(', ')}`);
      return;
    }
    const failed = this.unhandledErrors();
    if (failed.length === 0) this.finish('SUCCESS', null);
    else this.finish('ERROR', this.failureSummary(failed));
  }

  private unhandledErrors(): TaskExecution[] {
    const reverse = this.ex.spec.type === 'reverse';
    const latest = new Map<string, TaskExecution>();
    for (const t of this.tasks) if (t.state === 'ERROR' && (reverse || !t.errorHandled)) latest.set(t.id, t);
    return [...latest.values()];
  }

  /** DSL-13.3 (with DSL-18.5). */
  private failureSummary(failed: TaskExecution[]): string {
    const sorted = [...failed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let s = `Failure caused by error in tasks: ${sorted.map((t) => t.name).join(', ')}\n`;
    for (const t of sorted) {
      s += `\n  ${t.name} [task_ex_id=${t.id}] -> ${t.stateInfo ?? 'None'}\n`;
      if (t.type === 'ACTION') {
        this.actions
          .filter((a) => a.taskExecutionId === t.id)
          .forEach((a, i) => {
            if (a.state === 'ERROR')
              s += `    [action_ex_id=${a.id}, idx=${a.ordinal ?? i}]: ${a.stateInfo ?? pyStr(a.output?.['result'] ?? null)}\n`;
          });
      } else {
        subUnits(t).forEach((u, i) => {
          if (u.state === 'ERROR') s += `    [wf_ex_id=${u.id}, idx=${i}]: ${u.stateInfo ?? 'None'}\n`;
        });
      }
    }
    return s;
  }

  /** Final context (DSL-13.4): published branch data of tasks that ended a branch. */
  private finalContext(): JsonMap {
    if (this.ex.spec.type === 'reverse') {
      const target = String(this.ex.params['task_name'] ?? '');
      const t = [...this.tasks].reverse().find((x) => x.name === target);
      return t ? outbound(t) : {};
    }
    const out: JsonMap = {};
    const ends = this.tasks
      .filter((t) => isCompleted(t.state) && t.nextTasks.length === 0)
      .sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0));
    for (const t of ends) Object.assign(out, outbound(t));
    return out;
  }

  /** Ends the execution (DSL-13.4, 15.4, 15.5): output, event, parent notification. */
  private finish(state: 'SUCCESS' | 'ERROR' | 'CANCELLED', stateInfo: string | null): void {
    const spec = this.ex.spec;
    const fc = this.finalContext();
    const data = { ...this.ex.input, ...this.ex.context, ...fc, __env: this.env };
    if (state === 'SUCCESS') {
      if (spec.output) {
        try {
          this.ex.output = this.eval(spec.output, data) as JsonMap;
        } catch (e) {
          state = 'ERROR';
          stateInfo = `Failed to evaluate expression in output [error=${errorMessage(e)}, wf=${this.ex.workflowName}]`;
        }
      } else {
        this.ex.output = fc;
      }
    }
    if (state === 'ERROR') {
      let extra: JsonMap = {};
      if (spec.outputOnError) {
        try {
          extra = this.eval(spec.outputOnError, data) as JsonMap;
        } catch {
          extra = {};
        }
      }
      this.ex.output = { result: truncate(stateInfo), ...extra };
    }
    if (state === 'CANCELLED') this.ex.output = { result: stateInfo };
    this.ex.deferred = [];
    this.setExecutionState(state, stateInfo);
    if (this.ex.taskExecutionId) {
      this.effects.push({
        type: 'notify-parent',
        taskExecutionId: this.ex.taskExecutionId,
        subExecutionId: this.ex.id,
        state,
        output: this.ex.output,
        stateInfo: this.ex.stateInfo,
      });
    }
  }

  /**
   * The reconciler found the task stuck (issue #15): it fails as a fatal task error (DSL-13.6), unless
   * it finished or changed since the reconciler looked.
   */
  private failStuckTask(taskId: string, updatedAt: string | undefined, message: string | null): void {
    const task = this.task(taskId);
    if (!task || isCompleted(task.state) || isCompleted(this.ex.state)) return;
    if (updatedAt !== undefined && (task.updatedAt ?? task.createdAt).getTime() !== Date.parse(updatedAt))
      return;
    this.failFatally(task, message ?? 'reconciler: the task was stuck');
  }

  /** DSL-13.6: the task fails and the execution is forced to ERROR with the same text. */
  private failFatally(task: TaskExecution, stateInfo: string): void {
    if (!isCompleted(task.state) || task.state !== 'ERROR') this.setTaskState(task, 'ERROR', stateInfo);
    task.stateInfo = truncate(stateInfo);
    task.processed = true;
    delete task.runtimeContext['timer'];
    this.touch(task);
    if (!isCompleted(this.ex.state)) this.finish('ERROR', stateInfo);
  }

  // ---------------------------------------------------------------- control operations

  private isRunning(): boolean {
    return this.ex.state === 'RUNNING';
  }

  private runningSubExecutions(): string[] {
    const out: string[] = [];
    for (const t of this.tasks) {
      if (t.type !== 'WORKFLOW') continue;
      for (const u of subUnits(t)) {
        const st = this.subStates.get(u.id) ?? u.state;
        if (!isCompleted(st)) out.push(u.id);
      }
    }
    return out;
  }

  /**
   * Pauses the running sub-executions and marks their WORKFLOW tasks PAUSED (Mistral: a task whose
   * sub-workflow is paused is PAUSED; resume sets it RUNNING again).
   */
  private pauseSubExecutions(): void {
    for (const t of this.tasks) {
      if (
        t.type === 'WORKFLOW' &&
        t.state === 'RUNNING' &&
        subUnits(t).some((u) => !isCompleted(this.subStates.get(u.id) ?? u.state))
      ) {
        this.setTaskState(t, 'PAUSED', null);
      }
    }
    for (const id of this.runningSubExecutions())
      this.effects.push({ type: 'control-sub-execution', subExecutionId: id, command: 'pause' });
  }

  private pause(message: string | null): void {
    if (this.ex.state !== 'RUNNING') return;
    this.setExecutionState('PAUSED', message);
    this.pauseSubExecutions();
    this.controlParent('pause');
  }

  /**
   * Pause and resume of a sub-execution cascade up to its parent task (and from there to the root),
   * delivered to the parent as a state change of the task's "action" (the sub-execution): a parent
   * already in that state ignores it, so a cascade down does not bounce back.
   */
  private controlParent(command: 'pause' | 'resume'): void {
    if (this.ex.taskExecutionId) {
      this.effects.push({
        type: 'control-parent-execution',
        taskExecutionId: this.ex.taskExecutionId,
        subExecutionId: this.ex.id,
        command,
      });
    }
  }

  private resume(env: JsonMap | undefined): void {
    if (this.ex.state !== 'PAUSED' && this.ex.state !== 'IDLE') return;
    if (env) this.ex.params = { ...this.ex.params, env: { ...this.env, ...env } };
    this.setExecutionState('RUNNING', null);
    this.controlParent('resume');
    for (const id of this.runningSubExecutions())
      this.effects.push({ type: 'control-sub-execution', subExecutionId: id, command: 'resume' });
    const deferred = this.ex.deferred;
    this.ex.deferred = [];
    // completed tasks whose routing waited for resume
    const unprocessed = this.tasks
      .filter((t) => isCompleted(t.state) && !t.processed)
      .sort((a, b) => (a.finishedAt?.getTime() ?? 0) - (b.finishedAt?.getTime() ?? 0));
    for (const t of unprocessed) {
      if (!this.isRunning()) return;
      this.afterComplete(t);
    }
    for (const d of deferred) {
      if (!this.isRunning()) return;
      const from = this.task(d.fromTaskExecutionId);
      if (from) this.startTarget(d.target, d.event, from);
    }
    for (const t of this.tasks.filter((x) => x.state === 'IDLE')) {
      if (!this.isRunning()) return;
      this.runTask(t);
    }
    for (const t of this.tasks.filter((x) => x.state === 'PAUSED')) this.setTaskState(t, 'RUNNING', null);
    // with-items tasks whose waiting items were held back by the pause
    for (const t of this.tasks.filter(
      (x) =>
        x.state === 'RUNNING' &&
        x.runtimeContext['with_items'] !== undefined &&
        x.runtimeContext[PROGRESS] !== undefined,
    )) {
      if (!this.isRunning()) return;
      this.scheduleItems(t);
    }
    this.recheckJoins();
    this.checkCompletion();
  }

  private cancel(message: string | null): void {
    if (isCompleted(this.ex.state)) return;
    for (const id of this.runningSubExecutions()) {
      this.effects.push({ type: 'control-sub-execution', subExecutionId: id, command: 'cancel', message });
    }
    this.finish('CANCELLED', message);
  }

  /** Sets a completed execution RUNNING again and tells its parent, up to the root (DSL-15.6). */
  private reopenExecution(): void {
    if (this.ex.state === 'RUNNING') return;
    this.ex.output = {};
    this.setExecutionState('RUNNING', null);
    if (this.ex.taskExecutionId) {
      this.effects.push({
        type: 'notify-parent-rerun',
        taskExecutionId: this.ex.taskExecutionId,
        subExecutionId: this.ex.id,
      });
    }
  }

  /** A sub-execution of one of our tasks was rerun: the task waits for it again. */
  private onSubWorkflowRerun(taskId: string, subId: string): void {
    const task = this.task(taskId);
    if (!task) return;
    const units = subUnits(task);
    const unit = units.find((u) => u.id === subId);
    if (!unit || !isCompleted(unit.state)) return;
    unit.state = 'RUNNING';
    unit.result = null;
    unit.stateInfo = null;
    unit.accepted = true;
    task.runtimeContext['sub_executions'] = units;
    this.subStates.set(subId, 'RUNNING');
    if (isCompleted(task.state)) {
      task.state = 'RUNNING';
      task.stateInfo = null;
      task.finishedAt = null;
      task.processed = false;
      task.errorHandled = false;
      task.nextTasks = [];
      task.result = null;
      this.notify('TASK_RERUN', task.id);
    }
    this.touch(task);
    this.reopenExecution();
  }

  /**
   * The API claims a task for one rerun or skip at a time (`runtime_context.control_request`, set
   * under the execution's row lock); the command that carries the claim releases it, applied or not.
   */
  private releaseControlRequest(task: TaskExecution | undefined): void {
    if (!task || !(CONTROL_REQUEST in task.runtimeContext)) return;
    delete task.runtimeContext[CONTROL_REQUEST];
    this.touch(task);
  }

  /**
   * Whether a rerun or skip request still holds the task's claim. Commands arrive at least once: a
   * request delivered again after the first delivery applied it (and released the claim) must not
   * rerun the task a second time when it has failed again meanwhile. Requests without an id (none
   * come from the API) are applied as they come.
   */
  private claimedBy(taskId: string, requestId: string | undefined): boolean {
    if (requestId === undefined) return true;
    return this.task(taskId)?.runtimeContext[CONTROL_REQUEST] === requestId;
  }

  private rerunTask(taskId: string, reset: boolean, env: JsonMap | undefined): void {
    const task = this.task(taskId);
    this.releaseControlRequest(task);
    if (!task || task.state !== 'ERROR' || this.ex.state === 'PAUSED') return;
    if (env) this.ex.params = { ...this.ex.params, env: { ...this.env, ...env } };
    this.reopenExecution();
    if (task.runtimeContext['with_items'] === undefined) this.unacceptUnits(task, false);
    else if (reset) {
      this.unacceptUnits(task, false);
      delete task.runtimeContext['with_items'];
      delete task.runtimeContext[PROGRESS];
    } else this.requeueItems(task, false);
    delete task.runtimeContext['retry_task_policy'];
    task.errorHandled = false;
    task.nextTasks = [];
    task.processed = false;
    task.published = {};
    task.result = null;
    this.touch(task);
    this.startTask(task);
  }

  private skipTask(taskId: string): void {
    const task = this.task(taskId);
    this.releaseControlRequest(task);
    if (!task || task.state !== 'ERROR') return;
    if (this.ex.state === 'ERROR') this.reopenExecution();
    this.setTaskState(task, 'SKIPPED', 'Task was skipped.');
    task.errorHandled = false;
    this.publish(task, 'SKIPPED');
    task.processed = false;
    this.afterComplete(task);
  }
}

// ------------------------------------------------------------------ helpers

/** Runtime-context key of {@link WithItemsProgress}. */
const PROGRESS = 'with_items_progress';

const newProgress = (): WithItemsProgress => ({ cursor: 0, running: 0, done: 0 });

const progressOf = (task: TaskExecution): WithItemsProgress =>
  task.runtimeContext[PROGRESS] as WithItemsProgress;

/**
 * The item rows of one with-items task a decision holds: every one (`all`), or those of the windows
 * loaded for it (each window lists every item waiting to start in its index range), plus those it
 * changed.
 */
interface ItemBook {
  rows: Map<number, TaskItem>;
  all: boolean;
  windows: { from: number; to: number }[];
  /** The list was evaluated by this decision: every row is written as new. */
  created: boolean;
  /** Indexes whose state or result this decision changed. */
  changed: Set<number>;
}

/** Outbound context (DSL-14.4). */
const outbound = (t: TaskExecution): JsonMap => ({ ...t.inContext, ...t.published });

interface SubUnit {
  id: string;
  index: number | null;
  state: string;
  result: unknown;
  stateInfo: string | null;
  accepted: boolean;
}

const subUnits = (t: TaskExecution): SubUnit[] =>
  ((t.runtimeContext['sub_executions'] as SubUnit[] | undefined) ?? []).map((u) => ({ ...u }));

const stripInternal = (data: JsonMap): JsonMap => {
  const out: JsonMap = {};
  for (const [k, v] of Object.entries(data)) if (!k.startsWith('__')) out[k] = v;
  return out;
};

const pyTypeName = (v: unknown): string =>
  v === null || v === undefined
    ? "<class 'NoneType'>"
    : Array.isArray(v)
      ? "<class 'list'>"
      : typeof v === 'string'
        ? "<class 'str'>"
        : typeof v === 'boolean'
          ? "<class 'bool'>"
          : typeof v === 'number'
            ? Number.isInteger(v)
              ? "<class 'int'>"
              : "<class 'float'>"
            : "<class 'dict'>";

/** DSL-16.3 task events. */
const taskEvent = (from: TaskState, to: TaskState, started: boolean): NotifyEventName | null => {
  if (from === to) return null;
  switch (to) {
    case 'SUCCESS':
      return 'TASK_SUCCEEDED';
    case 'ERROR':
      return 'TASK_FAILED';
    case 'CANCELLED':
      return 'TASK_CANCELLED';
    case 'SKIPPED':
      return 'TASK_SKIPPED';
    case 'PAUSED':
      return 'TASK_PAUSED';
    case 'RUNNING':
      return started ? 'TASK_RESUMED' : null;
    case 'IDLE':
    case 'WAITING':
    case 'DELAYED':
      return null;
  }
};

/** DSL-16.3 workflow events. */
const workflowEvent = (from: ExecutionState, to: ExecutionState): NotifyEventName | null => {
  if (from === to) return null;
  switch (to) {
    case 'RUNNING':
      return from === 'PAUSED'
        ? 'WORKFLOW_RESUMED'
        : from === 'ERROR'
          ? 'WORKFLOW_RERUN'
          : 'WORKFLOW_LAUNCHED';
    case 'PAUSED':
      return 'WORKFLOW_PAUSED';
    case 'SUCCESS':
      return 'WORKFLOW_SUCCEEDED';
    case 'ERROR':
      return 'WORKFLOW_FAILED';
    case 'CANCELLED':
      return 'WORKFLOW_CANCELLED';
    case 'IDLE':
      return null;
  }
};
