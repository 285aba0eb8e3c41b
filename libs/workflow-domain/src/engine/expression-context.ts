import { type ExpressionHost, type TasksFilter, evaluate } from '@osc/expressions';
import type { ActionExecution, JsonMap, TaskExecution, WorkflowExecution } from './model';

/** `YYYY-MM-DD HH:MM:SS` (UTC), the timestamp form of expression maps and the API (DSL-9.6). */
export const formatTimestamp = (d: Date | null | undefined): string | null =>
  d ? d.toISOString().slice(0, 19).replace('T', ' ') : null;

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
}

/**
 * Builds the expression host for one evaluation (DSL-9.6). `tasks()` and `executions()` only see this
 * execution (the pure engine has no other executions in its snapshot).
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
    tasks(filter: TasksFilter) {
      if (filter.workflowExecutionId && filter.workflowExecutionId !== ex.id) return [];
      return src
        .tasks()
        .filter((t) => !filter.state || t.state === filter.state)
        .map((t) => taskView(t, specOf));
    },
    execution() {
      return {
        id: ex.id,
        name: ex.workflowName,
        spec: ex.spec,
        input: ex.input,
        state: ex.state,
        params: ex.params,
        created_at: formatTimestamp(ex.createdAt),
        updated_at: formatTimestamp(ex.updatedAt),
        root_execution_id: ex.rootExecutionId,
      };
    },
    executions(filter) {
      const view = this.execution!() as JsonMap;
      if (filter.id && filter.id !== ex.id) return [];
      if (filter.state && filter.state !== ex.state) return [];
      return [view];
    },
    env: () => env,
    global: (name: string) => (name in ex.context ? ex.context[name] : null),
    uuid: () => src.newId(),
    now: () => src.now,
  };
};

/** Evaluates `value` (any JSON with expression strings) against `data` with `host`. */
export const evaluateWith = (value: unknown, data: JsonMap, host: ExpressionHost): unknown => evaluate(value, data, host);
