import { formatTimestamp } from '@osc/workflow-domain';
import type { Row } from './run-views';

/** What `GET /v2/executions/{id}/report` is asked for (workflow-api.md §5). */
export interface ReportFilters {
  errorsOnly: boolean;
  /** Negative: no limit. The root is depth 0; a sub-execution one level deeper than its parent. */
  maxDepth: number;
  statisticsOnly: boolean;
}

export interface ReportStatistics {
  total_tasks_count: number;
  running_tasks_count: number;
  success_tasks_count: number;
  error_tasks_count: number;
  idle_tasks_count: number;
  paused_tasks_count: number;
  estimated_time: number;
}

/** The reads the report makes (the workflow persistence's run-time queries, or fakes in tests). */
export interface ReportReads {
  /** Creation and last update of up to `limit` earliest successful runs of the workflow. */
  successfulRunTimes(workflowId: unknown, limit: number): Promise<Row[]>;
  /** The execution's tasks, in creation order. */
  tasksOf(executionId: unknown): Promise<Row[]>;
  /** The task's action executions, in creation order. */
  actionsOf(taskId: unknown): Promise<Row[]>;
  /** The sub-workflow executions the task started, oldest first. */
  subExecutionsOf(taskId: unknown): Promise<Row[]>;
}

/** How many earlier successful runs of the same workflow the time estimate averages. */
const ESTIMATE_SAMPLE = 20;

const ts = (v: unknown): string | null =>
  formatTimestamp(v === null || v === undefined ? null : new Date(v as string));

const asMap = (v: unknown): Record<string, unknown> => {
  const parsed = typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
  return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
};

const baseEntry = (r: Row, name: unknown): Row => ({
  id: r['id'],
  name,
  created_at: ts(r['created_at']),
  updated_at: ts(r['updated_at']),
  state: r['state'],
  state_info: r['state_info'] ?? null,
});

const count = (stat: ReportStatistics, state: unknown): void => {
  const key = (
    {
      RUNNING: 'running_tasks_count',
      SUCCESS: 'success_tasks_count',
      ERROR: 'error_tasks_count',
      IDLE: 'idle_tasks_count',
      PAUSED: 'paused_tasks_count',
    } as const
  )[state as 'RUNNING'];
  if (!key) return;
  stat[key] += 1;
  stat.total_tasks_count += 1;
};

/**
 * Seconds a RUNNING execution probably still needs: the mean duration of up to 20 earlier successful
 * runs of its workflow minus the time it has run, at least 1; -1 without history; 0 when not running.
 */
async function estimatedTime(reads: ReportReads, root: Row, now: Date): Promise<number> {
  if (root['state'] !== 'RUNNING') return 0;
  const prev = await reads.successfulRunTimes(root['workflow_id'], ESTIMATE_SAMPLE);
  if (prev.length === 0) return -1;
  const secs = (from: unknown, to: unknown) =>
    Math.floor((new Date(to as string).getTime() - new Date(from as string).getTime()) / 1000);
  const average =
    prev.reduce((s, r) => s + secs(r['created_at'], r['updated_at'] ?? r['created_at']), 0) / prev.length;
  const left = average - secs(root['created_at'], now.toISOString());
  return left < 0 ? 1 : Math.round(left);
}

/**
 * The execution report: task statistics over the execution tree and, unless `statisticsOnly`, the
 * tree itself (workflow → tasks → action executions and sub-workflow executions). With `errorsOnly`
 * only tasks in ERROR are kept (and counted); below `maxDepth` a sub-execution is listed without tasks.
 */
export async function buildExecutionReport(
  reads: ReportReads,
  root: Row,
  filters: ReportFilters,
  now: Date,
): Promise<Row> {
  const statistics: ReportStatistics = {
    total_tasks_count: 0,
    running_tasks_count: 0,
    success_tasks_count: 0,
    error_tasks_count: 0,
    idle_tasks_count: 0,
    paused_tasks_count: 0,
    estimated_time: await estimatedTime(reads, root, now),
  };
  const tooDeep = (depth: number) => filters.maxDepth >= 0 && filters.maxDepth < depth;

  const workflowEntry = async (wf: Row, depth: number): Promise<Row | null> => {
    if (filters.statisticsOnly && tooDeep(depth)) return null;
    const entry = baseEntry(wf, wf['workflow_name']);
    if (!filters.statisticsOnly && tooDeep(depth)) return entry;
    const tasks = await reads.tasksOf(wf['id']);
    const entries: Row[] = [];
    for (const t of tasks) {
      if (filters.errorsOnly && t['state'] !== 'ERROR') continue;
      count(statistics, t['state']);
      const taskEntry = baseEntry(t, t['name']);
      const retry = asMap(t['runtime_context'])['retry_task_policy'] as { retry_no?: number } | undefined;
      if (retry) taskEntry['retry_count'] = retry.retry_no ?? 0;
      const actions = t['type'] === 'ACTION' && !filters.statisticsOnly ? await reads.actionsOf(t['id']) : [];
      const children = t['type'] === 'WORKFLOW' ? await reads.subExecutionsOf(t['id']) : [];
      taskEntry['action_executions'] = actions.map((a) => ({
        ...baseEntry(a, a['name']),
        accepted: a['accepted'],
        last_heartbeat: ts(a['claimed_at'] ?? a['created_at']),
      }));
      const subs: Row[] = [];
      for (const c of children) {
        const sub = await workflowEntry(c, depth + 1);
        if (sub) subs.push(sub);
      }
      taskEntry['workflow_executions'] = subs;
      entries.push(taskEntry);
    }
    entry['task_executions'] = entries;
    return entry;
  };

  const tree = await workflowEntry(root, 0);
  return filters.statisticsOnly ? { statistics } : { statistics, root_workflow_execution: tree };
}
