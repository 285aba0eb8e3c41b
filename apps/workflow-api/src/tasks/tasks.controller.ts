import { Body, Controller, Inject, Get, Param, Put, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { type QueryBag, checkKnownParams, queryValue } from '../definitions/query-values';
import { ActionExecutionsService } from '../action-executions/action-executions.service';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { ACTION_EXECUTION_LIST, EXECUTION_LIST, TASK_FIELDS, TASK_LIST } from '../executions/run-views';
import { ExecutionsService } from '../executions/executions.service';
import { subExecutionFilters } from '../executions/executions.controller';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { TasksService } from './tasks.service';

/** Mistral v2 `/v2/tasks` (seed: Tasks). */
@Controller('v2/tasks')
export class TasksController {
  constructor(
    private readonly tasks: TasksService,
    private readonly actions: ActionExecutionsService,
    private readonly executions: ExecutionsService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('tasks:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    const list = parseRunList(TASK_LIST, query, ctx, this.policy);
    const tasks = (await this.tasks.list(TASK_LIST, list)).map((t) => pickFields(t, list.fields));
    const next = runNextLink(requestBaseUrl(req), TASK_LIST, list, tasks);
    return next ? { tasks, next } : { tasks };
  }

  @Get(':id')
  @Authorize('tasks:get')
  async get(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['fields']);
    const raw = queryValue(query, 'fields');
    const fields =
      raw === undefined
        ? []
        : raw
            .split(',')
            .map((f) => f.trim().toLowerCase())
            .filter(Boolean);
    const unknown = fields.filter((f) => !(TASK_FIELDS as readonly string[]).includes(f));
    if (unknown.length) {
      throw new InvalidInputError(
        `Some fields do not exist  [${unknown.join(', ')}], please choose from [${TASK_FIELDS.join(', ')}]`,
      );
    }
    if (fields.length && !fields.includes('id')) fields.unshift('id');
    return pickFields(await this.tasks.get(ctx, id), fields);
  }

  @Put(':id')
  @Authorize('tasks:update')
  update(@Ctx() ctx: RequestContext, @Param('id') id: string, @Body() body: unknown) {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      throw new InvalidInputError('The request body must be a JSON object.');
    return this.tasks.update(ctx, id, body as Record<string, unknown>);
  }

  @Get(':id/action_executions')
  @Authorize('action_executions:list')
  async actionsOf(
    @Ctx() ctx: RequestContext,
    @Param('id') id: string,
    @Query() query: QueryBag,
    @Req() req: FastifyRequest,
  ) {
    // Mistral filters by the task id without looking the task up: another project's task lists nothing.
    const spec = { ...ACTION_EXECUTION_LIST, scope: { column: 'task_execution_id', value: id } };
    const list = parseRunList(spec, query, ctx, this.policy);
    const raw = queryValue(query, 'include_output');
    const action_executions = (
      await this.actions.list(spec, list, raw !== undefined && raw.toLowerCase() === 'true')
    ).map((a) => pickFields(a, list.fields));
    const next = runNextLink(requestBaseUrl(req), spec, list, action_executions);
    return next ? { action_executions, next } : { action_executions };
  }

  @Get(':id/workflow_executions')
  @Authorize('executions:list')
  async subExecutions(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    // As for action executions: a filter on the task id, no lookup of the task (Mistral).
    const spec = { ...EXECUTION_LIST, scope: { column: 'task_execution_id', value: id } };
    const list = parseRunList(spec, query, ctx, this.policy);
    const executions = (await this.executions.list(list, false)).map((e) => pickFields(e, list.fields));
    return { executions };
  }

  /** The sub-executions the task started and their descendants (same filters as for an execution). */
  @Get(':id/executions')
  async executionsOf(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['errors_only', 'max_depth', 'include_output']);
    const task = await this.tasks.findRow(ctx, id);
    return { executions: await this.executions.subExecutions({ task }, subExecutionFilters(query)) };
  }
}
