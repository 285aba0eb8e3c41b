import {
  Body,
  Controller,
  Delete,
  Inject,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { type QueryBag, checkKnownParams, parseBool, queryValue } from '../definitions/query-values';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { ACTION_EXECUTION_LIST } from '../executions/run-views';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { ActionExecutionsService } from './action-executions.service';

/** Mistral v2 `/v2/action_executions` (workflow-api.md §5): list, show, run (POST), complete (PUT), delete. */
@Controller('v2/action_executions')
export class ActionExecutionsController {
  constructor(
    private readonly actions: ActionExecutionsService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('action_executions:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    const list = parseRunList(ACTION_EXECUTION_LIST, query, ctx, this.policy);
    const raw = queryValue(query, 'include_output');
    const rows = await this.actions.list(
      ACTION_EXECUTION_LIST,
      list,
      raw !== undefined && parseBool('include_output', raw),
    );
    const action_executions = rows.map((r) => pickFields(r, list.fields));
    const next = runNextLink(requestBaseUrl(req), ACTION_EXECUTION_LIST, list, action_executions);
    return next ? { action_executions, next } : { action_executions };
  }

  @Post()
  @HttpCode(201)
  @Authorize('action_executions:create')
  run(@Ctx() ctx: RequestContext, @Body() body: unknown, @Req() req: FastifyRequest) {
    return this.actions.run(ctx, body, requestBaseUrl(req));
  }

  @Get(':id')
  @Authorize('action_executions:get')
  async get(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['fields']);
    return this.actions.get(ctx, id);
  }

  @Put(':id')
  @Authorize('action_executions:update')
  update(@Ctx() ctx: RequestContext, @Param('id') id: string, @Body() body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new InvalidInputError('The request body must be a JSON object.');
    return this.actions.update(ctx, id, body as Record<string, unknown>);
  }

  @Delete(':id')
  @HttpCode(204)
  @Authorize('action_executions:delete')
  async delete(@Ctx() ctx: RequestContext, @Param('id') id: string): Promise<void> {
    await this.actions.delete(ctx, id);
  }
}
