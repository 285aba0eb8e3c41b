import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ForbiddenError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { pyRepr } from '@osc/workflow-domain';
import {
  type EnvironmentChanges,
  type EnvironmentRecord,
  deleteEnvironment,
  findEnvironment,
  insertEnvironment,
  toSeconds,
  updateEnvironment,
} from '@osc/workflow-persistence';
import { rejectNul, translateDbError } from '../definitions/db-errors';
import { invalidField, pyType, shownValue } from '../definitions/query-values';
import { type RunListRequest, runList } from '../executions/run-list';
import { WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { ENVIRONMENT_LIST, environmentRowView, environmentView } from './environment.views';

type Scope = 'private' | 'public';

/** Attributes of Mistral's Environment resource, in its order; `project_id` is read-only. */
const ATTRIBUTES = [
  'id',
  'name',
  'description',
  'variables',
  'scope',
  'project_id',
  'created_at',
  'updated_at',
];
const TEXT_ATTRIBUTES = ['id', 'name', 'description', 'created_at', 'updated_at'];
/** What Mistral's `_validate_environment` lets a POST and a PUT (besides `name`) carry. */
const CREATE_KEYS = ['name', 'description', 'variables', 'scope'];
const UPDATE_KEYS = ['description', 'variables', 'scope'];

const NO_NAME = 'Name of the environment is not provided.';

/**
 * `variables` as Mistral's JsonType reads it: an object, or a JSON text of one (python-mistralclient
 * sends text); empty means `{}`; anything else that parses is refused as not a dictionary.
 */
const parseVariables = (v: unknown): Record<string, unknown> | null => {
  if (v === null) return null;
  let value = v;
  if (typeof v === 'string') {
    if (v.trim() === '') return {};
    try {
      value = JSON.parse(v);
    } catch (err) {
      throw invalidField('variables', v, (err as Error).message);
    }
  }
  // JsonType: any empty value is an empty dictionary.
  if (
    value === null ||
    value === '' ||
    value === false ||
    value === 0 ||
    (Array.isArray(value) && value.length === 0)
  )
    return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(`JsonType field value must be a dictionary [actual=${shownValue(value)}]`);
  }
  return value as Record<string, unknown>;
};

/** A request body as WSME reads it into an Environment: types, the read-only field, unknown attributes. */
interface EnvironmentBody {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly variables?: Record<string, unknown> | null;
  readonly scope?: Scope | null;
}

function readBody(body: Record<string, unknown>): EnvironmentBody {
  const out: { -readonly [K in keyof EnvironmentBody]: EnvironmentBody[K] } = {};
  for (const attr of ATTRIBUTES) {
    if (!(attr in body)) continue;
    const v = body[attr];
    if (attr === 'project_id') throw invalidField(attr, shownValue(v), 'Cannot set read only field.');
    if (TEXT_ATTRIBUTES.includes(attr) && v !== null && typeof v !== 'string') {
      throw invalidField(
        attr,
        shownValue(v),
        `Wrong type. Expected '<class 'str'>', got '<class '${pyType(v)}'>'`,
      );
    }
    if (attr === 'scope' && v !== null && v !== 'private' && v !== 'public') {
      throw invalidField(attr, shownValue(v), 'Value should be one of: private, public');
    }
    if (attr === 'name') out.name = v as string | null;
    else if (attr === 'description') out.description = v as string | null;
    else if (attr === 'variables') out.variables = parseVariables(v);
    else if (attr === 'scope') out.scope = v as Scope | null;
  }
  const unknown = Object.keys(body).filter((k) => !ATTRIBUTES.includes(k));
  if (unknown.length)
    throw new InvalidInputError(`Unknown attribute for argument env: ${unknown.join(', ')}`);
  rejectNul('An environment', out.name, out.description, out.variables);
  return out;
}

/** Mistral's `_validate_environment`: only these keys may be given (a known but other one such as `id` is refused). */
function checkKeys(keys: readonly string[], legalKeys: readonly string[]): void {
  if (keys.some((k) => !legalKeys.includes(k))) {
    throw new InvalidInputError(
      `Please, check your environment definition. Only: ${pyRepr(legalKeys)} are allowed as definition keys.`,
    );
  }
}

/**
 * Environments (Mistral's `/v2/environments`): named variable sets, unique per project, found by name
 * among the caller's own and the public ones — for admins too, as Mistral's queries have no admin
 * bypass here. Public environments of other projects are read-only (403 on change, as for
 * definitions), except for admins.
 */
@Injectable()
export class EnvironmentsService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  /** POST /v2/environments → 201; a name taken in the project → 409. */
  async create(ctx: RequestContext, raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = readBody(raw);
    checkKeys(Object.keys(raw), CREATE_KEYS);
    // Mistral would store a nameless environment nobody can address; refuse it with its PUT message.
    if (!body.name) throw new InvalidInputError(NO_NAME);
    if (body.scope === 'public') this.policy.enforce('environments:publicize', ctx);
    const name = body.name;
    const created = await this.guard(
      `Duplicate entry for Environment ['name', 'project_id']: ${name}, ${ctx.projectId}`,
      () =>
        insertEnvironment(this.db, {
          name,
          description: body.description ?? null,
          variables: body.variables === undefined ? null : body.variables,
          scope: body.scope ?? 'private',
          projectId: ctx.projectId,
          createdAt: toSeconds(this.clock.now()),
        }),
    );
    return environmentView(created);
  }

  /** GET /v2/environments/{name}: by name only, as Mistral (an id is just a name nobody has). */
  async get(ctx: RequestContext, name: string): Promise<Record<string, unknown>> {
    const e = await findEnvironment(this.db, name, ctx.projectId);
    if (!e) throw this.notFound(name);
    return environmentView(e);
  }

  /** Own environments and public ones of other projects (Mistral's secure query). */
  async list(ctx: RequestContext, req: RunListRequest): Promise<Record<string, unknown>[]> {
    return (await runList(this.db, ENVIRONMENT_LIST, { ...req, publicToo: ctx.projectId })).map(
      environmentRowView,
    );
  }

  /**
   * PUT /v2/environments with the name in the body: description, variables and scope change; absent
   * ones stay, null clears description and variables.
   */
  async update(ctx: RequestContext, raw: Record<string, unknown>): Promise<Record<string, unknown>> {
    const body = readBody(raw);
    const name = body.name;
    if (!name) throw new InvalidInputError(NO_NAME);
    checkKeys(
      Object.keys(raw).filter((k) => k !== 'name'),
      UPDATE_KEYS,
    );
    if (body.scope === 'public') this.policy.enforce('environments:publicize', ctx);
    const changes: EnvironmentChanges = {
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.variables !== undefined ? { variables: body.variables } : {}),
      ...(body.scope ? { scope: body.scope } : {}),
    };
    const updated = await this.guard(
      `Duplicate entry for Environment ['name', 'project_id']: ${name}, ${ctx.projectId}`,
      () =>
        this.db.transaction(async (em) => {
          const e = this.owned(ctx, await findEnvironment(em, name, ctx.projectId, { lock: true }), name);
          return updateEnvironment(em, e.id, changes, toSeconds(this.clock.now()));
        }),
    );
    return environmentView(updated);
  }

  /** DELETE /v2/environments/{name} → 204. Triggers naming it are kept (they fail when they fire, as in Mistral). */
  async delete(ctx: RequestContext, name: string): Promise<void> {
    await this.db.transaction(async (em) => {
      const e = this.owned(ctx, await findEnvironment(em, name, ctx.projectId, { lock: true }), name);
      await deleteEnvironment(em, e.id);
    });
  }

  private owned(ctx: RequestContext, e: EnvironmentRecord | null, name: string): EnvironmentRecord {
    if (!e) throw this.notFound(name);
    if (!ctx.isAdmin && e.projectId !== ctx.projectId) {
      throw new ForbiddenError(`Can not access Environment resource of other projects, ID: ${e.id}`);
    }
    return e;
  }

  private async guard<R>(conflict: string, fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      throw translateDbError(err, conflict);
    }
  }

  private notFound(name: string): NotFoundError {
    return new NotFoundError('Environment', name, `Environment not found [name=${name}]`);
  }
}
