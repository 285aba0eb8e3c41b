import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { AD_HOC_ACTION_CLASS, StandardActionRunner, validateActionInput } from '@osc/actions';
import {
  ACTION_JOB_QUEUE,
  ACTION_RUN_JOB,
  ENGINE_COMMAND_QUEUE,
  type ActionRunJob,
  type EngineCommandMessage,
  engineCommand,
} from '@osc/contracts';
import { ForbiddenError, InvalidInputError, NotFoundError, TransientError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import type { OutboxWriter } from '@osc/messaging';
import { CLOCK, type Clock, DATA_SOURCE, OUTBOX_WRITER } from '@osc/platform';
import { type ActionSpec, findStandardAction, isCompleted } from '@osc/workflow-domain';
import {
  completeStandaloneAction,
  deleteActionExecution,
  findActionExecutionRow,
  findAdHocActionSpec,
  insertStandaloneAction,
  readActionExecutionRow,
  readActionExecutionState,
  setStandaloneActionState,
  sweepTransientActions,
} from '@osc/workflow-persistence';
import { isCanonicalUuid } from '../definitions/list-params';
import { type RunListRequest, type RunListSpec, runList } from '../executions/run-list';
import { ACTION_EXECUTION_LIST_COLUMNS, type Row, actionExecutionView } from '../executions/run-views';
import {
  ACTION_EXECUTION_SETTINGS,
  type ActionExecutionSettings,
  DEFAULT_ACTION_EXECUTION_SETTINGS,
} from './action-execution-settings';
import { type ActionRunRequest, parseActionRunRequest, planActionRun } from './action-run-request';

const APPLY_WAIT_MS = 10_000;
const PUT_STATES = ['SUCCESS', 'ERROR', 'CANCELLED', 'PAUSED', 'RUNNING'];
/** Transient rows older than this were left by an API that stopped while waiting: swept. */
const TRANSIENT_TTL_MS = 3_600_000;

/** What the API needs to know of the action a standalone run names. */
interface ResolvedAction {
  readonly className: string;
  readonly params: ActionSpec['input'];
  readonly async: boolean;
}

/**
 * Action executions: read, run one outside any workflow (`POST`), delete a standalone one, and
 * completion of asynchronous actions (std.async_noop, std.mistral_http).
 */
@Injectable()
export class ActionExecutionsService {
  private readonly standard = new StandardActionRunner();
  private readonly settings: ActionExecutionSettings;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    // Mistral's defaults when the embedding module configures nothing (tests mounting WorkflowApiModule alone).
    @Optional() @Inject(ACTION_EXECUTION_SETTINGS) settings?: ActionExecutionSettings,
  ) {
    this.settings = settings ?? DEFAULT_ACTION_EXECUTION_SETTINGS;
  }

  async findRow(ctx: RequestContext, id: string): Promise<Row> {
    if (!isCanonicalUuid(id))
      throw new NotFoundError('ActionExecution', id, `ActionExecution not found [id=${id}]`);
    const row = await findActionExecutionRow(this.db, id, ctx.isAdmin ? null : ctx.projectId);
    if (!row) throw new NotFoundError('ActionExecution', id, `ActionExecution not found [id=${id}]`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Row> {
    return actionExecutionView(await this.findRow(ctx, id), { includeOutput: true });
  }

  async list(spec: RunListSpec, req: RunListRequest, includeOutput: boolean): Promise<Row[]> {
    const withOutput = includeOutput || req.fields.includes('output');
    const columns = withOutput ? [...ACTION_EXECUTION_LIST_COLUMNS, 'output'] : ACTION_EXECUTION_LIST_COLUMNS;
    return (await runList(this.db, spec, { ...req, excludeTransient: true }, columns)).map((r) =>
      actionExecutionView(r, { includeOutput: withOutput }),
    );
  }

  /** PUT /v2/action_executions/{id}: `{state, output}` completes, pauses or resumes an async action. */
  async update(ctx: RequestContext, id: string, body: Record<string, unknown>): Promise<Row> {
    const row = await this.findRow(ctx, id);
    if (row['project_id'] !== ctx.projectId && !ctx.isAdmin) {
      throw new ForbiddenError(`Can not access ActionExecution resource of other projects, ID: ${id}`);
    }
    const state = body['state'];
    if (typeof state !== 'string' || !PUT_STATES.includes(state)) {
      throw new InvalidInputError(
        `Invalid input for field/attribute state. Value: '${String(state)}'. Value should be one of: ${PUT_STATES.join(', ')}`,
      );
    }
    let output = body['output'];
    if (typeof output === 'string') {
      try {
        output = JSON.parse(output);
      } catch {
        // a plain string result
      }
    }
    if (isCompleted(String(row['state']))) {
      throw new InvalidInputError(`Action execution ${id} is already in ${String(row['state'])} state.`);
    }
    const executionId = row['workflow_execution_id'] as string | null;
    const taskExecutionId = row['task_execution_id'] as string | null;
    if (!executionId || !taskExecutionId) return this.updateStandalone(ctx, row, state, output);
    let cmd: EngineCommandMessage;
    if (state === 'PAUSED' || state === 'RUNNING') {
      cmd = engineCommand(`action-state:${id}:${state}:${Date.now()}`, 'engine.action-state-changed', {
        executionId,
        taskExecutionId,
        actionExecutionId: id,
        state,
      });
    } else {
      const s = state as 'SUCCESS' | 'ERROR' | 'CANCELLED';
      cmd = engineCommand(`action-completed:${id}`, 'engine.action-completed', {
        executionId,
        taskExecutionId,
        actionExecutionId: id,
        state: s,
        ...(s === 'SUCCESS' ? { result: output ?? null } : {}),
        ...(s === 'ERROR'
          ? { error: output === undefined || output === null ? 'Unknown error' : output }
          : {}),
      });
    }
    await this.db.transaction((em) =>
      this.outbox.add(em, { destination: 'bus', queue: ENGINE_COMMAND_QUEUE, message: cmd }),
    );
    const deadline = Date.now() + APPLY_WAIT_MS;
    let delay = 5;
    while (Date.now() < deadline) {
      const current = await readActionExecutionState(this.db, id);
      if (current === undefined || current === state) break;
      await new Promise((res) => setTimeout(res, delay));
      delay = Math.min(delay * 2, 100);
    }
    return this.get(ctx, id);
  }

  /** PUT of a standalone execution: no engine is involved, the row itself changes. */
  private async updateStandalone(
    ctx: RequestContext,
    row: Row,
    state: string,
    output: unknown,
  ): Promise<Row> {
    const id = String(row['id']);
    if (state === 'PAUSED' || state === 'RUNNING') {
      if (
        state === 'PAUSED' &&
        !(await this.resolveAction(ctx, String(row['name']), String(row['workflow_namespace'] ?? ''))).async
      ) {
        throw new InvalidInputError(
          'Transition to the PAUSED state is only supported for asynchronous action execution.',
        );
      }
      await setStandaloneActionState(this.db, id, state, this.clock.now());
    } else {
      const s = state as 'SUCCESS' | 'ERROR' | 'CANCELLED';
      const error = output === undefined || output === null ? 'Unknown error' : output;
      await completeStandaloneAction(
        this.db,
        id,
        s === 'SUCCESS'
          ? { state: s, result: output ?? null }
          : s === 'ERROR'
            ? { state: s, error }
            : { state: s },
        this.clock.now(),
      );
    }
    return this.get(ctx, id);
  }

  /**
   * POST /v2/action_executions: runs an action outside any workflow, on the executors (an action-run
   * job, as for a task). Scheduled runs answer RUNNING at once; synchronous ones wait here (bounded)
   * for the executor to complete the row, which is deleted afterwards unless `save_result`.
   */
  async run(ctx: RequestContext, body: unknown, apiBaseUrl: string): Promise<Row> {
    const req = parseActionRunRequest(body);
    const action = await this.resolveAction(ctx, req.name, req.namespace);
    validateActionInput(req.name, action.className, action.params, req.input);
    const plan = planActionRun(req, action.async);
    const save = plan.kind === 'schedule' || plan.save;
    const id = randomUUID();
    const now = this.clock.now();
    const job: ActionRunJob = {
      actionExecutionId: id,
      executionId: '',
      taskExecutionId: '',
      actionName: req.name,
      input: req.input,
      namespace: req.namespace,
      safeRerun: false,
      standalone: true,
      context: {
        workflowName: '',
        workflowNamespace: req.namespace,
        workflowExecutionId: '',
        rootExecutionId: null,
        taskExecutionId: '',
        taskName: '',
        actionExecutionId: id,
        projectId: ctx.projectId,
        callbackUrl: `${apiBaseUrl}/v2/action_executions/${id}`,
        ...(req.timeout !== undefined ? { timeoutMs: Math.round(req.timeout * 1000) } : {}),
      },
    };
    await this.db.transaction(async (em) => {
      await insertStandaloneAction(em, {
        id,
        name: req.name,
        namespace: req.namespace,
        projectId: ctx.projectId,
        description: req.description ?? '',
        input: req.input,
        params: req.params,
        transient: !save,
        createdAt: now,
      });
      await this.outbox.add(em, {
        destination: 'jobs',
        queue: ACTION_JOB_QUEUE,
        job: { id, name: ACTION_RUN_JOB, data: job },
      });
    });
    if (plan.kind === 'schedule') return postView(await this.get(ctx, id));
    const done = await this.waitForCompletion(id, req);
    if (plan.save) return postView(actionExecutionView(done, { includeOutput: true }));
    await deleteActionExecution(this.db, id);
    await sweepTransientActions(this.db, new Date(now.getTime() - TRANSIENT_TTL_MS));
    return unsavedView(req, done);
  }

  /** DELETE /v2/action_executions/{id}: only completed standalone executions, and only when allowed. */
  async delete(ctx: RequestContext, id: string): Promise<void> {
    if (!this.settings.allowDeletion) throw new ForbiddenError('Action execution deletion is not allowed.');
    const row = await this.findRow(ctx, id);
    if (row['task_execution_id']) throw new ForbiddenError('Only ad-hoc action execution can be deleted.');
    if (!isCompleted(String(row['state'])))
      throw new ForbiddenError('Only completed action execution can be deleted.');
    await deleteActionExecution(this.db, id);
  }

  /** A standard action, or an ad-hoc one of the caller's (namespace, then the default one); async as its base is. */
  private async resolveAction(ctx: RequestContext, name: string, namespace: string): Promise<ResolvedAction> {
    const std = findStandardAction(name);
    if (std) return { className: this.standard.className(name) ?? name, params: std.input, async: std.async };
    const find = async (n: string): Promise<ActionSpec | null> => {
      const found = await findAdHocActionSpec(this.db, {
        name: n,
        namespace,
        projectId: ctx.projectId,
        visibility: ctx.isAdmin ? { kind: 'all' } : { kind: 'project', projectId: ctx.projectId },
      });
      return (found?.spec as ActionSpec | undefined) ?? null;
    };
    const spec = await find(name);
    if (!spec) throw new InvalidInputError(`Failed to find action [action_name=${name}]`);
    // async-ness comes from the standard action at the bottom of the base chain
    const seen = new Set([name]);
    let base = spec.base;
    for (;;) {
      const stdBase = findStandardAction(base);
      if (stdBase) return { className: AD_HOC_ACTION_CLASS, params: spec.input, async: stdBase.async };
      if (seen.has(base))
        throw new InvalidInputError(
          `Found a cycle in an ad-hoc action chain [action_name=${name}, duplicate_action_name=${base}]`,
        );
      seen.add(base);
      const next = await find(base);
      if (!next) throw new InvalidInputError(`Failed to find action [action_name=${base}]`);
      base = next.base;
    }
  }

  /** Polls the row until the executor completed it; bounded by the action timeout and the sync wait. */
  private async waitForCompletion(id: string, req: ActionRunRequest): Promise<Row> {
    const limit =
      req.timeout !== undefined
        ? Math.min(this.settings.syncWaitMs, req.timeout * 1000 + 5_000)
        : this.settings.syncWaitMs;
    const deadline = Date.now() + limit;
    let delay = 5;
    for (;;) {
      const row = await readActionExecutionRow(this.db, id);
      if (!row) throw new NotFoundError('ActionExecution', id, `ActionExecution not found [id=${id}]`);
      if (isCompleted(String(row['state']))) return row;
      if (Date.now() >= deadline) {
        throw new TransientError(
          `Action execution ${id} (${req.name}) did not complete within ${Math.round(limit / 1000)} s: no executor ran it in time.`,
        );
      }
      await new Promise((res) => setTimeout(res, delay));
      delay = Math.min(delay * 2, 100);
    }
  }
}

/** The POST answer of a kept execution: the GET view without `task_name` and `params` (as the reference). */
function postView(view: Row): Row {
  const { task_name: _t, params: _p, ...rest } = view;
  return rest;
}

/** The POST answer of a run that was not kept: Mistral's unsaved execution object, without identity. */
function unsavedView(req: ActionRunRequest, row: Row): Row {
  const view = actionExecutionView(row, { includeOutput: true });
  return {
    id: null,
    workflow_name: null,
    workflow_namespace: req.namespace,
    task_execution_id: null,
    state: view['state'],
    state_info: null,
    tags: null,
    name: req.name,
    description: req.description,
    project_id: null,
    accepted: null,
    input: view['input'],
    output: view['output'],
    created_at: null,
    updated_at: null,
  };
}
