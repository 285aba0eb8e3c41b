import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ForbiddenError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { type WorkflowSpec, checkWorkflowInput } from '@osc/workflow-domain';
import {
  type EventTriggerChanges,
  type EventTriggerRecord,
  deleteEventTrigger,
  findEventTrigger,
  findWorkflowForRun,
  insertEventTrigger,
  toSeconds,
  updateEventTrigger,
} from '@osc/workflow-persistence';
import { NAME_MAX, checkLength } from '../definitions/db-errors';
import { isUuid } from '../definitions/list-params';
import { type RunListRequest, runList } from '../executions/run-list';
import { WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { EVENT_TRIGGER_LIST, eventTriggerRowView, eventTriggerView } from './event-trigger.views';
import { optMap, optString, wrongType } from '../definitions/body-fields';

/** Writable attributes of Mistral's EventTrigger resource. */
const BODY_FIELDS = [
  'name',
  'workflow_id',
  'workflow_input',
  'workflow_params',
  'exchange',
  'topic',
  'event',
  'scope',
];
/** Read-only attributes: WSME refuses them in a body. */
const READ_ONLY = ['id', 'project_id', 'created_at', 'updated_at'];

/** Mistral's check of the four mandatory attributes (EventTriggerException, 400). */
export const MANDATORY_MESSAGE =
  "Params {'exchange', 'workflow_id', 'topic', 'event'} must be provided for creating event trigger.";
const UPDATE_NOT_ALLOWED = ['exchange', 'topic', 'event'];

const optScope = (body: Record<string, unknown>): 'private' | 'public' | undefined => {
  const v = body['scope'];
  if (v === undefined || v === null) return undefined;
  if (v !== 'private' && v !== 'public')
    throw wrongType('scope', v, 'Value should be one of: private, public');
  return v;
};

const checkAttributes = (body: Record<string, unknown>): void => {
  for (const key of Object.keys(body)) {
    if (READ_ONLY.includes(key)) throw wrongType(key, body[key], 'Cannot set read only field.');
    if (!BODY_FIELDS.includes(key))
      throw new InvalidInputError(`Unknown attribute for argument event_trigger: ${key}`);
  }
};

/** Event triggers: create (validated as Mistral does), read, list, update (workflow side), delete. */
@Injectable()
export class EventTriggersService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  /** POST /v2/event_triggers. */
  async create(ctx: RequestContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
    checkAttributes(body);
    const name = optString(body, 'name') ?? '';
    const exchange = optString(body, 'exchange');
    const topic = optString(body, 'topic');
    const event = optString(body, 'event');
    const workflowId = optString(body, 'workflow_id');
    // WSME's uuid type answers with its bare message here.
    if (workflowId !== undefined && !isUuid(workflowId))
      throw new InvalidInputError(`Expected a uuid but received ${workflowId}.`);
    const input = optMap('workflow_input', body['workflow_input']);
    const params = optMap('workflow_params', body['workflow_params']);
    const scope = optScope(body);
    if (!exchange || !topic || !event || !workflowId) throw new InvalidInputError(MANDATORY_MESSAGE);
    if (scope === 'public') this.policy.enforce('event_triggers:publicize', ctx);
    for (const [field, v] of [
      ['exchange', exchange],
      ['topic', topic],
      ['event', event],
    ] as const) {
      if (v.length > 80) throw wrongType(field, v, 'Value should have a maximum character requirement of 80');
    }
    checkLength('name', name, NAME_MAX.trigger);

    const wf = await findWorkflowForRun(this.db, {
      identifier: workflowId,
      namespace: '',
      projectId: ctx.projectId,
      visibility: ctx.isAdmin ? { kind: 'all' } : { kind: 'project', projectId: ctx.projectId },
    });
    if (!wf || wf.id !== workflowId.toLowerCase())
      throw new NotFoundError('Workflow', workflowId, `Workflow not found [workflow_id=${workflowId}]`);
    // The input the trigger's executions will be started with must fit the workflow (as Mistral checks).
    checkWorkflowInput(wf.spec as WorkflowSpec, input ?? {});
    const created = await insertEventTrigger(this.db, {
      name,
      projectId: ctx.projectId,
      scope: scope ?? 'private',
      workflowId: wf.id,
      workflowInput: input ?? {},
      workflowParams: params ?? {},
      exchange,
      topic,
      event,
      createdAt: toSeconds(this.clock.now()),
    });
    return eventTriggerView(created);
  }

  async get(ctx: RequestContext, id: string): Promise<Record<string, unknown>> {
    this.checkId(id);
    const t = await findEventTrigger(this.db, id, ctx.isAdmin ? null : ctx.projectId);
    if (!t) throw this.notFound(id);
    return eventTriggerView(t);
  }

  /** Own triggers and public ones of other projects (Mistral's secure query), or all for admins. */
  async list(ctx: RequestContext, req: RunListRequest): Promise<Record<string, unknown>[]> {
    const publicToo = !req.allProjects && !ctx.isAdmin ? { publicToo: ctx.projectId } : {};
    return (await runList(this.db, EVENT_TRIGGER_LIST, { ...req, ...publicToo, markerPublicToo: true })).map(
      eventTriggerRowView,
    );
  }

  /** PUT /v2/event_triggers/{id}: name, scope, workflow input and params; never exchange, topic or event. */
  async update(
    ctx: RequestContext,
    id: string,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    this.checkId(id);
    checkAttributes(body);
    const scope = optScope(body);
    if (scope === 'public') this.policy.enforce('event_triggers:publicize', ctx);
    if (UPDATE_NOT_ALLOWED.some((f) => body[f] !== undefined && body[f] !== null && body[f] !== '')) {
      throw new InvalidInputError(`Can not update fields ['exchange', 'topic', 'event'] of event trigger.`);
    }
    const changes: EventTriggerChanges = {
      name: optString(body, 'name'),
      scope,
      workflowInput: optMap('workflow_input', body['workflow_input']),
      workflowParams: optMap('workflow_params', body['workflow_params']),
    };
    checkLength('name', changes.name, NAME_MAX.trigger);
    const updated = await this.db.transaction(async (em) => {
      const t = this.owned(
        ctx,
        await findEventTrigger(em, id, ctx.isAdmin ? null : ctx.projectId, { lock: true }),
        id,
      );
      if (changes.workflowInput) {
        const wf = await findWorkflowForRun(em, {
          identifier: t.workflowId,
          namespace: '',
          projectId: t.projectId,
          visibility: { kind: 'all' },
        });
        if (wf) checkWorkflowInput(wf.spec as WorkflowSpec, changes.workflowInput);
      }
      return updateEventTrigger(em, t.id, changes, toSeconds(this.clock.now()));
    });
    return eventTriggerView(updated);
  }

  /** DELETE by id; the row lock waits for a listener firing this trigger right now. */
  async delete(ctx: RequestContext, id: string): Promise<void> {
    this.checkId(id);
    await this.db.transaction(async (em) => {
      const t = this.owned(
        ctx,
        await findEventTrigger(em, id, ctx.isAdmin ? null : ctx.projectId, { lock: true }),
        id,
      );
      await deleteEventTrigger(em, t.id);
    });
  }

  /** Another project's public trigger is readable but not changeable (403, as for definitions). */
  private owned(ctx: RequestContext, t: EventTriggerRecord | null, id: string): EventTriggerRecord {
    if (!t) throw this.notFound(id);
    if (!ctx.isAdmin && t.projectId !== ctx.projectId) {
      throw new ForbiddenError(`Can not access EventTrigger resource of other projects, ID: ${t.id}`);
    }
    return t;
  }

  private checkId(id: string): void {
    if (!isUuid(id))
      throw wrongType('id', id, `unable to convert to uuid. Error: Expected a uuid but received ${id}.`);
  }

  private notFound(id: string): NotFoundError {
    return new NotFoundError('EventTrigger', id, `Event trigger not found [id=${id}].`);
  }
}
