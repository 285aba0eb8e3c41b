import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { InvalidInputError } from '@osc/errors';
import { Ctx, type RequestContext } from '@osc/http-common';
import { MEMBER_STATUSES, type MemberStatus } from '@osc/workflow-persistence';
import { invalidField } from '../definitions/query-values';
import { Authorize, WORKFLOW_POLICY } from '../policy/authorize';
import { WorkflowPolicy } from '../policy/workflow-policy';
import { MembersService } from './members.service';

/** The member fields a request body may carry (Mistral's `Member` resource). */
const MEMBER_FIELDS = [
  'id',
  'resource_id',
  'resource_type',
  'project_id',
  'member_id',
  'status',
  'created_at',
  'updated_at',
];

const bodyMap = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body))
    throw new InvalidInputError('The request body must be a JSON object.');
  const map = body as Record<string, unknown>;
  for (const key of Object.keys(map)) {
    if (!MEMBER_FIELDS.includes(key))
      throw new InvalidInputError(`Unknown attribute for argument member_info: ${key}`);
  }
  return map;
};

const textField = (map: Record<string, unknown>, name: string): string | undefined => {
  const v = map[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidField(name, JSON.stringify(v), 'Wrong type. Expected a string');
  return v;
};

/**
 * Mistral v2 `/v2/workflows/{id}/members` (workflow sharing; workflow-api.md §5). Mistral offers it
 * only with authentication enabled: in `noauth` mode every call is a 400.
 */
@Controller('v2/workflows/:workflowId/members')
export class MembersController {
  constructor(
    private readonly members: MembersService,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  @Get()
  @Authorize('members:list')
  async list(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Req() req: FastifyRequest,
  ) {
    this.checkAuthEnabled(req);
    return { members: await this.members.list(ctx, workflowId) };
  }

  @Post()
  @Authorize('members:create')
  @HttpCode(201)
  create(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    this.checkAuthEnabled(req);
    const memberId = textField(bodyMap(body), 'member_id');
    if (!memberId) throw new InvalidInputError('Member id must be provided.');
    return this.members.create(ctx, workflowId, memberId);
  }

  @Get(':memberId')
  @Authorize('members:get')
  get(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Param('memberId') memberId: string,
    @Req() req: FastifyRequest,
  ) {
    this.checkAuthEnabled(req);
    return this.members.get(ctx, workflowId, memberId);
  }

  @Put(':memberId')
  @Authorize('members:update')
  update(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Param('memberId') memberId: string,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
  ) {
    this.checkAuthEnabled(req);
    const status = textField(bodyMap(body), 'status');
    if (status !== undefined && !(MEMBER_STATUSES as readonly string[]).includes(status)) {
      throw invalidField('status', status, `Value should be one of: ${MEMBER_STATUSES.join(', ')}`);
    }
    if (!status) throw new InvalidInputError('Status must be provided.');
    return this.members.setStatus(ctx, workflowId, memberId, status as MemberStatus);
  }

  @Delete(':memberId')
  @Authorize('members:delete')
  @HttpCode(204)
  async delete(
    @Ctx() ctx: RequestContext,
    @Param('workflowId') workflowId: string,
    @Param('memberId') memberId: string,
    @Req() req: FastifyRequest,
  ): Promise<void> {
    this.checkAuthEnabled(req);
    await this.members.delete(ctx, workflowId, memberId);
  }

  /** Mistral refuses sharing with auth disabled, before looking at the request (a bare faultstring). */
  private checkAuthEnabled(req: FastifyRequest): void {
    if (this.policy.authMode !== 'noauth') return;
    req.mistralErrorShape = 'text';
    throw new InvalidInputError(
      'Resource sharing feature can only be supported with authentication enabled.',
    );
  }
}
