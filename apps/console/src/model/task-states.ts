import type { ExecutionEvent, TaskExecution } from '../api/mistral';
import { parseMistralTime } from '../api/mistral';
import type { TaskGraph } from './task-graph';

/** What the console shows for one task of the definition. Pure. */
export interface TaskStatus {
  readonly name: string;
  /** The task's state, or `NOT STARTED` when the execution has not reached it. */
  readonly state: string;
  /** The latest task execution of that name (loops may run a task several times). */
  readonly latest: TaskExecution | null;
  readonly runs: number;
  readonly withItems: { readonly done: number; readonly total: number } | null;
  readonly retryNo: number;
  readonly startedAt: number | null;
  readonly finishedAt: number | null;
}

export const NOT_STARTED = 'NOT STARTED';

/** The latest with-items progress and retry number the history reported, per task execution. */
export interface TaskProgress {
  readonly withItems?: { done: number; total: number };
  readonly retryNo?: number;
}

/** Folds history entries into per-task-execution progress (later entries win). */
export function progressOf(events: readonly ExecutionEvent[]): Map<string, TaskProgress> {
  const out = new Map<string, TaskProgress>();
  for (const e of events) {
    if (e.subject !== 'task' || !e.task_execution_id) continue;
    const prev = out.get(e.task_execution_id) ?? {};
    out.set(e.task_execution_id, {
      withItems: e.details.withItems ?? prev.withItems,
      retryNo: e.details.retryNo ?? prev.retryNo,
    });
  }
  return out;
}

const parseContext = (raw: string | undefined): Record<string, unknown> => {
  try {
    const v: unknown = JSON.parse(raw ?? '{}');
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/**
 * One status per task of the graph (in definition order), then tasks that ran but are not in the
 * graph (none for a well-formed definition). With-items totals fall back on the task's public
 * `runtime_context.with_items.count`; retries on `runtime_context.retry_task_policy.retry_no`.
 */
export function taskStatuses(
  graph: TaskGraph,
  tasks: readonly TaskExecution[],
  progress: ReadonlyMap<string, TaskProgress>,
): TaskStatus[] {
  const byName = new Map<string, TaskExecution[]>();
  for (const t of tasks) byName.set(t.name, [...(byName.get(t.name) ?? []), t]);
  const names = [
    ...graph.tasks.map((t) => t.name),
    ...[...byName.keys()].filter((n) => !graph.tasks.some((t) => t.name === n)),
  ];
  return names.map((name) => {
    const runs = [...(byName.get(name) ?? [])].sort(
      (a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id),
    );
    const latest = runs[runs.length - 1] ?? null;
    if (!latest)
      return {
        name,
        state: NOT_STARTED,
        latest: null,
        runs: 0,
        withItems: null,
        retryNo: 0,
        startedAt: null,
        finishedAt: null,
      };
    const ctx = parseContext(latest.runtime_context);
    const p = progress.get(latest.id);
    const wiCtx = ctx['with_items'] as { count?: unknown } | undefined;
    const total = p?.withItems?.total ?? (typeof wiCtx?.count === 'number' ? wiCtx.count : null);
    const done = p?.withItems?.done ?? (latest.state === 'SUCCESS' && total !== null ? total : 0);
    const retryCtx = ctx['retry_task_policy'] as { retry_no?: unknown } | undefined;
    return {
      name,
      state: latest.state,
      latest,
      runs: runs.length,
      withItems: total === null ? null : { done, total },
      retryNo: p?.retryNo ?? (typeof retryCtx?.retry_no === 'number' ? retryCtx.retry_no : 0),
      startedAt: parseMistralTime(latest.started_at ?? latest.created_at),
      finishedAt: parseMistralTime(latest.finished_at),
    };
  });
}
