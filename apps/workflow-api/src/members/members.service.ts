import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ConflictError, InvalidInputError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '@osc/http-common';
import { CLOCK, type Clock, DATA_SOURCE } from '@osc/platform';
import { runInTransaction } from '@osc/persistence';
import {
  type MemberRow,
  type MemberStatus,
  WORKFLOW_DEFINITIONS,
  deleteMember,
  findDefinition,
  findMember,
  insertMember,
  listMembers,
  toSeconds,
  updateMemberStatus,
} from '@osc/workflow-persistence';
import { visibilityOf } from '../definitions/access';
import { isUuid } from '../definitions/list-params';
import { workflowNotFound } from '../workflows/workflows.service';

const memberNotFound = (resourceId: string, memberId: string) =>
  new NotFoundError(
    'ResourceMember',
    memberId,
    `Resource member not found [resource_id=${resourceId}, member_id=${memberId}]`,
  );

/**
 * Sharing of private workflows with other projects (Mistral's resource members). The owner adds
 * and removes members; a member project accepts or rejects; an accepted member then sees and runs
 * the workflow (the definitions store's visibility includes accepted shares). Owner and member both
 * read the membership; nobody else learns it exists.
 */
@Injectable()
export class MembersService {
  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  list(ctx: RequestContext, workflowId: string): Promise<MemberRow[]> {
    return listMembers(this.db, workflowId, ctx.projectId);
  }

  async get(ctx: RequestContext, workflowId: string, memberId: string): Promise<MemberRow> {
    const row = await findMember(this.db, workflowId, memberId, ctx.projectId);
    if (!row) throw memberNotFound(workflowId, memberId);
    return row;
  }

  /**
   * Shares a private workflow the caller owns (an admin may share any) as `pending`. A workflow the
   * caller cannot see, or only sees as a member or as public, is "not found" to it, as in Mistral
   * when a member tries to pass a share on.
   */
  async create(ctx: RequestContext, workflowId: string, memberId: string): Promise<MemberRow> {
    const now = toSeconds(this.clock.now()).toISOString();
    return runInTransaction(this.db, async (em) => {
      const wf = isUuid(workflowId)
        ? await findDefinition(em, WORKFLOW_DEFINITIONS, {
            identifier: workflowId,
            identifierIsId: true,
            namespaces: [],
            visibility: visibilityOf(ctx),
            callerProjectId: ctx.projectId,
            fields: ['id', 'project_id', 'scope'],
          })
        : null;
      if (!wf || (wf.scope === 'private' && !ctx.isAdmin && wf.project_id !== ctx.projectId)) {
        throw workflowNotFound(workflowId, '');
      }
      if (wf.scope !== 'private') throw new InvalidInputError('Only private resource could be shared.');
      const row = await insertMember(em, {
        resourceId: String(wf.id),
        projectId: String(wf.project_id),
        memberId,
        now,
      });
      if (!row) {
        throw new ConflictError(
          `Duplicate entry for ResourceMember ['resource_id', 'resource_type', 'member_id']: ${String(wf.id)}, workflow, ${memberId}`,
        );
      }
      return row;
    });
  }

  /** Only the member project itself answers a share (the owner gets "not found", as in Mistral). */
  async setStatus(
    ctx: RequestContext,
    workflowId: string,
    memberId: string,
    status: MemberStatus,
  ): Promise<MemberRow> {
    if (memberId !== ctx.projectId) throw memberNotFound(workflowId, memberId);
    const row = await updateMemberStatus(this.db, {
      resourceId: workflowId,
      memberId,
      status,
      now: toSeconds(this.clock.now()).toISOString(),
    });
    if (!row) throw memberNotFound(workflowId, memberId);
    return row;
  }

  /** Only the owner removes a member. */
  async delete(ctx: RequestContext, workflowId: string, memberId: string): Promise<void> {
    if (!(await deleteMember(this.db, workflowId, memberId, ctx.projectId)))
      throw memberNotFound(workflowId, memberId);
  }
}
