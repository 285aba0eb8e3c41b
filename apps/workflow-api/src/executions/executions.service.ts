import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { ENGINE_COMMAND_QUEUE, type EngineCommandMessage, engineCommand } from '@osc/contracts';
import { ForbiddenError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import { CLOCK, type Clock, DATA_SOURCE, OUTBOX_WRITER } from '@osc/platform';
import {
  EXECUTION_STATES,
  type ExecutionState,
  type WorkflowSpec,
  isCompleted,
  isValidExecutionTransition,
  newExecution,
} from '@osc/workflow-domain';
import {
  type ExecutionSqlRunner,
  deleteExecutionHistory,
  deleteWorkflowExecutionTree,
  findWorkflowExecutionRow,
  findWorkflowForRun,
  insertExecutionReturning,
  listActionsOfTask,
  listSubExecutionsOfTask,
  listSuccessfulRunTimes,
  listTasksOfExecution,
  listWorkflowTasksOfExecution,
  readWorkflowExecutionState,
  resolveNamedEnvironment,
  setWorkflowExecutionDescription,
  setWorkflowExecutionParams,
  toWorkflowExecution,
} from '@osc/workflow-persistence';
import { isCanonicalUuid, isUuid } from '../definitions/list-params';
import { type ReportFilters, buildExecutionReport } from './execution-report';
import { type RunListRequest, runList } from './run-list';
import { EXECUTION_LIST, EXECUTION_LIST_COLUMNS, type Row, executionView } from './run-views';
import { optString } from '../definitions/body-fields';

/** How long a state-changing PUT waits for the engine to apply the change before answering. */
const APPLY_WAIT_MS = 10_000;

const asMap = (field: string, v: unknown): Record<string, unknown> => {
  if (v === undefined || v === null) return {};
  let value = v;
  if (typeof v === 'string') {
    try {
      value = v.trim() === '' ? {} : JSON.parse(v);
    } catch {
      throw new InvalidInputError(`Invalid input for field/attribute ${field}. Value: '${v}'. Invalid JSON`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidInputError(
      `Invalid input for field/attribute ${field}. Value: '${JSON.stringify(v)}'. Value should be a dict`,
    );
  }
  return value as Record<string, unknown>;
};

export const UPDATABLE_STATES = ['RUNNING', 'PAUSED', 'SUCCESS', 'ERROR', 'CANCELLED'] as const;

/** Executions: create (then the engine runs it), read, state changes through engine commands, delete. */
@Injectable()
export class ExecutionsService {
  private readonly logger = new Logger('executions');
  constructor(
    @Inject(DATA_SOURCE) readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** Loads a visible execution row or throws 404. */
  async findRow(
    ctx: RequestContext,
    id: string,
    em: ExecutionSqlRunner = this.db,
    lock = false,
  ): Promise<Row> {
    if (!isCanonicalUuid(id))
      throw new NotFoundError('WorkflowExecution', id, `WorkflowExecution not found [id=${id}]`);
    const row = await findWorkflowExecutionRow(em, id, ctx.isAdmin ? null : ctx.projectId, lock);
    if (!row) throw new NotFoundError('WorkflowExecution', id, `WorkflowExecution not found [id=${id}]`);
    return row;
  }

  /** The execution `id` if the caller may see it (own project, or any for admins), else null. */
  private async findVisibleRow(ctx: RequestContext, id: string): Promise<Row | null> {
    try {
      return await this.findRow(ctx, id);
    } catch (err) {
      if (err instanceof NotFoundError) return null;
      throw err;
    }
  }

  async get(ctx: RequestContext, id: string): Promise<Row> {
    return executionView(await this.findRow(ctx, id), { detail: true, includeOutput: true });
  }

  async list(req: RunListRequest, includeOutput: boolean): Promise<Row[]> {
    const rows = await runList(
      this.db,
      EXECUTION_LIST,
      req,
      includeOutput ? [...EXECUTION_LIST_COLUMNS, 'output'] : EXECUTION_LIST_COLUMNS,
    );
    return rows.map((r) => executionView(r, { detail: false, includeOutput }));
  }

  /** POST /v2/executions (seed: Executions, DSL-13.1). */
  async create(ctx: RequestContext, body: Record<string, unknown>): Promise<Row> {
    let workflowId = optString(body, 'workflow_id');
    let workflowName = optString(body, 'workflow_name');
    let namespace = optString(body, 'workflow_namespace') ?? '';
    let input = asMap('input', body['input']);
    let params = asMap('params', body['params']);
    let description = optString(body, 'description');
    const sourceId = optString(body, 'source_execution_id');
    const requestedId = optString(body, 'id');
    // Mistral stores any string as an id; ids here are UUIDs (the column's type), so others are refused.
    if (requestedId !== undefined && !isUuid(requestedId)) {
      throw new InvalidInputError(
        `Invalid input for field/attribute id. Value: '${requestedId}'. Invalid UUID`,
      );
    }
    if (requestedId !== undefined) {
      // Mistral: an id the caller can already see returns that execution (an idempotent retry).
      // An id of another project's execution is not visible: creation goes on and then fails below.
      const visible = await this.findVisibleRow(ctx, requestedId);
      if (visible) return executionView(visible, { detail: false, includeOutput: true });
    }
    if (sourceId) {
      const src = toWorkflowExecution(await this.findRow(ctx, sourceId));
      workflowId ??= src.workflowId;
      namespace = src.workflowNamespace;
      if (body['input'] === undefined) input = src.input;
      if (body['params'] === undefined) {
        const { env, ...rest } = src.params;
        params = { ...rest, ...(env !== undefined ? { env } : {}) };
      }
      description ??= src.description;
    }
    const identifier = workflowId ?? workflowName;
    if (!identifier) throw new InvalidInputError('Workflow ID or workflow name must be provided.');
    const stored = await findWorkflowForRun(this.db, {
      identifier,
      namespace,
      projectId: ctx.projectId,
      visibility: ctx.isAdmin ? { kind: 'all' } : { kind: 'project', projectId: ctx.projectId },
    });
    if (!stored)
      throw new NotFoundError(
        'Workflow',
        identifier,
        `Workflow not found [workflow_identifier=${identifier}, namespace=${namespace}]`,
      );
    workflowName = stored.name;
    // Mistral: `params.env` may name a stored environment (own or public); its variables are used.
    params = await resolveNamedEnvironment(this.db, ctx.projectId, params);
    const ex = newExecution(
      {
        id: requestedId ?? randomUUID(),
        spec: stored.spec as WorkflowSpec,
        workflowId: stored.id,
        workflowNamespace: stored.namespace,
        projectId: ctx.projectId,
        description: description ?? '',
        input,
        params,
      },
      this.clock.now(),
    );
    const start: OutboxItem = {
      destination: 'bus',
      queue: ENGINE_COMMAND_QUEUE,
      message: engineCommand(`start:${ex.id}`, 'engine.start-execution', { executionId: ex.id }),
    };
    const extras = { sourceExecutionId: sourceId ?? null };
    // Where the writer writes outbox rows, the create is ONE statement (the row, its start command
    // in the outbox, its history entry; see insertExecutionReturning), atomic without a transaction
    // of its own (a BEGIN and a COMMIT less); otherwise (embedded journal) the start command goes
    // through `add`, in the row's transaction.
    let inserted: Row | null;
    if (this.outbox.writesRows) {
      inserted = await insertExecutionReturning(this.db, ex, extras, (bind, when) =>
        this.outbox.insertStatement([start], bind, when),
      );
      if (inserted) this.outbox.added(this.db.manager);
    } else {
      inserted = await this.db.transaction(async (em) => {
        const row = await insertExecutionReturning(em, ex, extras);
        if (row) await this.outbox.add(em, start);
        return row;
      });
    }
    // Mistral's engine, on a duplicate id, reads the execution back through the project-scoped
    // query: the caller's own (a concurrent retry) is returned, another project's is a 404.
    if (!inserted)
      return executionView(await this.findRow(ctx, ex.id), { detail: false, includeOutput: true });
    this.logger.log({
      msg: 'execution started',
      executionId: ex.id,
      workflow: ex.workflowName,
      workflowId: ex.workflowId,
      projectId: ex.projectId,
      state: ex.state,
    });
    // the stored row as the INSERT returned it (no read back): the list view, without the detail fields
    return executionView(inserted, { detail: false, includeOutput: true });
  }

  /** PUT /v2/executions/{id}: state, description or env (workflow-api.md §5 rules and messages). */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<Row> {
    const state = optString(body, 'state');
    const stateInfo = optString(body, 'state_info');
    const description = optString(body, 'description');
    const params = body['params'] === undefined ? undefined : asMap('params', body['params']);
    const env = params?.['env'] === undefined ? undefined : asMap('env', params['env']);
    if (state === undefined && description === undefined && env === undefined) {
      throw new InvalidInputError('The property state, description, or env is not provided for update.');
    }
    if (description !== undefined && state !== undefined) {
      throw new InvalidInputError('The property description must be updated separately from state.');
    }
    const row = toWorkflowExecution(await this.findRow(ctx, id));
    if (row.projectId !== ctx.projectId && !ctx.isAdmin) {
      throw new ForbiddenError(`Can not access WorkflowExecution resource of other projects, ID: ${id}`);
    }
    if (description !== undefined) {
      await setWorkflowExecutionDescription(this.db, id, description, this.clock.now());
    }
    if (env !== undefined && state === undefined) {
      if (row.state === 'RUNNING') {
        throw new InvalidInputError(
          'The property env can only be updated when workflow execution is not running or on resume from pause.',
        );
      }
      await this.db.transaction(async (em) => {
        const locked = toWorkflowExecution(await this.findRow(ctx, id, em, true));
        const merged = { ...locked.params, env: { ...((locked.params['env'] as object) ?? {}), ...env } };
        await setWorkflowExecutionParams(em, id, merged, this.clock.now());
      });
    }
    if (state !== undefined) {
      if (!(UPDATABLE_STATES as readonly string[]).includes(state)) {
        throw new InvalidInputError(
          `Cannot change state to ${state}. Allowed states are: '${UPDATABLE_STATES.join(', ')}`,
        );
      }
      if (env !== undefined && state !== 'RUNNING') {
        throw new InvalidInputError(
          'The property env can only be updated when workflow execution is not running or on resume from pause.',
        );
      }
      const to = state as ExecutionState;
      if (!isValidExecutionTransition(row.state, to)) {
        throw new InvalidInputError(
          `Can't change workflow execution state from ${row.state} to ${to}. [workflow=${row.workflowName}, execution_id=${id}]`,
        );
      }
      if (row.state !== to) {
        const cmdId = `${to.toLowerCase()}:${id}:${randomUUID()}`;
        const cmd: EngineCommandMessage =
          to === 'PAUSED'
            ? engineCommand(cmdId, 'engine.pause-execution', { executionId: id, message: stateInfo ?? null })
            : to === 'RUNNING'
              ? engineCommand(cmdId, 'engine.resume-execution', { executionId: id, ...(env ? { env } : {}) })
              : to === 'CANCELLED'
                ? engineCommand(cmdId, 'engine.cancel-execution', {
                    executionId: id,
                    message: stateInfo ?? null,
                  })
                : engineCommand(cmdId, 'engine.force-execution-state', {
                    executionId: id,
                    state: to === 'SUCCESS' ? 'SUCCESS' : 'ERROR',
                    message: stateInfo ?? null,
                  });
        await this.db.transaction((em) => this.send(em, cmd));
        await this.waitFor(id, (s) => s === to || (to === 'RUNNING' && isCompleted(s)));
        const view = await this.get(ctx, id);
        // Mistral answers a resume with the execution as its engine left it when resuming: RUNNING.
        // Ours is read back after the engine's transaction, and a quick engine may have finished the
        // execution meanwhile; the reply still carries the state the request set, as clients expect.
        if (to === 'RUNNING' && isCompleted(String(view['state']))) view['state'] = 'RUNNING';
        return view;
      }
    }
    return this.get(ctx, id);
  }

  /** DELETE /v2/executions/{id}[?force=true]: with its tasks, actions and sub-executions. */
  async delete(ctx: RequestContext, id: string, force: boolean): Promise<void> {
    await this.db.transaction(async (em) => {
      const row = toWorkflowExecution(await this.findRow(ctx, id, em, true));
      if (row.projectId !== ctx.projectId && !ctx.isAdmin) {
        throw new ForbiddenError(`Can not access WorkflowExecution resource of other projects, ID: ${id}`);
      }
      if (!force && !isCompleted(row.state)) {
        throw new ForbiddenError(
          `Only completed executions can be deleted. Use --force to override this. Execution ${id} is in ${row.state} state`,
        );
      }
      await deleteExecutionHistory(em, [{ id: row.id, rootExecutionId: row.rootExecutionId }]);
      await deleteWorkflowExecutionTree(em, id);
    });
  }

  /**
   * Sub-executions (`/executions/{id}/executions` with the execution itself first, or
   * `/tasks/{id}/executions`), depth first as the reference walks them: an execution is listed with,
   * after it, the sub-executions of its tasks; `errorsOnly` descends only through tasks in ERROR;
   * executions deeper than `maxDepth` (root 0, children of a task one deeper than its execution; for a
   * task the children are at depth 0) are left out, none when negative.
   */
  async subExecutions(
    origin: { execution: Row } | { task: Row },
    filters: { errorsOnly: boolean; maxDepth: number; includeOutput: boolean },
  ): Promise<Row[]> {
    const out: Row[] = [];
    const fromTask = async (task: Row, depth: number): Promise<void> => {
      if (filters.errorsOnly && task['state'] !== 'ERROR') return;
      const children = await listSubExecutionsOfTask(this.db, task['id']);
      for (const c of children) await fromExecution(c, depth);
    };
    const fromExecution = async (ex: Row, depth: number): Promise<void> => {
      if (filters.maxDepth >= 0 && filters.maxDepth < depth) return;
      out.push(executionView(ex, { detail: false, includeOutput: filters.includeOutput }));
      const tasks: Row[] = await listWorkflowTasksOfExecution(this.db, ex['id']);
      for (const t of tasks) await fromTask(t, depth + 1);
    };
    if ('execution' in origin) await fromExecution(origin.execution, 0);
    else await fromTask(origin.task, 0);
    return out;
  }

  /** GET /v2/executions/{id}/report: task statistics and the execution tree. */
  async report(ctx: RequestContext, id: string, filters: ReportFilters): Promise<Row> {
    const root = await this.findRow(ctx, id);
    return buildExecutionReport(
      {
        successfulRunTimes: (workflowId, limit) => listSuccessfulRunTimes(this.db, workflowId, limit),
        tasksOf: (executionId) => listTasksOfExecution(this.db, executionId),
        actionsOf: (taskId) => listActionsOfTask(this.db, taskId),
        subExecutionsOf: (taskId) => listSubExecutionsOfTask(this.db, taskId),
      },
      root,
      filters,
      this.clock.now(),
    );
  }

  async send(em: EntityManager, message: EngineCommandMessage): Promise<void> {
    await this.outbox.add(em, { destination: 'bus', queue: ENGINE_COMMAND_QUEUE, message });
  }

  /** Waits (event-free polling of one indexed row) until the engine applied a requested state change. */
  async waitFor(id: string, done: (state: string) => boolean): Promise<void> {
    const deadline = Date.now() + APPLY_WAIT_MS;
    let delay = 5;
    while (Date.now() < deadline) {
      const state = await readWorkflowExecutionState(this.db, id);
      if (state === undefined || done(state)) return;
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 100);
    }
  }
}

export { EXECUTION_STATES };
