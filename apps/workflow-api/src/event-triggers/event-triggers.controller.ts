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
import { type QueryBag, checkKnownParams, queryValue } from '../definitions/query-values';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { EVENT_TRIGGER_FIELDS, EVENT_TRIGGER_LIST } from './event-trigger.views';
import { EventTriggersService } from './event-triggers.service';

const bodyMap = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  return body as Record<string, unknown>;
};

const singleFields = (query: QueryBag): string[] => {
  const raw = queryValue(query, 'fields');
  if (raw === undefined) return [];
  const all: readonly string[] = EVENT_TRIGGER_FIELDS;
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

/** Mistral v2 `/v2/event_triggers`: create, list, show, update (workflow side only), delete. */
@Controller('v2/event_triggers')
export class EventTriggersController {
  constructor(
    private readonly triggers: EventTriggersService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('event_triggers:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    const list = parseRunList(EVENT_TRIGGER_LIST, query, ctx, this.policy);
    const event_triggers = (await this.triggers.list(ctx, list)).map((t) => pickFields(t, list.fields));
    const next = runNextLink(requestBaseUrl(req), EVENT_TRIGGER_LIST, list, event_triggers);
    return next ? { event_triggers, next } : { event_triggers };
  }

  @Post()
  @Authorize('event_triggers:create')
  @HttpCode(201)
  create(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    return this.triggers.create(ctx, bodyMap(body));
  }

  @Get(':id')
  @Authorize('event_triggers:get')
  async get(@Ctx() ctx: RequestContext, @Param('id') id: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['fields']);
    return pickFields(await this.triggers.get(ctx, id), singleFields(query));
  }

  @Put(':id')
  @Authorize('event_triggers:update')
  update(@Ctx() ctx: RequestContext, @Param('id') id: string, @Body() body: unknown) {
    return this.triggers.update(ctx, id, bodyMap(body));
  }

  @Delete(':id')
  @Authorize('event_triggers:delete')
  @HttpCode(204)
  async delete(@Ctx() ctx: RequestContext, @Param('id') id: string): Promise<void> {
    await this.triggers.delete(ctx, id);
  }
}
