import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext, requestBaseUrl } from '@osc/http-common';
import { type QueryBag, checkKnownParams, invalidField, queryValue } from '../definitions/query-values';
import { parseRunList, pickFields, runNextLink } from '../executions/run-list';
import { CRON_TRIGGER_FIELDS, CRON_TRIGGER_LIST } from './cron-trigger.views';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { CronTriggersService } from './cron-triggers.service';

const bodyMap = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  return body as Record<string, unknown>;
};

const singleFields = (query: QueryBag): string[] => {
  const raw = queryValue(query, 'fields');
  if (raw === undefined) return [];
  const all: readonly string[] = CRON_TRIGGER_FIELDS;
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

/** `remaining_executions` filters an integer column: its values (after an operator) must be integers. */
const checkCountFilter = (query: QueryBag): void => {
  const raw = queryValue(query, 'remaining_executions');
  if (raw === undefined) return;
  const value = raw.replace(/^(eq|neq|gt|gte|lt|lte|in|nin|has):/, '');
  for (const v of value.split(','))
    if (!/^\s*[+-]?\d+\s*$/.test(v))
      throw invalidField('remaining_executions', raw, 'unable to convert to int');
};

/** Mistral v2 `/v2/cron_triggers` (seed: Cron triggers). There is no update. */
@Controller('v2/cron_triggers')
export class CronTriggersController {
  constructor(
    private readonly triggers: CronTriggersService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('cron_triggers:list')
  async list(@Ctx() ctx: RequestContext, @Query() query: QueryBag, @Req() req: FastifyRequest) {
    checkCountFilter(query);
    const list = parseRunList(CRON_TRIGGER_LIST, query, ctx, this.policy);
    const cron_triggers = (await this.triggers.list(list)).map((t) => pickFields(t, list.fields));
    const next = runNextLink(requestBaseUrl(req), CRON_TRIGGER_LIST, list, cron_triggers);
    return next ? { cron_triggers, next } : { cron_triggers };
  }

  @Post()
  @Authorize('cron_triggers:create')
  @HttpCode(201)
  create(@Ctx() ctx: RequestContext, @Body() body: unknown) {
    const values = bodyMap(body);
    if (values['scope'] === 'public') this.policy.enforce('cron_triggers:publicize', ctx);
    return this.triggers.create(ctx, values);
  }

  @Get(':identifier')
  @Authorize('cron_triggers:get')
  async get(@Ctx() ctx: RequestContext, @Param('identifier') identifier: string, @Query() query: QueryBag) {
    checkKnownParams(query, ['fields']);
    return pickFields(await this.triggers.get(ctx, identifier), singleFields(query));
  }

  @Delete(':identifier')
  @Authorize('cron_triggers:delete')
  @HttpCode(204)
  async delete(@Ctx() ctx: RequestContext, @Param('identifier') identifier: string): Promise<void> {
    await this.triggers.delete(ctx, identifier);
  }
}
