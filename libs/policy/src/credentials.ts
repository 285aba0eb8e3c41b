import type { Credentials } from './enforcer';

/** The caller as the request context describes it (structurally a subset of http-common's RequestContext). */
export interface PolicySubjectContext {
  readonly userId: string | null;
  readonly projectId: string;
  readonly roles: readonly string[];
  readonly isAdmin: boolean;
  readonly userDomainId?: string | null;
  readonly projectDomainId?: string | null;
}

/**
 * Keystone's default implied roles (set up by `keystone-manage bootstrap`): admin implies member,
 * member implies reader. Keystone expands them into tokens; other auth modes (headers, noauth) get
 * the same expansion here so `role:reader` rules treat them alike.
 */
const IMPLIED: Readonly<Record<string, readonly string[]>> = {
  admin: ['member', 'reader'],
  member: ['reader'],
};

/** oslo.policy credentials of a caller. `is_admin_project` is True as keystonemiddleware sets it by default. */
export function credentialsOf(ctx: PolicySubjectContext): Credentials {
  const roles = new Set(ctx.roles.map((r) => r.toLowerCase()));
  for (const r of [...roles]) for (const implied of IMPLIED[r] ?? []) roles.add(implied);
  return Object.freeze({
    roles: [...roles],
    user_id: ctx.userId,
    project_id: ctx.projectId,
    is_admin: ctx.isAdmin,
    is_admin_project: true,
    user_domain_id: ctx.userDomainId ?? null,
    project_domain_id: ctx.projectDomainId ?? null,
    domain_id: null,
    system_scope: null,
  });
}
