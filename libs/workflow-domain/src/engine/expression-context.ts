import {
  type ExecutionsFilter,
  type ExpressionHost,
  type PreparedContext,
  type TasksFilter,
  evaluate,
} from '@osc/expressions';
import type { ActionExecution, ExpressionWorld, JsonMap, TaskExecution, WorkflowExecution } from './model';

/**
 * `YYYY-MM-DD HH:MM:SS` (UTC), the timestamp form of expression maps, the API (DSL-9.6) and
 * notification payloads (Mistral's `datetime_to_str`); null stays null. An ISO string (a row or an
 * API view read back) is parsed first; one that does not parse is returned as it is.
 */
export function formatTimestamp(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') {
    const parsed = new Date(value);
    return Number.isNaN(parsed.getTime()) ? value : formatTimestamp(parsed);
  }
  return value.toISOString().slice(0, 19).replace('T', ' ');
}

/** Python truthiness (false for null, false, 0, "", [], {}). */
export const isTruthy = (v: unknown): boolean => {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
};

/** The task's view for `task()`/`tasks()` (DSL-9.6). */
export const taskView = (t: TaskExecution, specOf: (name: string) => unknown): JsonMap => ({
  id: t.id,
  name: t.name,
  spec: specOf(t.name) ?? null,
  state: t.state,
  state_info: t.stateInfo,
  result: t.result ?? null,
  published: t.published,
  type: t.type,
  workflow_execution_id: t.executionId,
  created_at: formatTimestamp(t.createdAt),
  updated_at: formatTimestamp(t.updatedAt),
});

/** What the engine state offers the expression host. */
export interface HostSource {
  execution: WorkflowExecution;
  /** Task executions in creation order. */
  tasks: () => readonly TaskExecution[];
  actions: () => readonly ActionExecution[];
  now: Date;
  newId: () => string;
  /** Other executions of the project and their tasks; without it `tasks()`/`executions()` see this execution only. */
  world?: ExpressionWorld;
}

/** `execution()` (DSL-9.6). */
const executionView = (ex: WorkflowExecution): JsonMap => ({
  id: ex.id,
  name: ex.workflowName,
  spec: ex.spec,
  input: ex.input,
  state: ex.state,
  params: ex.params,
  created_at: formatTimestamp(ex.createdAt),
  updated_at: formatTimestamp(ex.updatedAt),
  root_execution_id: ex.rootExecutionId,
});

/** An element of `executions()`: the `execution()` map plus the fields of the execution row. */
const executionListView = (ex: WorkflowExecution): JsonMap => ({
  ...executionView(ex),
  workflow_id: ex.workflowId,
  workflow_name: ex.workflowName,
  workflow_namespace: ex.workflowNamespace,
  description: ex.description,
  state_info: ex.stateInfo,
  output: ex.output,
  task_execution_id: ex.taskExecutionId,
  project_id: ex.projectId,
});

/** `YYYY-MM-DD HH:MM:SS[.ffffff]` (UTC unless a zone is given) or ISO text as a time; null when unreadable. */
const parseTime = (v: unknown): number | null => {
  if (v instanceof Date) return v.getTime();
  if (typeof v !== 'string') return null;
  const text = v.trim().replace(' ', 'T');
  const t = Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(t) ? null : t;
};

/**
 * The executions and tasks the query functions see: the world's, with this execution and its tasks
 * replaced by the live state of the decision being made.
 */
const queryView = (src: HostSource) => {
  const ex = src.execution;
  const executions = src.world ? src.world.executions.map((e) => (e.id === ex.id ? ex : e)) : [ex];
  if (!executions.some((e) => e.id === ex.id)) executions.push(ex);
  const others = src.world ? src.world.tasks.filter((t) => t.executionId !== ex.id) : [];
  const tasks = [...others, ...src.tasks()].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  return { executions, tasks };
};

/**
 * `tasks(workflow_execution_id, recursive, state, flat)` as the reference computes it: the tasks of one
 * execution (or of every visible execution without an id), filtered by state and by `flat` (action tasks,
 * and workflow tasks whose state differs from each of their sub-executions'); with `recursive` and an
 * id, the matching tasks of the sub-executions follow, depth first.
 */
const queryTasks = (src: HostSource, filter: TasksFilter): JsonMap[] => {
  const { executions, tasks } = queryView(src);
  const byId = new Map(executions.map((e) => [e.id, e]));
  const subsOf = (taskId: string) => executions.filter((e) => e.taskExecutionId === taskId);
  const keep = (t: TaskExecution) =>
    (!filter.state || t.state === filter.state) &&
    (!filter.flat || t.type === 'ACTION' || subsOf(t.id).every((s) => s.state !== t.state));
  const collect = (executionId: string | null): TaskExecution[] => {
    const own = executionId ? tasks.filter((t) => t.executionId === executionId) : tasks;
    const out = own.filter(keep);
    if (filter.recursive && executionId) {
      for (const t of own)
        if (t.type === 'WORKFLOW') for (const sub of subsOf(t.id)) out.push(...collect(sub.id));
    }
    return out;
  };
  const specOf = (t: TaskExecution) => (name: string) =>
    byId.get(t.executionId)?.spec.tasks.find((s) => s.name === name);
  const id = filter.workflowExecutionId ? String(filter.workflowExecutionId) : null;
  // without a world only this execution is visible, whatever the filter asks
  const visible = src.world || id === null || id === src.execution.id ? collect(id) : [];
  return visible.map((t) => taskView(t, specOf(t)));
};

/** `executions(id, root_execution_id, state, from_time, to_time)`: every given filter must hold. */
const queryExecutions = (src: HostSource, filter: ExecutionsFilter): JsonMap[] => {
  const from = filter.fromTime === undefined || filter.fromTime === null ? null : parseTime(filter.fromTime);
  const to = filter.toTime === undefined || filter.toTime === null ? null : parseTime(filter.toTime);
  return queryView(src)
    .executions.filter(
      (e) =>
        (filter.id === undefined || filter.id === null || e.id === filter.id) &&
        (filter.rootExecutionId === undefined ||
          filter.rootExecutionId === null ||
          e.rootExecutionId === filter.rootExecutionId) &&
        (filter.state === undefined || filter.state === null || e.state === filter.state) &&
        (from === null || e.createdAt.getTime() >= from) &&
        (to === null || e.createdAt.getTime() < to),
    )
    .map(executionListView);
};

/**
 * Builds the expression host for one evaluation (DSL-9.6). `tasks()` and `executions()` query the
 * source's world (other executions of the project) when it has one, else this execution alone.
 */
export const buildHost = (src: HostSource, current?: TaskExecution): ExpressionHost => {
  const ex = src.execution;
  const specOf = (name: string) => ex.spec.tasks.find((t) => t.name === name);
  const env = (ex.params['env'] as JsonMap | undefined) ?? {};
  return {
    task(name?: string) {
      if (current && (name === undefined || name === null || name === current.name))
        return taskView(current, specOf);
      if (name === undefined || name === null) return null;
      const all = src.tasks().filter((t) => t.name === name);
      const last = all[all.length - 1];
      return last ? taskView(last, specOf) : null;
    },
    tasks: (filter: TasksFilter) => queryTasks(src, filter),
    execution: () => executionView(ex),
    executions: (filter: ExecutionsFilter) => queryExecutions(src, filter),
    env: () => env,
    global: (name: string) => (name in ex.context ? ex.context[name] : null),
    uuid: () => src.newId(),
    now: () => src.now,
  };
};

const QUERY_CALL = /\b(?:tasks|executions)\s*\(/;
const queryUse = new WeakMap<object, boolean>();

/** Whether any expression of the spec may call `tasks()` or `executions()` (then the engine loads a world). */
export const usesQueryFunctions = (spec: object): boolean => {
  let uses = queryUse.get(spec);
  if (uses === undefined) {
    uses = QUERY_CALL.test(JSON.stringify(spec));
    queryUse.set(spec, uses);
  }
  return uses;
};

/**
 * Evaluates `value` (any JSON with expression strings) against `data` with `host`; `data` converted
 * once (`prepareContext`) skips the conversion, which costs the data's size.
 */
export const evaluateWith = (
  value: unknown,
  data: JsonMap | PreparedContext,
  host: ExpressionHost,
): unknown => evaluate(value, data, host);
