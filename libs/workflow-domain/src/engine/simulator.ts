import type { WorkflowSpec } from '../dsl/model';
import { decide, decideBatch } from './decide';
import { type HistoryEvent, historyEvents } from './history';
import {
  type ActionExecution,
  type Decision,
  type EngineEffect,
  type EngineEvent,
  type ExecutionSnapshot,
  ItemsNeeded,
  type ItemsRequest,
  type JsonMap,
  type LoadedItems,
  type SubExecutionRef,
  type TaskExecution,
  type TaskItem,
  type WorkflowExecution,
} from './model';
import { isCompleted } from './states';

/** How the simulated executor answers an action run. */
export type ActionScript = (
  name: string,
  input: JsonMap,
) =>
  | {
      state: 'SUCCESS' | 'ERROR' | 'CANCELLED';
      result?: unknown;
      error?: unknown;
      fatal?: { message: string };
    }
  | 'async';

/** The standard actions the simulator knows (no I/O): noop, echo, fail, test_dict, async_noop. */
export const defaultActionScript: ActionScript = (name, input) => {
  switch (name) {
    case 'std.noop':
    case 'std.sleep':
      return { state: 'SUCCESS', result: null };
    case 'std.echo':
      return { state: 'SUCCESS', result: input['output'] ?? null };
    case 'std.fail':
      return input['error_data'] !== undefined && input['error_data'] !== null
        ? { state: 'ERROR', error: input['error_data'] }
        : { state: 'ERROR', error: 'Fail action expected exception.' };
    case 'std.async_noop':
      return 'async';
    default:
      return {
        state: 'ERROR',
        fatal: { message: `Failed to find action [action_name=${name}, namespace=]` },
      };
  }
};

interface Sim {
  execution: WorkflowExecution;
  tasks: TaskExecution[];
  actions: ActionExecution[];
  subs: SubExecutionRef[];
  /** with-items rows by task, then index (the store's `task_execution_items`). */
  items: Map<string, Map<number, TaskItem>>;
}

/**
 * An in-memory engine for tests and benchmarks of the pure core: it applies decisions to rows, runs
 * actions with a script, starts sub-workflows from a catalog and fires timers on demand. It is what the
 * real engine does minus the database, the queues and the clock.
 */
export class EngineSimulator {
  readonly executions = new Map<string, Sim>();
  readonly queue: { executionId: string; event: EngineEvent }[] = [];
  readonly timers: {
    executionId: string;
    taskExecutionId: string;
    timerId: string;
    kind: 'wait-before' | 'wait-after' | 'retry' | 'timeout';
    delayMs: number;
  }[] = [];
  readonly effects: EngineEffect[] = [];
  readonly asyncActions: { executionId: string; taskExecutionId: string; actionExecutionId: string }[] = [];
  /** The history entries of every decision so far, in order (what the store appends). */
  readonly history: HistoryEvent[] = [];
  private seq = 0;
  now = new Date('2026-01-01T00:00:00Z');
  /**
   * Feed `decide` the smallest snapshot its contract allows, as the store does: plain tasks' action
   * executions but the successful ones of tasks in SUCCESS, those in ERROR and the items the event
   * names; the others of with-items tasks left out.
   */
  partialSnapshots = false;
  /** `decide`'s `itemsPerDecision` (0: every item at once), as the engine's configuration sets it. */
  itemsPerDecision = 0;

  constructor(
    private readonly catalog: Record<string, WorkflowSpec>,
    private readonly script: ActionScript = defaultActionScript,
  ) {}

  readonly newId = (): string => {
    this.seq++;
    return `00000000-0000-4000-8000-${String(this.seq).padStart(12, '0')}`;
  };

  /** Creates an execution row as the API does (RUNNING) and queues its start. */
  create(
    workflowName: string,
    input: JsonMap = {},
    params: JsonMap = {},
    parent?: { taskExecutionId: string; rootExecutionId: string },
    id?: string,
  ): string {
    const spec = this.catalog[workflowName];
    if (!spec) throw new Error(`unknown workflow ${workflowName}`);
    const withDefaults: JsonMap = {};
    for (const p of spec.input) if (!p.required) withDefaults[p.name] = p.default ?? null;
    const execution: WorkflowExecution = {
      id: id ?? this.newId(),
      workflowId: `wf-${workflowName}`,
      workflowName,
      workflowNamespace: '',
      spec,
      description: '',
      tags: [],
      projectId: 'p1',
      state: 'RUNNING',
      stateInfo: null,
      input: { ...withDefaults, ...input },
      output: {},
      params: { namespace: '', env: {}, ...params },
      context: {},
      varNames: [],
      taskExecutionId: parent?.taskExecutionId ?? null,
      rootExecutionId: parent?.rootExecutionId ?? null,
      deferred: [],
      createdAt: this.now,
      updatedAt: null,
    };
    this.executions.set(execution.id, { execution, tasks: [], actions: [], subs: [], items: new Map() });
    this.queue.push({ executionId: execution.id, event: { type: 'start' } });
    return execution.id;
  }

  /** Everything about the execution, every with-items row included. */
  snapshot(executionId: string): ExecutionSnapshot {
    const s = this.executions.get(executionId)!;
    const items = [...s.items.keys()].map((taskExecutionId) =>
      this.loadItems(executionId, { taskExecutionId, from: 0, count: 'all' }, false),
    );
    return {
      execution: s.execution,
      tasks: s.tasks,
      actions: s.actions,
      subExecutions: s.subs,
      ...(items.length ? { items } : {}),
    };
  }

  /** The rows an {@link ItemsRequest} asks for, as the store loads them. */
  loadItems(executionId: string, r: ItemsRequest, counted = true): LoadedItems {
    const rows = [...(this.executions.get(executionId)!.items.get(r.taskExecutionId)?.values() ?? [])].sort(
      (a, b) => a.index - b.index,
    );
    const picked =
      r.count === 'all' ? rows : rows.filter((x) => x.index >= r.from && x.state === null).slice(0, r.count);
    if (counted) this.itemRowsLoaded += picked.length;
    return { ...r, rows: picked.map((x) => ({ ...x })) };
  }

  /** Item rows read by partial snapshots' loads so far (what the store would read). */
  itemRowsLoaded = 0;

  /**
   * `decideBatch` over a snapshot without item rows, loading the rows it asks for ({@link ItemsNeeded})
   * and deciding again, as the engine does.
   */
  decideLoading(executionId: string, snapshot: ExecutionSnapshot, events: readonly EngineEvent[]): Decision {
    let current = snapshot;
    for (let attempt = 0; ; attempt++) {
      try {
        const options = { itemsPerDecision: this.itemsPerDecision };
        return events.length === 1
          ? decide(current, events[0]!, this.now, this.newId, options)
          : decideBatch(current, events, this.now, this.newId, options);
      } catch (e) {
        if (!(e instanceof ItemsNeeded) || attempt >= 5) throw e;
        const asked = new Set(e.requests.map((r) => r.taskExecutionId));
        current = {
          ...current,
          items: [
            ...(current.items ?? []).filter((l) => !asked.has(l.taskExecutionId)),
            ...e.requests.map((r) => this.loadItems(executionId, r)),
          ],
        };
      }
    }
  }

  /** The snapshot `decide` gets for `event` (see {@link partialSnapshots}). */
  snapshotFor(executionId: string, event: EngineEvent | readonly EngineEvent[]): ExecutionSnapshot {
    const full = this.snapshot(executionId);
    if (!this.partialSnapshots) return full;
    const named = new Set(
      (Array.isArray(event) ? event : [event]).flatMap((e: EngineEvent) =>
        'actionExecutionId' in e ? [e.actionExecutionId] : [],
      ),
    );
    const position = new Map<string, number>();
    const perTask = new Map<string, number>();
    for (const a of full.actions) {
      const n = perTask.get(a.taskExecutionId) ?? 0;
      position.set(a.id, n);
      perTask.set(a.taskExecutionId, n + 1);
    }
    const succeeded = new Set(full.tasks.filter((t) => t.state === 'SUCCESS').map((t) => t.id));
    const actions = full.actions
      .filter(
        (a) =>
          a.state === 'ERROR' ||
          (a.itemIndex === null
            ? !(a.state === 'SUCCESS' && succeeded.has(a.taskExecutionId))
            : named.has(a.id)),
      )
      .map((a) => ({ ...a, ordinal: position.get(a.id) ?? 0 }));
    return { execution: full.execution, tasks: full.tasks, actions, subExecutions: full.subExecutions };
  }

  /** Feeds one event to `decide` and applies the decision. */
  send(executionId: string, event: EngineEvent): Decision {
    const snapshot = this.snapshotFor(executionId, event);
    const d = this.decideLoading(executionId, snapshot, [event]);
    this.history.push(...historyEvents(snapshot, d.changes));
    this.apply(executionId, d);
    return d;
  }

  /** Feeds several events of one execution to `decideBatch` as one decision (one engine transaction) and applies it. */
  sendBatch(executionId: string, events: readonly EngineEvent[]): Decision {
    const snapshot = this.snapshotFor(executionId, events);
    const d = this.decideLoading(executionId, snapshot, events);
    this.history.push(...historyEvents(snapshot, d.changes));
    this.apply(executionId, d);
    return d;
  }

  /** Runs queued events (and the actions they start) until nothing is left; timers stay pending. */
  run(maxSteps = 10_000): void {
    for (let i = 0; i < maxSteps; i++) {
      const next = this.queue.shift();
      if (!next) return;
      this.send(next.executionId, next.event);
    }
    throw new Error('simulation did not settle');
  }

  /** Fires every pending timer (in due order) and runs to quiescence, repeatedly. */
  runWithTimers(maxRounds = 100): void {
    this.run();
    for (let r = 0; r < maxRounds && this.timers.length; r++) {
      this.timers.sort((a, b) => a.delayMs - b.delayMs);
      const t = this.timers.shift()!;
      this.now = new Date(this.now.getTime() + t.delayMs);
      this.queue.push({
        executionId: t.executionId,
        event: { type: 'timer-fired', taskExecutionId: t.taskExecutionId, timerId: t.timerId, kind: t.kind },
      });
      this.run();
    }
  }

  private apply(executionId: string, d: Decision): void {
    const s = this.executions.get(executionId)!;
    if (d.changes.execution) s.execution = d.changes.execution;
    for (const t of d.changes.tasksCreated) s.tasks.push(t);
    for (const t of d.changes.tasksUpdated) s.tasks[s.tasks.findIndex((x) => x.id === t.id)] = t;
    for (const u of d.changes.actionsUnaccepted ?? []) {
      s.actions = s.actions.map((a) =>
        a.taskExecutionId === u.taskExecutionId && a.accepted && (!u.states || u.states.includes(a.state))
          ? { ...a, accepted: false }
          : a,
      );
    }
    for (const id of d.changes.itemsDeleted ?? []) s.items.delete(id);
    for (const r of d.changes.itemsCreated ?? []) {
      let rows = s.items.get(r.taskExecutionId);
      if (!rows) s.items.set(r.taskExecutionId, (rows = new Map()));
      rows.set(r.index, { ...r });
    }
    for (const u of d.changes.itemsUpdated ?? []) {
      const row = s.items.get(u.taskExecutionId)?.get(u.index);
      if (!row) throw new Error(`update of a missing item row ${u.taskExecutionId}[${u.index}]`);
      s.items.get(u.taskExecutionId)!.set(u.index, { ...row, state: u.state, result: u.result });
    }
    for (const a of d.changes.actionsCreated) s.actions.push(stripOrdinal(a));
    for (const a of d.changes.actionsUpdated)
      s.actions[s.actions.findIndex((x) => x.id === a.id)] = stripOrdinal(a);
    for (const e of d.commands) {
      this.effects.push(e);
      switch (e.type) {
        case 'run-action': {
          const r = this.script(e.actionName, e.input);
          if (r === 'async')
            this.asyncActions.push({
              executionId,
              taskExecutionId: e.taskExecutionId,
              actionExecutionId: e.actionExecutionId,
            });
          else
            this.queue.push({
              executionId,
              event: {
                type: 'action-completed',
                taskExecutionId: e.taskExecutionId,
                actionExecutionId: e.actionExecutionId,
                ...r,
              },
            });
          break;
        }
        case 'start-sub-workflow': {
          const spec = this.catalog[e.workflowName];
          if (!spec) {
            this.queue.push({
              executionId,
              event: {
                type: 'sub-workflow-start-failed',
                taskExecutionId: e.taskExecutionId,
                message: `Failed to find workflow [name=${e.workflowName}] [namespace=]`,
              },
            });
            break;
          }
          const declared = new Set(spec.input.map((p) => p.name));
          const input: JsonMap = {};
          const params: JsonMap = { ...e.params };
          for (const [k, v] of Object.entries(e.input)) (declared.has(k) ? input : params)[k] = v;
          s.subs.push({ id: e.subExecutionId, taskExecutionId: e.taskExecutionId, state: 'RUNNING' });
          this.create(
            e.workflowName,
            input,
            params,
            { taskExecutionId: e.taskExecutionId, rootExecutionId: e.rootExecutionId },
            e.subExecutionId,
          );
          break;
        }
        case 'notify-parent': {
          for (const [pid, p] of this.executions) {
            if (p.tasks.some((t) => t.id === e.taskExecutionId)) {
              const ref = p.subs.find((x) => x.id === e.subExecutionId);
              if (ref) p.subs[p.subs.indexOf(ref)] = { ...ref, state: e.state };
              this.queue.push({
                executionId: pid,
                event: {
                  type: 'sub-workflow-completed',
                  taskExecutionId: e.taskExecutionId,
                  subExecutionId: e.subExecutionId,
                  state: e.state,
                  output: e.output,
                  stateInfo: e.stateInfo,
                },
              });
            }
          }
          break;
        }
        case 'notify-parent-rerun': {
          for (const [pid, p] of this.executions) {
            if (p.tasks.some((t) => t.id === e.taskExecutionId)) {
              const ref = p.subs.find((x) => x.id === e.subExecutionId);
              if (ref) p.subs[p.subs.indexOf(ref)] = { ...ref, state: 'RUNNING' };
              this.queue.push({
                executionId: pid,
                event: {
                  type: 'sub-workflow-rerun',
                  taskExecutionId: e.taskExecutionId,
                  subExecutionId: e.subExecutionId,
                },
              });
            }
          }
          break;
        }
        case 'control-sub-execution':
          this.queue.push({
            executionId: e.subExecutionId,
            event:
              e.command === 'cancel' ? { type: 'cancel', message: e.message ?? null } : { type: e.command },
          });
          break;
        case 'control-parent-execution':
          for (const [pid, p] of this.executions) {
            if (p.tasks.some((t) => t.id === e.taskExecutionId)) {
              this.queue.push({
                executionId: pid,
                event: {
                  type: 'action-state-changed',
                  taskExecutionId: e.taskExecutionId,
                  actionExecutionId: e.subExecutionId,
                  state: e.command === 'pause' ? 'PAUSED' : 'RUNNING',
                },
              });
            }
          }
          break;
        case 'arm-timer':
          this.timers.push({
            executionId,
            taskExecutionId: e.taskExecutionId,
            timerId: e.timerId,
            kind: e.kind,
            delayMs: e.delayMs,
          });
          break;
        case 'start-items':
          this.queue.push({
            executionId,
            event: { type: 'start-items', taskExecutionId: e.taskExecutionId },
          });
          break;
        case 'notify':
          break;
      }
    }
  }

  execution(id: string): WorkflowExecution {
    return this.executions.get(id)!.execution;
  }

  tasksOf(id: string): TaskExecution[] {
    return this.executions.get(id)!.tasks;
  }

  actionsOf(id: string): ActionExecution[] {
    return this.executions.get(id)!.actions;
  }

  /** The with-items rows of a task, in index order. */
  itemsOf(id: string, taskExecutionId: string): TaskItem[] {
    return [...(this.executions.get(id)!.items.get(taskExecutionId)?.values() ?? [])].sort(
      (a, b) => a.index - b.index,
    );
  }

  /** `name → state` of the latest execution of each task. */
  taskStates(id: string): Record<string, string> {
    return Object.fromEntries(this.tasksOf(id).map((t) => [t.name, t.state]));
  }

  isDone(id: string): boolean {
    return isCompleted(this.execution(id).state);
  }
}

/** The ordinal is derived on load, never stored. */
const stripOrdinal = ({ ordinal: _ordinal, ...a }: ActionExecution): ActionExecution => a;
