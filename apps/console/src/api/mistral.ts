import { getJson, request } from './http';

/** Mistral v2 wire types, as much of them as the console reads. JSON-typed fields are JSON strings. */
export interface Workflow {
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly definition?: string;
  readonly input: string;
  readonly tags: string[];
  readonly scope: string;
  readonly created_at: string;
  readonly updated_at: string | null;
}

export const EXECUTION_STATES = ['IDLE', 'RUNNING', 'PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export const isTerminal = (state: string): boolean =>
  state === 'SUCCESS' || state === 'ERROR' || state === 'CANCELLED';

export interface Execution {
  readonly id: string;
  readonly workflow_id: string;
  readonly workflow_name: string;
  readonly description: string;
  readonly tags: string[] | null;
  readonly state: string;
  readonly state_info: string | null;
  readonly input: string;
  readonly output?: string;
  readonly params: string;
  readonly task_execution_id: string | null;
  readonly root_execution_id: string | null;
  readonly created_at: string;
  readonly updated_at: string | null;
}

export interface TaskExecution {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly workflow_execution_id: string;
  readonly state: string;
  readonly state_info: string | null;
  readonly runtime_context: string;
  readonly result?: string;
  readonly published: string;
  readonly created_at: string;
  readonly updated_at: string | null;
  readonly started_at: string | null;
  readonly finished_at: string | null;
}

export interface ActionExecution {
  readonly id: string;
  readonly name: string;
  readonly state: string;
  readonly state_info: string | null;
  readonly input: string;
  readonly output?: string;
  readonly created_at: string;
  readonly updated_at: string | null;
}

/** One entry of an execution's history (docs/workflow-events.md). */
export interface ExecutionEvent {
  readonly seq: number;
  readonly root_execution_id: string;
  readonly execution_id: string;
  readonly subject: 'execution' | 'task' | 'action';
  readonly task_execution_id: string | null;
  readonly action_execution_id: string | null;
  readonly name: string;
  readonly state: string;
  readonly previous_state: string | null;
  readonly state_info: string | null;
  readonly details: {
    withItems?: { done: number; total: number };
    retryNo?: number;
    published?: string[];
    itemIndex?: number;
    taskName?: string;
  };
  readonly created_at: string;
}

/** One message of the project stream: an execution's history entry, its project and stream position. */
export interface ExecutionStateChange extends ExecutionEvent {
  readonly subject: 'execution';
  readonly project_id: string;
  readonly position: number;
}

const q = (params: Record<string, string | undefined>): string => {
  const s = new URLSearchParams(
    Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  ).toString();
  return s ? `?${s}` : '';
};

export const listWorkflows = () =>
  getJson<{ workflows: Workflow[] }>('/v2/workflows?limit=1000&sort_keys=name&sort_dirs=asc').then(
    (r) => r.workflows,
  );
export const getWorkflow = (id: string) => getJson<Workflow>(`/v2/workflows/${encodeURIComponent(id)}`);

export interface ExecutionFilters {
  readonly state?: string;
  readonly workflow?: string;
  readonly tags?: string;
  /** ISO instants (from the page's datetime inputs). */
  readonly from?: string;
  readonly to?: string;
}

/** Mistral's filter timestamps: `YYYY-MM-DD HH:MM:SS`, UTC. */
export const mistralTime = (iso: string): string =>
  new Date(iso).toISOString().slice(0, 19).replace('T', ' ');

/** Mistral's timestamps are UTC without a zone; as epoch milliseconds. */
export const parseMistralTime = (t: string | null | undefined): number | null =>
  t ? Date.parse(`${t.replace(' ', 'T')}Z`) : null;

export function listExecutions(f: ExecutionFilters): Promise<Execution[]> {
  // Two bounds on one column need Mistral's single filter per field: the lower bound is sent,
  // the upper one is applied to the page (newest first, 100 at most).
  return getJson<{ executions: Execution[] }>(
    `/v2/executions${q({
      limit: '100',
      sort_keys: 'created_at',
      sort_dirs: 'desc',
      state: f.state ? `eq:${f.state}` : undefined,
      workflow_name: f.workflow ? `has:${f.workflow}` : undefined,
      tags: f.tags,
      created_at: f.from ? `gte:${mistralTime(f.from)}` : f.to ? `lte:${mistralTime(f.to)}` : undefined,
    })}`,
  ).then((r) => {
    const to = f.from && f.to ? Date.parse(f.to) : null;
    return to === null
      ? r.executions
      : r.executions.filter((e) => (parseMistralTime(e.created_at) ?? 0) <= to);
  });
}

export const getExecution = (id: string) => getJson<Execution>(`/v2/executions/${encodeURIComponent(id)}`);
export const startExecution = (workflowId: string, input: Record<string, unknown>) =>
  request<Execution>('POST', '/v2/executions', { workflow_id: workflowId, input: JSON.stringify(input) });
export const setExecutionState = (id: string, state: 'PAUSED' | 'RUNNING' | 'CANCELLED') =>
  request<Execution>('PUT', `/v2/executions/${encodeURIComponent(id)}`, { state });

export const listTasks = (executionId: string) =>
  getJson<{ tasks: TaskExecution[] }>(
    `/v2/executions/${encodeURIComponent(executionId)}/tasks?limit=1000`,
  ).then((r) => r.tasks);
export const getTask = (id: string) => getJson<TaskExecution>(`/v2/tasks/${encodeURIComponent(id)}`);
export const listActionExecutions = (taskId: string) =>
  getJson<{ action_executions: ActionExecution[] }>(
    `/v2/tasks/${encodeURIComponent(taskId)}/action_executions`,
  ).then((r) => r.action_executions);
export const subExecutionsOf = (taskId: string) =>
  getJson<{ executions: Execution[] }>(`/v2/executions${q({ task_execution_id: taskId })}`).then(
    (r) => r.executions,
  );
/** Mistral: a task in ERROR reruns (`RUNNING`, reset) or is skipped (`SKIPPED`). */
export const rerunTask = (id: string) =>
  request<TaskExecution>('PUT', `/v2/tasks/${encodeURIComponent(id)}`, { state: 'RUNNING', reset: true });
export const skipTask = (id: string) =>
  request<TaskExecution>('PUT', `/v2/tasks/${encodeURIComponent(id)}`, { state: 'SKIPPED' });

/** What the expression playground answers (docs/workflow-events.md). */
export type EvaluationOutcome =
  | { readonly result: unknown; readonly task_execution_id: string | null }
  | {
      readonly error: {
        readonly message: string;
        readonly language: string;
        readonly expression: string;
        readonly position: number | null;
      };
      readonly task_execution_id: string | null;
    };

/** Evaluates an expression against an execution's data, as one of its tasks sees it (our extension). */
export const evaluateExpression = (
  executionId: string,
  body: { expression: string; language: 'yaql' | 'jinja'; task_execution_id?: string },
) => request<EvaluationOutcome>('POST', `/v2/executions/${encodeURIComponent(executionId)}/evaluate`, body);
