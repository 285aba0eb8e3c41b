import {
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  Global,
  Inject,
  Injectable,
  Module,
  SetMetadata,
} from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { UnauthorizedError } from '@osc/errors';
import type { AuthMode, MistralErrorShape } from '@osc/http-common';
import type { PolicyRules } from '@osc/policy';
import { WorkflowPolicy } from './workflow-policy';

/** DI token of the app's {@link WorkflowPolicy}. */
export const WORKFLOW_POLICY = Symbol('WORKFLOW_POLICY');

interface AuthorizeMeta {
  readonly action: string;
  readonly errors: MistralErrorShape;
}

const AUTHORIZE = 'osc:workflow-policy-action';

/**
 * The policy rule a route enforces before anything else runs (Mistral's `acl.enforce` at the top of
 * each controller method). `errors: 'text'` for the YAML-body endpoints, whose errors are a bare
 * faultstring.
 */
export const Authorize = (action: string, errors: MistralErrorShape = 'wsme') =>
  SetMetadata(AUTHORIZE, { action, errors } satisfies AuthorizeMeta);

/** Enforces the route's {@link Authorize} rule for the caller of the request; routes without one pass. */
@Injectable()
export class PolicyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(WORKFLOW_POLICY) private readonly policy: WorkflowPolicy,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const meta = this.reflector.get<AuthorizeMeta | undefined>(AUTHORIZE, context.getHandler());
    if (!meta) return true;
    const req = context.switchToHttp().getRequest<FastifyRequest>();
    if (meta.errors === 'text') req.mistralErrorShape = 'text';
    if (!req.requestContext)
      throw new UnauthorizedError('The request you have made requires authentication.');
    this.policy.enforce(meta.action, req.requestContext);
    return true;
  }
}

/** What the app's starter says about policy: the deployment's overrides and the auth mode. */
export interface WorkflowPolicySettings {
  readonly overrides: PolicyRules;
  readonly authMode: AuthMode;
}

/** DI token of the {@link WorkflowPolicySettings}; absent → Mistral's defaults with auth enabled. */
export const WORKFLOW_POLICY_SETTINGS = Symbol('WORKFLOW_POLICY_SETTINGS');

/** Hands the starter's settings to {@link WorkflowPolicyModule}. */
@Global()
@Module({})
export class WorkflowPolicySettingsModule {
  static forRoot(settings: WorkflowPolicySettings): DynamicModule {
    return {
      module: WorkflowPolicySettingsModule,
      providers: [{ provide: WORKFLOW_POLICY_SETTINGS, useValue: settings }],
      exports: [WORKFLOW_POLICY_SETTINGS],
    };
  }
}

/** Provides the policy to every module of the app and installs the guard on every route. */
@Global()
@Module({
  providers: [
    {
      provide: WORKFLOW_POLICY,
      useFactory: (settings?: WorkflowPolicySettings) =>
        new WorkflowPolicy(settings?.overrides ?? {}, settings?.authMode ?? 'keystone'),
      inject: [{ token: WORKFLOW_POLICY_SETTINGS, optional: true }],
    },
    { provide: APP_GUARD, useClass: PolicyGuard },
  ],
  exports: [WORKFLOW_POLICY],
})
export class WorkflowPolicyModule {}
