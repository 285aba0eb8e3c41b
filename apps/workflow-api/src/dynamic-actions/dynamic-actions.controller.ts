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
import type { QueryBag } from '../definitions/query-values';
import { parseNamespaceParam } from '../definitions/upload-params';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { DYNAMIC_ACTION_LIST } from './dynamic-action.views';
import { DynamicActionsService } from './dynamic-actions.service';

const bodyMap = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  return body as Record<string, unknown>;
};

/**
 * Mistral v2 `/v2/dynamic_actions`: JSON bodies; update is a PUT on the collection with `id` or
 * `name` in the body; get and delete by id or name (`?namespace=`).
 */
@Controller('v2/dynamic_actions')
export class DynamicActionsController {
  constructor(
    private readonly actions: DynamicActionsService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Post()
  @Authorize('dynamic_actions:create')
  @HttpCode(201)
  create(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    return this.actions.create(ctx, bodyMap(body));
  }

  @Put()
  @Authorize('dynamic_actions:update')
  update(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    return this.actions.update(ctx, bodyMap(body));
  }

  @Get()
  @Authorize('dynamic_actions:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    const list = parseRunList(DYNAMIC_ACTION_LIST, query, ctx, this.policy);
    const actions = (await this.actions.list(ctx, list)).map((a) => pickFields(a, list.fields));
    const next = runNextLink(requestBaseUrl(req), DYNAMIC_ACTION_LIST, list, actions);
    return next ? { dynamic_actions: actions, next } : { dynamic_actions: actions };
  }

  @Get(':identifier')
  @Authorize('dynamic_actions:get')
  get(@Ctx() ctx: RequestContext, @Param('identifier') identifier: string, @Query() query: QueryBag) {
    return this.actions.get(ctx, identifier, parseNamespaceParam(query));
  }

  @Delete(':identifier')
  @Authorize('dynamic_actions:delete')
  @HttpCode(204)
  async delete(
    @Ctx() ctx: RequestContext,
    @Param('identifier') identifier: string,
    @Query() query: QueryBag,
  ): Promise<void> {
    await this.actions.delete(ctx, identifier, parseNamespaceParam(query));
  }
}
