import { type AuthMode, type RequestContext } from '@osc/http-common';
import {
  type PolicyEnforcer,
  type PolicyRules,
  type Target,
  credentialsOf,
  mistralPolicy,
} from '@osc/policy';

/**
 * The workflow service's authorisation: Mistral's default policy overlaid by the deployment's file
 * (`WORKFLOW_API_POLICY_FILE`). Mistral's `acl.enforce` judges an action against a target holding the
 * caller's own project and user unless the call names another owner, so the default
 * `admin_or_owner` rules pass for every authenticated caller and the admin-only ones
 * (`*:publicize`, `*:list:all_projects`) decide; a deployment may tighten any rule.
 */
export class WorkflowPolicy {
  private readonly enforcer: PolicyEnforcer;

  constructor(
    overrides: PolicyRules,
    /** Mistral with `[pecan] auth_enable = false` (our `noauth`) refuses resource sharing. */
    readonly authMode: AuthMode,
  ) {
    this.enforcer = mistralPolicy(overrides);
  }

  /** Throws Mistral's 403 (`Operation forbidden (insufficient permissions)`) unless `action` is allowed. */
  enforce(action: string, ctx: RequestContext, target: Target = {}): void {
    this.enforcer.enforce(action, this.targetOf(ctx, target), credentialsOf(ctx));
  }

  /** Whether `action` is allowed, without throwing. */
  allows(action: string, ctx: RequestContext, target: Target = {}): boolean {
    return this.enforcer.check(action, this.targetOf(ctx, target), credentialsOf(ctx));
  }

  private targetOf(ctx: RequestContext, target: Target): Target {
    return { project_id: ctx.projectId, user_id: ctx.userId, ...target };
  }
}
