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
import { WORKBOOKS } from '@osc/workflow-persistence';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { type ListSpec, listBody, nextLink, parseListRequest } from '../definitions/list-params';
import type { QueryBag } from '../definitions/query-values';
import { parseSingleFields } from '../definitions/single-fields';
import { definitionText, parseNamespaceParam, parseUploadParams } from '../definitions/upload-params';
import { WorkbooksService } from './workbooks.service';

export const WORKBOOK_LIST: ListSpec = {
  collection: 'workbooks',
  table: WORKBOOKS,
  filters: ['created_at', 'definition', 'name', 'scope', 'tags', 'updated_at', 'namespace'],
  defaultSortKey: 'created_at',
  adminFilters: false,
  policy: 'workbooks',
};

/** Mistral v2 `/v2/workbooks`: the workbook object itself (not wrapped) on POST/PUT/GET. */
@Controller('v2/workbooks')
export class WorkbooksController {
  constructor(
    private readonly workbooks: WorkbooksService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('workbooks:list')
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Req() req: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    const list = parseListRequest(WORKBOOK_LIST, query, ctx, this.policy);
    const page = await this.workbooks.list(list);
    void reply.type('application/json; charset=utf-8');
    return listBody(WORKBOOK_LIST, page, nextLink(requestBaseUrl(req), WORKBOOK_LIST, list, page));
  }

  @Post()
  @Authorize('workbooks:create', 'text')
  @HttpCode(201)
  create(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'workbooks', skipValidation: true });
    return this.workbooks.create(ctx, definitionText(body), params);
  }

  @Put()
  @Authorize('workbooks:update', 'text')
  update(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    req.mistralErrorShape = 'text';
    const params = parseUploadParams(query, ctx, this.policy, { policy: 'workbooks', skipValidation: true });
    return this.workbooks.update(ctx, definitionText(body), params);
  }

  @Post('validate')
  @HttpCode(200)
  validate(@Body() body: unknown, @Query() query: QueryBag) {
    parseNamespaceParam(query);
    return this.workbooks.validate(definitionText(body));
  }

  @Get(':name')
  @Authorize('workbooks:get')
  get(@Ctx() ctx: RequestContext, @Param('name') name: string, @Query() query: QueryBag) {
    const namespace = parseNamespaceParam(query, ['fields']);
    return this.workbooks.get(ctx, name, namespace, parseSingleFields(WORKBOOKS, query));
  }

  @Delete(':name')
  @Authorize('workbooks:delete')
  @HttpCode(204)
  async delete(
    @Ctx() ctx: RequestContext,
    @Param('name') name: string,
    @Query() query: QueryBag,
  ): Promise<void> {
    await this.workbooks.delete(ctx, name, parseNamespaceParam(query));
  }
}
