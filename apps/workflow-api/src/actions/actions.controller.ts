import {
  Body,
  Controller,
  Inject,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { ACTION_DEFINITIONS } from '@osc/workflow-persistence';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { type ListSpec, listBody, nextLink, parseListRequest } from '../definitions/list-params';
import type { QueryBag } from '../definitions/query-values';
import { definitionText, parseNamespaceParam, parseUploadParams } from '../definitions/upload-params';
import { ActionsService } from './actions.service';

export const ACTION_LIST: ListSpec = {
  collection: 'actions',
  table: ACTION_DEFINITIONS,
  filters: [
    'created_at',
    'name',
    'scope',
    'tags',
    'updated_at',
    'description',
    'definition',
    'is_system',
    'input',
    'namespace',
  ],
  defaultSortKey: 'name',
  adminFilters: false,
  implicitFilters: { namespace: '' },
  policy: 'actions',
};

/** Mistral v2 `/v2/actions`: ad-hoc actions (YAML) plus the read-only standard actions. */
@Controller('v2/actions')
export class ActionsController {
  constructor(
    private readonly actions: ActionsService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('actions:list')
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const list = parseListRequest(ACTION_LIST, query, ctx, this.policy);
    const page = await this.actions.list(list);
    void reply.type('application/json; charset=utf-8');
    return listBody(ACTION_LIST, page, nextLink(requestBaseUrl(req), ACTION_LIST, list, page));
  }

  @Post()
  @Authorize('actions:create', 'text')
  @HttpCode(201)
  async create(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'actions', skipValidation: false });
    return { actions: await this.actions.create(ctx, definitionText(body), params) };
  }

  @Put()
  @Authorize('actions:update', 'text')
  async updateAll(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'actions', skipValidation: false });
    return { actions: await this.actions.update(ctx, definitionText(body), params) };
  }

  @Post('validate')
  @HttpCode(200)
  validate(@Body() body: unknown, @Query() query: QueryBag) {
    parseNamespaceParam(query);
    return this.actions.validate(definitionText(body));
  }

  @Get(':identifier')
  @Authorize('actions:get')
  get(@Ctx() ctx: RequestContext, @Param('identifier') identifier: string, @Query() query: QueryBag) {
    return this.actions.get(ctx, identifier, parseNamespaceParam(query));
  }

  @Put(':identifier')
  @Authorize('actions:update', 'text')
  async updateOne(
    @Ctx() ctx: RequestContext,
    @Param('identifier') identifier: string,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'actions', skipValidation: false });
    return { actions: await this.actions.update(ctx, definitionText(body), params, identifier) };
  }

  @Delete(':identifier')
  @Authorize('actions:delete')
  @HttpCode(204)
  async delete(
    @Ctx() ctx: RequestContext,
    @Param('identifier') identifier: string,
    @Query() query: QueryBag,
  ): Promise<void> {
    await this.actions.delete(ctx, identifier, parseNamespaceParam(query));
  }
}
