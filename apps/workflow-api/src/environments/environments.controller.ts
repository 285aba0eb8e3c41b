import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Post,
  Put,
  Query,
  Req,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { type QueryBag, checkKnownParams, invalidField, queryValue } from '../definitions/query-values';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { ENVIRONMENT_FIELDS, ENVIRONMENT_LIST } from './environment.views';
import { EnvironmentsService } from './environments.service';

const bodyMap = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  return body as Record<string, unknown>;
};

/** `fields` of a single GET (Mistral 2023+): known fields only, `id` always first; empty means all. */
const singleFields = (query: QueryBag): string[] => {
  const raw = queryValue(query, 'fields');
  if (raw === undefined) return [];
  const all: readonly string[] = ENVIRONMENT_FIELDS;
  const fields = [
    ...new Set(
      raw
        .split(',')
        .map((f) => f.trim().toLowerCase())
        .filter(Boolean),
    ),
  ];
  const unknown = fields.filter((f) => !all.includes(f));
  if (unknown.length)
    throw new InvalidInputError(
      `Some fields do not exist  [${unknown.join(', ')}], please choose from [${all.join(', ')}]`,
    );
  if (fields.length && !fields.includes('id')) fields.unshift('id');
  return fields;
};

/** Mistral types the list's `scope` as its enum: only `private` or `public`, no operator. */
const checkScopeFilter = (query: QueryBag): void => {
  const scope = queryValue(query, 'scope');
  if (scope !== undefined && scope !== 'private' && scope !== 'public')
    throw invalidField('scope', scope, 'Value should be one of: private, public');
};

/**
 * Mistral v2 `/v2/environments`: create, list, show and delete by name; update is a PUT on the
 * collection with the name in the body, as in Mistral.
 */
@Controller('v2/environments')
export class EnvironmentsController {
  constructor(
    private readonly environments: EnvironmentsService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('environments:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    const list = parseRunList(ENVIRONMENT_LIST, query, ctx, this.policy);
    checkScopeFilter(query);
    const environments = (await this.environments.list(ctx, list)).map((e) => pickFields(e, list.fields));
    const next = runNextLink(requestBaseUrl(req), ENVIRONMENT_LIST, list, environments);
    return next ? { environments, next } : { environments };
  }

  @Post()
  @Authorize('environments:create')
  @HttpCode(201)
  create(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    return this.environments.create(ctx, bodyMap(body));
  }

  @Put()
  @Authorize('environments:update')
  update(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    return this.environments.update(ctx, bodyMap(body));
  }

  @Get(':name')
  @Authorize('environments:get')
  async get(@Ctx() ctx: RequestContext, @Param('name') name: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['fields']);
    const fields = singleFields(query);
    return pickFields(await this.environments.get(ctx, name), fields);
  }

  @Delete(':name')
  @Authorize('environments:delete')
  @HttpCode(204)
  async delete(@Ctx() ctx: RequestContext, @Param('name') name: string): Promise<void> {
    await this.environments.delete(ctx, name);
  }
}
