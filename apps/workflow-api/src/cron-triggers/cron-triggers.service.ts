import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import {
  type WorkflowSpec,
  newExecution,
  parseFirstExecutionTime,
  planCronTrigger,
} from '@osc/workflow-domain';
import {
  deleteCronTrigger,
  findCronTrigger,
  findWorkflowForRun,
  insertCronTrigger,
  toSeconds,
} from '@osc/workflow-persistence';
import { type RunListRequest, runList } from '../executions/run-list';
import { NAME_MAX, checkLength } from '../definitions/db-errors';
import { CRON_TRIGGER_LIST, cronTriggerRowView, cronTriggerView } from './cron-trigger.views';
import { optMap, optString, wrongType } from '../definitions/body-fields';

const BODY_FIELDS = [
  'id',
  'name',
  'workflow_name',
  'workflow_id',
  'workflow_input',
  'workflow_params',
  'pattern',
  'first_execution_time',
  'remaining_executions',
  'scope',
  'project_id',
  'next_execution_time',
  'created_at',
  'updated_at',
];

const optCount = (v: unknown): number | undefined => {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^\s*[+-]?\d+\s*$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw wrongType('remaining_executions', v, 'unable to convert to int');
  return n;
};

/** Cron triggers: create (validated per Mistral), read, list, delete. No update exists. */
@Injectable()
export class CronTriggersService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** POST /v2/cron_triggers (seed: Cron triggers; issue 8 validation). */
  async create(ctx: RequestContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    for (const key of Object.keys(body)) {
      if (!BODY_FIELDS.includes(key))
        throw new InvalidInputError(`Unknown attribute for argument cron_trigger: ${key}`);
    }
    const name = optString(body, 'name');
    if (!name || !name.trim())
      throw new InvalidInputError(
        "Invalid input for field/attribute name. Value: 'None'. Mandatory field missing.",
      );
    checkLength('name', name, NAME_MAX.trigger);
    const workflowId = optString(body, 'workflow_id');
    const workflowName = optString(body, 'workflow_name');
    const input = optMap('workflow_input', body['workflow_input']) ?? {};
    const params = optMap('workflow_params', body['workflow_params']) ?? {};
    const pattern = optString(body, 'pattern');
    const firstRaw = optString(body, 'first_execution_time');
    const count = optCount(body['remaining_executions']);
    const identifier = workflowId ?? workflowName;
    if (!identifier) throw new InvalidInputError('Workflow ID or workflow name must be provided.');

    const now = toSeconds(this.clock.now());
    const plan = planCronTrigger(
      {
        pattern: pattern ?? null,
        firstExecutionTime: firstRaw ? parseFirstExecutionTime(firstRaw) : null,
        remainingExecutions: count ?? null,
      },
      this.clock.now(),
    );
    const wf = await findWorkflowForRun(this.db, {
      identifier,
      namespace: '',
      projectId: ctx.projectId,
      visibility: { kind: 'project', projectId: ctx.projectId },
    });
    if (!wf)
      throw new NotFoundError(
        'Workflow',
        identifier,
        `Workflow not found [workflow_identifier=${identifier}, namespace=]`,
      );
    // The same checks the trigger's executions will meet: declared input, env, reverse task_name. An env
    // naming a stored environment is resolved only when the trigger fires (Mistral), so it is not checked here.
    const checkedParams = typeof params['env'] === 'string' ? { ...params, env: {} } : params;
    newExecution(
      {
        id: randomUUID(),
        spec: wf.spec as WorkflowSpec,
        workflowId: wf.id,
        workflowNamespace: wf.namespace,
        projectId: ctx.projectId,
        input,
        params: checkedParams,
      },
      now,
    );
    const created = await insertCronTrigger(this.db, {
      name,
      projectId: ctx.projectId,
      workflowId: wf.id,
      workflowName: wf.name,
      workflowNamespace: wf.namespace,
      workflowInput: input,
      workflowParams: params,
      pattern: plan.pattern,
      firstExecutionTime: plan.firstExecutionTime,
      nextExecutionTime: plan.nextExecutionTime,
      remainingExecutions: plan.remainingExecutions,
      createdAt: now,
    });
    return cronTriggerView(created);
  }

  async get(ctx: RequestContext, identifier: string): Promise<Record<string, unknown>> {
    const t = await findCronTrigger(this.db, identifier, ctx.isAdmin ? null : ctx.projectId);
    if (!t) throw this.notFound(identifier);
    return cronTriggerView(t);
  }

  async list(req: RunListRequest): Promise<Record<string, unknown>[]> {
    return (await runList(this.db, CRON_TRIGGER_LIST, req)).map(cronTriggerRowView);
  }

  /**
   * DELETE by name or UUID. The row lock waits for a scheduler that is firing this trigger right now;
   * once the delete commits no scheduler can claim the trigger again.
   */
  async delete(ctx: RequestContext, identifier: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const t = await findCronTrigger(em, identifier, ctx.isAdmin ? null : ctx.projectId, { lock: true });
      if (!t) throw this.notFound(identifier);
      await deleteCronTrigger(em, t.id);
    });
  }

  private notFound(identifier: string): NotFoundError {
    return new NotFoundError('CronTrigger', identifier, `Cron trigger not found [identifier=${identifier}]`);
  }
}
