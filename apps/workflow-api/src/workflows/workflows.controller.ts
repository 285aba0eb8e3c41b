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
import { WORKFLOW_DEFINITIONS } from '@osc/workflow-persistence';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { type ListSpec, listBody, nextLink, parseListRequest } from '../definitions/list-params';
import { parseSingleFields } from '../definitions/single-fields';
import { definitionText, parseNamespaceParam, parseUploadParams } from '../definitions/upload-params';
import type { QueryBag } from '../definitions/query-values';
import { WorkflowsService } from './workflows.service';

export const WORKFLOW_LIST: ListSpec = {
  collection: 'workflows',
  table: WORKFLOW_DEFINITIONS,
  filters: ['created_at', 'name', 'scope', 'tags', 'updated_at', 'input', 'definition', 'namespace'],
  defaultSortKey: 'created_at',
  adminFilters: true,
  policy: 'workflows',
};

/** Mistral v2 `/v2/workflows`: YAML uploads in, JSON out (workflow-api.md §5). */
@Controller('v2/workflows')
export class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowsService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('workflows:list')
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const list = parseListRequest(WORKFLOW_LIST, query, ctx, this.policy);
    const page = await this.workflows.list(list);
    void reply.type('application/json; charset=utf-8');
    return listBody(WORKFLOW_LIST, page, nextLink(requestBaseUrl(req), WORKFLOW_LIST, list, page));
  }

  @Post()
  @Authorize('workflows:create', 'text')
  @HttpCode(201)
  async create(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'workflows', skipValidation: true });
    return { workflows: await this.workflows.create(ctx, definitionText(body), params) };
  }

  @Put()
  @Authorize('workflows:update', 'text')
  async updateAll(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'workflows', skipValidation: true });
    return { workflows: await this.workflows.update(ctx, definitionText(body), params) };
  }

  @Post('validate')
  @HttpCode(200)
  validate(@Body() body: unknown, @Query() query: QueryBag) {
    parseNamespaceParam(query);
    return this.workflows.validate(definitionText(body));
  }

  @Get(':identifier')
  @Authorize('workflows:get')
  get(@Ctx() ctx: RequestContext, @Param('identifier') identifier: string, @Query() query: QueryBag) {
    const namespace = parseNamespaceParam(query, ['fields']);
    return this.workflows.get(ctx, identifier, namespace, parseSingleFields(WORKFLOW_DEFINITIONS, query));
  }

  @Put(':identifier')
  @Authorize('workflows:update', 'text')
  async updateOne(
    @Ctx() ctx: RequestContext,
    @Param('identifier') identifier: string,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'workflows', skipValidation: true });
    const [workflow] = await this.workflows.update(ctx, definitionText(body), params, identifier);
    return workflow;
  }

  @Delete(':identifier')
  @Authorize('workflows:delete')
  @HttpCode(204)
  async delete(
    @Ctx() ctx: RequestContext,
    @Param('identifier') identifier: string,
    @Query() query: QueryBag,
  ): Promise<void> {
    await this.workflows.delete(ctx, identifier, parseNamespaceParam(query));
  }
}
