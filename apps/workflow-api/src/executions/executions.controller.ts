import {
  Body,
  Controller,
  Inject,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import {
  type QueryBag,
  checkKnownParams,
  invalidField,
  parseBool,
  queryValue,
} from '../definitions/query-values';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { TasksService } from '../tasks/tasks.service';
import { parseRunList, pickFields, runNextLink } from './run-list';
import { EXECUTION_FIELDS, EXECUTION_LIST, TASK_LIST } from './run-views';
import { ExecutionStateStream } from './execution-state-stream';
import { ExecutionsService } from './executions.service';
import { wantsStream } from './sse';

const intParam = (query: QueryBag, name: string, fallback: number): number => {
  const raw = queryValue(query, name);
  if (raw === undefined) return fallback;
  if (!/^\s*[+-]?\d+\s*$/.test(raw)) throw invalidField(name, raw, 'unable to convert to int');
  return Number.parseInt(raw, 10);
};

export const boolParam = (query: QueryBag, name: string): boolean => {
  const raw = queryValue(query, name);
  return raw !== undefined && parseBool(name, raw);
};

/** `errors_only`, `max_depth` and `include_output` of the sub-execution lists. */
export const subExecutionFilters = (query: QueryBag) => ({
  errorsOnly: boolParam(query, 'errors_only'),
  maxDepth: intParam(query, 'max_depth', -1),
  includeOutput: boolParam(query, 'include_output'),
});

const bodyMap = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  return body as Record<string, unknown>;
};

const singleFields = (query: QueryBag, all: readonly string[]): string[] => {
  const raw = queryValue(query, 'fields');
  if (raw === undefined) return [];
  const fields = raw
    .split(',')
    .map((f) => f.trim().toLowerCase())
    .filter(Boolean);
  const unknown = fields.filter((f) => !all.includes(f));
  if (unknown.length)
    throw new InvalidInputError(
      `Some fields do not exist  [${unknown.join(', ')}], please choose from [${all.join(', ')}]`,
    );
  if (fields.length && !fields.includes('id')) fields.unshift('id');
  return fields;
};

/** Mistral v2 `/v2/executions` (seed: Executions; workflow-api.md §5). */
@Controller('v2/executions')
export class ExecutionsController {
  constructor(
    private readonly executions: ExecutionsService,
    private readonly tasks: TasksService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
    private readonly stateStream: ExecutionStateStream,
  ) {}

  /** The list, or with `Accept: text/event-stream` the project's stream of execution state changes (our extension). */
  @Get()
  @Authorize('executions:list')
  async list(
    @Ctx() ctx: RequestContext,
    @Query() query: QueryBag,
    @Req() req: FastifyRequest,
    @Headers('accept') accept: string | undefined,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (wantsStream(accept)) return this.stateStream.open(ctx, query, lastEventId, req, reply);
    const list = parseRunList(EXECUTION_LIST, query, ctx, this.policy);
    const raw = queryValue(query, 'include_output');
    const includeOutput = raw !== undefined && parseBool('include_output', raw);
    const rows = await this.executions.list(list, includeOutput || list.fields.includes('output'));
    const executions = rows.map((r) => pickFields(r, list.fields));
    const next = runNextLink(requestBaseUrl(req), EXECUTION_LIST, list, executions);
    return next ? { executions, next } : { executions };
  }

  @Post()
  @Authorize('executions:create')
  @HttpCode(201)
  create(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    return this.executions.create(ctx, bodyMap(body));
  }

  @Get(':id')
  @Authorize('executions:get')
  async get(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['fields']);
    const fields = singleFields(query, EXECUTION_FIELDS);
    return pickFields(await this.executions.get(ctx, id), fields);
  }

  @Put(':id')
  @Authorize('executions:update')
  update(@Ctx() ctx: RequestContext, @Param('id') id: string, @Body() body: unknown) {
    return this.executions.update(ctx, id, bodyMap(body));
  }

  @Delete(':id')
  @Authorize('executions:delete')
  @HttpCode(204)
  async delete(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag): Promise<void> {
    checkKnownParams(query, ['force']);
    const raw = queryValue(query, 'force');
    await this.executions.delete(ctx, id, raw !== undefined && parseBool('force', raw));
  }

  @Get(':id/tasks')
  @Authorize('tasks:list')
  async tasksOf(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() query: QueryBag,
    @Req() req: FastifyRequest,
  ) {
    await this.executions.findRow(ctx, id);
    const spec = { ...TASK_LIST, scope: { column: 'workflow_execution_id', value: id } };
    const list = parseRunList(spec, query, ctx, this.policy);
    const tasks = (await this.tasks.list(spec, list)).map((t) => pickFields(t, list.fields));
    const next = runNextLink(requestBaseUrl(req), spec, list, tasks);
    return next ? { tasks, next } : { tasks };
  }

  // Mistral enforces no rule of its own on the sub-executions and the report.
  @Get(':id/executions')
  async subExecutions(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['errors_only', 'max_depth', 'include_output']);
    const execution = await this.executions.findRow(ctx, id);
    return { executions: await this.executions.subExecutions({ execution }, subExecutionFilters(query)) };
  }

  @Get(':id/report')
  report(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['errors_only', 'max_depth', 'statistics_only']);
    return this.executions.report(ctx, id, {
      errorsOnly: boolParam(query, 'errors_only'),
      maxDepth: intParam(query, 'max_depth', -1),
      statisticsOnly: boolParam(query, 'statistics_only'),
    });
  }
}
