import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ForbiddenError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import {
  type DynamicActionChanges,
  type DynamicActionRecord,
  type DynamicActionSqlRunner,
  deleteDynamicAction,
  dynamicActionDuplicateMessage,
  findCodeSource,
  findDynamicAction,
  insertDynamicAction,
  toSeconds,
  updateDynamicAction,
} from '@osc/workflow-persistence';
import { codeSourceNotFound } from '../code-sources/code-sources.service';
import { NAME_MAX, checkLength, rejectNul, translateDbError } from '../definitions/db-errors';
import { invalidField, pyType, shownValue } from '../definitions/query-values';
import { type RunListRequest, runList } from '../executions/run-list';
import { WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { DYNAMIC_ACTION_LIST, dynamicActionRowView, dynamicActionView } from './dynamic-action.views';

type Scope = 'private' | 'public';

/** Attributes of Mistral's DynamicAction resource; `project_id` is read-only. */
const ATTRIBUTES = [
  'id',
  'name',
  'namespace',
  'code_source_id',
  'code_source_name',
  'class_name',
  'project_id',
  'scope',
  'created_at',
  'updated_at',
];

/** A JSON body as WSME reads it into a DynamicAction: text types, the scope enum, read-only and unknown attributes. */
interface DynamicActionBody {
  readonly id?: string;
  readonly name?: string;
  readonly namespace: string;
  readonly className?: string;
  readonly codeSourceId?: string;
  readonly codeSourceName?: string;
  readonly scope?: Scope;
}

function readBody(body: Record<string, unknown>): DynamicActionBody {
  const text: Record<string, string> = {};
  let scope: Scope | undefined;
  for (const attr of ATTRIBUTES) {
    if (!(attr in body)) continue;
    const v = body[attr];
    if (attr === 'project_id') throw invalidField(attr, shownValue(v), 'Cannot set read only field.');
    if (v === null) continue;
    if (attr === 'scope') {
      if (v !== 'private' && v !== 'public')
        throw invalidField(attr, shownValue(v), 'Value should be one of: private, public');
      scope = v;
      continue;
    }
    if (typeof v !== 'string') {
      throw invalidField(
        attr,
        shownValue(v),
        `Wrong type. Expected '<class 'str'>', got '<class '${pyType(v)}'>'`,
      );
    }
    text[attr] = v;
  }
  const unknown = Object.keys(body).filter((k) => !ATTRIBUTES.includes(k));
  if (unknown.length)
    throw new InvalidInputError(`Unknown attribute for argument dyn_action: ${unknown.join(', ')}`);
  rejectNul('A dynamic action', ...Object.values(text));
  checkLength('name', text['name'], NAME_MAX.definition);
  checkLength('class_name', text['class_name'], NAME_MAX.definition);
  checkLength('namespace', text['namespace'], NAME_MAX.definition);
  // Empty strings count as absent, as Mistral's truthiness checks read them.
  const opt = (k: string) => (text[k] ? text[k] : undefined);
  return {
    id: opt('id'),
    name: opt('name'),
    namespace: text['namespace'] ?? '',
    className: opt('class_name'),
    codeSourceId: opt('code_source_id'),
    codeSourceName: opt('code_source_name'),
    scope,
  };
}

const dynamicActionNotFound = (identifier: string, namespace: string): NotFoundError =>
  new NotFoundError(
    'DynamicActionDefinition',
    identifier,
    `Dynamic Action not found [name=${identifier},namespace=${namespace}]`,
  );

/**
 * Dynamic actions (Mistral's `/v2/dynamic_actions`): a name bound to a class exported by a code
 * source, unique per (name, namespace, project). The code source is named by id or by name in the
 * action's namespace, among the caller's own and the public ones. Public actions of other projects
 * are read-only except for admins.
 */
@Injectable()
export class DynamicActionsService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  /** POST /v2/dynamic_actions → 201. */
  async create(ctx: RequestContext, raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = readBody(raw);
    if (!body.name) throw new InvalidInputError("'name' must be provided.");
    if (!body.className) throw new InvalidInputError("'class_name' must be provided.");
    if (!body.codeSourceId && !body.codeSourceName) {
      throw new InvalidInputError("Either 'code_source_id' or 'code_source_name' must be provided.");
    }
    if (body.scope === 'public') this.policy.enforce('dynamic_actions:publicize', ctx);
    const { name, className } = body;
    const created = await this.guard(
      dynamicActionDuplicateMessage(name, body.namespace, ctx.projectId),
      async () => {
        const source = await this.codeSource(this.db, ctx, body);
        return insertDynamicAction(this.db, {
          name,
          namespace: body.namespace,
          className,
          codeSourceId: source.id,
          codeSourceName: source.name,
          scope: body.scope ?? 'private',
          projectId: ctx.projectId,
          createdAt: toSeconds(this.clock.now()),
        });
      },
    );
    return dynamicActionView(created);
  }

  /**
   * PUT /v2/dynamic_actions with `id` or `name` (and `namespace`) in the body: `class_name`, `scope`
   * and the code source (`code_source_id` or `code_source_name`) change when given.
   */
  async update(ctx: RequestContext, raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = readBody(raw);
    const identifier = body.id ?? body.name;
    if (!identifier) throw new InvalidInputError("Either 'name' or 'id' must be provided.");
    if (body.scope === 'public') this.policy.enforce('dynamic_actions:publicize', ctx);
    const updated = await this.db.transaction(async (em) => {
      const found = this.owned(
        ctx,
        await findDynamicAction(em, identifier, body.namespace, ctx.projectId, { lock: true }),
        identifier,
        body.namespace,
      );
      const source =
        body.codeSourceId || body.codeSourceName ? await this.codeSource(em, ctx, body) : undefined;
      const changes: DynamicActionChanges = {
        ...(body.className ? { className: body.className } : {}),
        ...(body.scope ? { scope: body.scope } : {}),
        ...(source ? { codeSource: { id: source.id, name: source.name } } : {}),
      };
      return updateDynamicAction(em, found.id, changes, toSeconds(this.clock.now()));
    });
    return dynamicActionView(updated);
  }

  async get(ctx: RequestContext, identifier: string, namespace: string): Promise<Record<string, unknown>> {
    const found = await findDynamicAction(this.db, identifier, namespace, ctx.projectId);
    if (!found) throw dynamicActionNotFound(identifier, namespace);
    return dynamicActionView(found);
  }

  async list(ctx: RequestContext, req: RunListRequest): Promise<Record<string, unknown>[]> {
    return (
      await runList(this.db, DYNAMIC_ACTION_LIST, { ...req, publicToo: ctx.projectId, markerPublicToo: true })
    ).map(dynamicActionRowView);
  }

  async delete(ctx: RequestContext, identifier: string, namespace: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const found = this.owned(
        ctx,
        await findDynamicAction(em, identifier, namespace, ctx.projectId, { lock: true }),
        identifier,
        namespace,
      );
      await deleteDynamicAction(em, found.id);
    });
  }

  /** The code source a body names: by id, else by name in the action's namespace (Mistral's `get_code_source`). */
  private async codeSource(db: DynamicActionSqlRunner, ctx: RequestContext, body: DynamicActionBody) {
    const ref = (body.codeSourceId ?? body.codeSourceName) as string;
    const source = await findCodeSource(db, ref, body.namespace, ctx.projectId);
    if (!source) throw codeSourceNotFound(ref, body.namespace);
    return source;
  }

  private owned(
    ctx: RequestContext,
    a: DynamicActionRecord | null,
    identifier: string,
    namespace: string,
  ): DynamicActionRecord {
    if (!a) throw dynamicActionNotFound(identifier, namespace);
    if (!ctx.isAdmin && a.projectId !== ctx.projectId) {
      throw new ForbiddenError(
        `Can not access DynamicActionDefinition resource of other projects, ID: ${a.id}`,
      );
    }
    return a;
  }

  private async guard<R>(conflict: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      throw translateDbError(err, conflict);
    }
  }
}
