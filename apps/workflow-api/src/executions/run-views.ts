import {
  type ActionExecution,
  type TaskExecution,
  type WorkflowExecution,
  executionPublishedGlobal,
  formatTimestamp,
  publicRuntimeContext,
  pyJsonDumps,
} from '@osc/workflow-domain';
import { toActionExecution, toTaskExecution, toWorkflowExecution } from '@osc/workflow-persistence';
import type { RunListSpec } from './run-list';

/** JSON-typed fields travel as JSON strings, rendered as Python's json.dumps would (workflow-api.md §3). */
const js = (v: unknown): string => pyJsonDumps(v ?? null);

export const EXECUTION_FIELDS = [
  'id',
  'workflow_id',
  'workflow_name',
  'workflow_namespace',
  'description',
  'tags',
  'params',
  'task_execution_id',
  'root_execution_id',
  'state',
  'state_info',
  'input',
  'output',
  'created_at',
  'updated_at',
  'project_id',
  'published_global',
  'source_execution_id',
] as const;

export const EXECUTION_LIST: RunListSpec = {
  collection: 'executions',
  table: 'workflow_executions',
  model: 'WorkflowExecution',
  fields: EXECUTION_FIELDS.filter((f) => f !== 'published_global' && f !== 'source_execution_id'),
  columns: {
    id: { column: 'id', kind: 'uuid' },
    workflow_name: { column: 'workflow_name', kind: 'text' },
    workflow_id: { column: 'workflow_id', kind: 'text' },
    workflow_namespace: { column: 'workflow_namespace', kind: 'text' },
    description: { column: 'description', kind: 'text' },
    tags: { column: 'tags', kind: 'tags' },
    params: { column: 'params', kind: 'json' },
    task_execution_id: { column: 'task_execution_id', kind: 'uuid', nullable: true },
    root_execution_id: { column: 'root_execution_id', kind: 'uuid', nullable: true },
    state: { column: 'state', kind: 'state' },
    state_info: { column: 'state_info', kind: 'text', nullable: true },
    input: { column: 'input', kind: 'json' },
    output: { column: 'output', kind: 'json' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: ['include_output', 'nulls'],
  adminFilters: true,
  projectFilterNeedsAllProjects: true,
  policy: 'executions',
};

/** Public keys of a task's runtime context (engine bookkeeping stays internal). */
export const TASK_FIELDS = [
  'id',
  'name',
  'type',
  'workflow_name',
  'workflow_namespace',
  'workflow_id',
  'workflow_execution_id',
  'tags',
  'state',
  'state_info',
  'project_id',
  'runtime_context',
  'result',
  'published',
  'published_global',
  'processed',
  'created_at',
  'updated_at',
  'started_at',
  'finished_at',
] as const;

export const TASK_LIST: RunListSpec = {
  collection: 'tasks',
  table: 'task_executions',
  model: 'TaskExecution',
  fields: TASK_FIELDS.filter((f) => f !== 'result' && f !== 'published_global'),
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    type: { column: 'type', kind: 'text' },
    workflow_name: { column: 'workflow_name', kind: 'text' },
    workflow_namespace: { column: 'workflow_namespace', kind: 'text' },
    workflow_id: { column: 'workflow_id', kind: 'text' },
    workflow_execution_id: { column: 'workflow_execution_id', kind: 'uuid' },
    tags: { column: 'tags', kind: 'tags' },
    state: { column: 'state', kind: 'state' },
    state_info: { column: 'state_info', kind: 'text', nullable: true },
    result: { column: 'result', kind: 'json', nullable: true },
    published: { column: 'published', kind: 'json' },
    processed: { column: 'processed', kind: 'bool' },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
    started_at: { column: 'started_at', kind: 'timestamp', nullable: true },
    finished_at: { column: 'finished_at', kind: 'timestamp', nullable: true },
  },
  extraParams: ['env', 'reset'],
  adminFilters: false,
  policy: 'tasks',
};

export const ACTION_EXECUTION_FIELDS = [
  'id',
  'workflow_name',
  'workflow_namespace',
  'task_name',
  'task_execution_id',
  'state',
  'state_info',
  'tags',
  'name',
  'description',
  'project_id',
  'accepted',
  'input',
  'output',
  'created_at',
  'updated_at',
  'params',
] as const;

export const ACTION_EXECUTION_LIST: RunListSpec = {
  collection: 'action_executions',
  table: 'action_executions',
  model: 'ActionExecution',
  fields: [...ACTION_EXECUTION_FIELDS],
  columns: {
    id: { column: 'id', kind: 'uuid' },
    name: { column: 'name', kind: 'text' },
    workflow_name: { column: 'workflow_name', kind: 'text', nullable: true },
    workflow_namespace: { column: 'workflow_namespace', kind: 'text' },
    task_name: { column: 'task_name', kind: 'text', nullable: true },
    task_execution_id: { column: 'task_execution_id', kind: 'uuid', nullable: true },
    // a filter only (not a field of the view): every action execution of one workflow execution
    workflow_execution_id: { column: 'workflow_execution_id', kind: 'uuid', nullable: true },
    state: { column: 'state', kind: 'state' },
    state_info: { column: 'state_info', kind: 'text', nullable: true },
    tags: { column: 'tags', kind: 'tags' },
    description: { column: 'description', kind: 'text' },
    accepted: { column: 'accepted', kind: 'bool' },
    input: { column: 'input', kind: 'json' },
    output: { column: 'output', kind: 'json', nullable: true },
    created_at: { column: 'created_at', kind: 'timestamp' },
    updated_at: { column: 'updated_at', kind: 'timestamp', nullable: true },
  },
  extraParams: ['include_output'],
  adminFilters: false,
  policy: 'action_executions',
};

export type Row = Record<string, unknown>;

/**
 * The columns the list views read (`executionView`, `taskView` without detail, `actionExecutionView`),
 * so list pages leave the large ones in the table: an execution's `spec` and `context`, a task's
 * `in_context`, `result` and `published_global`, an unrequested `output`. Decoding those jsonb
 * values was most of a page's server CPU.
 */
/** A field list without the named entries, keeping its order. */
function without<F extends string>(fields: readonly F[], ...dropped: F[]): readonly F[] {
  return fields.filter((f) => !dropped.includes(f));
}

export const EXECUTION_LIST_COLUMNS: readonly string[] = without(
  EXECUTION_FIELDS,
  'output',
  'published_global',
  'source_execution_id',
);
export const TASK_LIST_COLUMNS: readonly string[] = without(TASK_FIELDS, 'result', 'published_global');
/** Plus two internal columns: `workflow_execution_id` and `item_index` (read by `toActionExecution`). */
export const ACTION_EXECUTION_LIST_COLUMNS: readonly string[] = [
  ...without(ACTION_EXECUTION_FIELDS, 'output'),
  'workflow_execution_id',
  'item_index',
];

/** An execution on the wire; `detail` adds what only GET of one execution shows. */
export function executionView(row: Row, opts: { detail: boolean; includeOutput: boolean }): Row {
  const ex: WorkflowExecution = toWorkflowExecution(row);
  const view: Row = {
    id: ex.id,
    workflow_id: ex.workflowId,
    workflow_name: ex.workflowName,
    workflow_namespace: ex.workflowNamespace,
    description: ex.description,
    tags: ex.tags,
    params: js(ex.params),
    task_execution_id: ex.taskExecutionId,
    root_execution_id: ex.rootExecutionId,
    state: ex.state,
    state_info: ex.stateInfo,
    input: js(ex.input),
    ...(opts.includeOutput ? { output: js(ex.output) } : {}),
    created_at: formatTimestamp(ex.createdAt),
    updated_at: formatTimestamp(ex.updatedAt),
    project_id: ex.projectId,
  };
  if (opts.detail) {
    view['published_global'] = js(executionPublishedGlobal(ex));
    view['source_execution_id'] = (row['source_execution_id'] as string | null) ?? null;
  }
  return view;
}

/** A task on the wire; `detail` adds `result` and `published_global` (GET of one task). */
export function taskView(row: Row, opts: { detail: boolean }): Row {
  const t: TaskExecution = toTaskExecution(row);
  const runtime = publicRuntimeContext(t.runtimeContext);
  const view: Row = {
    id: t.id,
    name: t.name,
    type: t.type,
    workflow_name: row['workflow_name'],
    workflow_namespace: row['workflow_namespace'],
    workflow_id: row['workflow_id'],
    workflow_execution_id: t.executionId,
    tags: t.tags,
    state: t.state,
    state_info: t.stateInfo,
    project_id: row['project_id'],
    runtime_context: js(runtime),
    ...(opts.detail ? { result: js(t.result) } : {}),
    published: js(t.published),
    ...(opts.detail ? { published_global: js(t.publishedGlobal) } : {}),
    processed: t.processed,
    created_at: formatTimestamp(t.createdAt),
    updated_at: formatTimestamp(t.updatedAt),
    started_at: formatTimestamp(t.startedAt),
    finished_at: formatTimestamp(t.finishedAt),
  };
  return view;
}

/** An action execution on the wire; `output` only when asked for (GET of one, or include_output). */
export function actionExecutionView(row: Row, opts: { includeOutput: boolean }): Row {
  const a: ActionExecution = toActionExecution(row);
  return {
    id: a.id,
    workflow_name: row['workflow_name'] ?? null,
    workflow_namespace: row['workflow_namespace'] ?? '',
    task_name: row['task_name'] ?? null,
    // null for a standalone execution (POST /v2/action_executions)
    task_execution_id: (row['task_execution_id'] as string | null) ?? null,
    state: a.state,
    state_info: a.stateInfo,
    tags: (row['tags'] as string[] | null) ?? [],
    name: a.name,
    description: row['description'] ?? '',
    project_id: row['project_id'],
    accepted: a.accepted,
    input: js(a.input),
    ...(opts.includeOutput ? { output: js(a.output ?? {}) } : {}),
    created_at: formatTimestamp(a.createdAt),
    updated_at: formatTimestamp(a.updatedAt),
    params: js(row['params'] ?? {}),
  };
}
