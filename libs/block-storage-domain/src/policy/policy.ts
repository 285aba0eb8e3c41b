import { ForbiddenError } from '@osc/errors';

/**
 * Policy as data (BS-2.4–2.6, BS-2.9): each rule names who may act. `admin` = role admin;
 * `member` = admin or a member of the owning project; `reader` = admin or reader/member of it.
 * Operators may override entries (the app passes the merged table).
 */
export type PolicyCheck = 'admin' | 'member' | 'reader';

export const DEFAULT_POLICY: Readonly<Record<string, PolicyCheck>> = {
  'volume:create': 'member',
  'volume:get': 'reader',
  'volume:get_all': 'reader',
  'volume:update': 'member',
  'volume:delete': 'member',
  'volume:force_delete': 'admin',
  'volume:extend': 'member',
  'volume:get_all_tenants': 'admin',
  'volume_extension:volume_admin_actions:reset_status': 'admin',
  'volume_extension:volume_admin_actions:force_delete': 'admin',
  'volume:create_volume_metadata': 'member',
  'volume:get_volume_metadata': 'reader',
  'volume:update_volume_metadata': 'member',
  'volume:delete_volume_metadata': 'member',
  'volume_extension:types_manage': 'admin',
  'volume_extension:types_extra_specs:create': 'admin',
  'volume_extension:types_extra_specs:update': 'admin',
  'volume_extension:types_extra_specs:delete': 'admin',
  'volume_extension:types_extra_specs:index': 'reader',
  'volume_extension:types_extra_specs:show': 'reader',
  'volume_extension:volume_type_encryption': 'admin',
  'volume_extension:volume_type_access:addProjectAccess': 'admin',
  'volume_extension:volume_type_access:removeProjectAccess': 'admin',
  'volume_extension:volume_type_access:get_all_for_type': 'admin',
  'volume_extension:default_set_or_update': 'admin',
  'volume_extension:default_get': 'admin',
  'volume_extension:default_get_all': 'admin',
  'volume_extension:default_unset': 'admin',
  'volume_extension:quotas:show': 'reader',
  'volume_extension:quotas:update': 'admin',
  'volume_extension:quotas:delete': 'admin',
  'scheduler_extension:scheduler_stats:get_pools': 'admin',
  'volume_extension:capabilities': 'admin',
  'volume:create_snapshot': 'member',
  'volume:get_snapshot': 'reader',
  'volume:get_all_snapshots': 'reader',
  'volume:update_snapshot': 'member',
  'volume:delete_snapshot': 'member',
  'volume_extension:snapshot_admin_actions:reset_status': 'admin',
  'volume_extension:snapshot_admin_actions:force_delete': 'admin',
};

export interface PolicySubject {
  readonly projectId: string;
  readonly roles: readonly string[];
  readonly isAdmin: boolean;
}

/** Whether `subject` passes `rule` against a target owned by `targetProject` (default: its own project). */
export function isAllowed(rule: string, subject: PolicySubject, targetProject: string = subject.projectId, policy: Readonly<Record<string, PolicyCheck>> = DEFAULT_POLICY): boolean {
  if (subject.isAdmin) return true;
  const check = policy[rule] ?? 'admin';
  if (check === 'admin') return false;
  if (targetProject !== subject.projectId) return false;
  const roles = subject.roles.map((r) => r.toLowerCase());
  if (check === 'member') return roles.includes('member');
  return roles.includes('reader') || roles.includes('member');
}

/** Throws a 403 naming the denied rule (BS-2.6). */
export function authorize(rule: string, subject: PolicySubject, targetProject?: string, policy?: Readonly<Record<string, PolicyCheck>>): void {
  if (!isAllowed(rule, subject, targetProject, policy)) throw new ForbiddenError(`Policy doesn't allow ${rule} to be performed.`);
}
