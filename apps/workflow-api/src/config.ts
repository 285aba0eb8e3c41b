import path from 'node:path';
import { z } from 'zod';
import type { PolicyRules } from '@osc/policy';
import {
  type AuthMode,
  type Env,
  type KeystoneSettings,
  authEnvSchema,
  distributedInfraSchema,
  loadPolicyOverrides,
  logLevelSchema,
  parseConfig,
  portSchema,
  toAuthConfig,
} from '@osc/http-common';

const schema = authEnvSchema.extend({
  WORKFLOW_API_PORT: portSchema.default(8989),
  WORKFLOW_API_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  /** Largest definition or JSON body accepted, in bytes (Mistral's size limit answers 400). */
  WORKFLOW_API_BODY_LIMIT: z.coerce
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024),
  /** Public URL clients use, for `next` links; default: from the request. */
  WORKFLOW_API_PUBLIC_URL: z.string().url().optional(),
  /** oslo.policy-style YAML (or JSON) file whose rules override Mistral's defaults. */
  WORKFLOW_API_POLICY_FILE: z.string().min(1).optional(),
  /** Mistral's `[api] allow_action_execution_deletion`: DELETE of completed standalone action executions. */
  WORKFLOW_API_ALLOW_ACTION_EXECUTION_DELETION: z.enum(['true', 'false']).default('false'),
  /** Register Mistral's standard workflows (create_instance, delete_instance) at start. */
  WORKFLOW_API_SYSTEM_WORKFLOWS: z.enum(['true', 'false']).default('true'),
  /** How often this process records its `api` instance for `GET /v2/services` (as the engine's heartbeat). */
  WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS: z.coerce.number().min(0.1).max(3600).default(10),
  /** `GET /v2/services` leaves out instances silent for longer (the engine's dead bound). */
  WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS: z.coerce.number().min(1).max(86400).default(120),
  /** Built operator console served at /console (default: the repository's `dist/console`). */
  CONSOLE_DIR: z.string().min(1).optional(),
  /** Block-storage API base URL as this process reaches it, for the console's block-storage pages. */
  CONSOLE_VOLUME_API_URL: z.string().url().optional(),
});

/**
 * Where `apps/console/tools/build.mjs` writes the console: `<repository>/dist/console`, reached
 * from this file's folder in the sources (`apps/workflow-api/src`) or from the bundle's
 * (`dist/apps/<app>`, where `npm start` runs it).
 */
export const DEFAULT_CONSOLE_DIR = consoleDirFrom(__dirname);

export function consoleDirFrom(dir: string): string {
  const bundled =
    path.basename(path.dirname(dir)) === 'apps' && path.basename(path.dirname(path.dirname(dir))) === 'dist';
  return path.resolve(dir, bundled ? '../../console' : '../../../dist/console');
}

export interface WorkflowApiConfig {
  readonly http: { port: number; host: string; bodyLimit: number; publicUrl?: string };
  readonly authMode: AuthMode;
  /** Set in keystone mode (AUTH_MODE=keystone, KEYSTONE_* variables). */
  readonly keystone?: KeystoneSettings;
  readonly logLevel: string;
  /** The deployment's policy rules (from `WORKFLOW_API_POLICY_FILE`) over Mistral's defaults; none: defaults. */
  readonly policyOverrides?: PolicyRules;
  /** `DELETE /v2/action_executions/{id}` allowed (default false: 403, as Mistral's default). */
  readonly allowActionExecutionDeletion?: boolean;
  /** Register the standard system workflows at start (on from the environment; off when absent). */
  readonly systemWorkflows?: boolean;
  /** `GET /v2/services`: this process's heartbeat and how long a silent instance is still listed. */
  readonly services?: { heartbeatSeconds: number; aliveWithinSeconds: number };
  /** The operator console at /console (absent: the repository's build, no block-storage pages). */
  readonly console?: { readonly dir: string; readonly volumeApiUrl?: string };
}

/** Settings of workflow-api; `infra` says whether DATABASE_URL/AMQP_URL/REDIS_URL are required. */
export function loadConfig(env: Env): WorkflowApiConfig {
  const c = parseConfig('workflow-api', schema, env);
  const auth = toAuthConfig('workflow-api', c);
  return Object.freeze({
    http: {
      port: c.WORKFLOW_API_PORT,
      host: c.WORKFLOW_API_HOST,
      bodyLimit: c.WORKFLOW_API_BODY_LIMIT,
      publicUrl: c.WORKFLOW_API_PUBLIC_URL,
    },
    authMode: auth.mode,
    keystone: auth.keystone,
    logLevel: c.LOG_LEVEL,
    policyOverrides: loadPolicyOverrides(
      'workflow-api',
      'WORKFLOW_API_POLICY_FILE',
      c.WORKFLOW_API_POLICY_FILE,
    ),
    allowActionExecutionDeletion: c.WORKFLOW_API_ALLOW_ACTION_EXECUTION_DELETION === 'true',
    systemWorkflows: c.WORKFLOW_API_SYSTEM_WORKFLOWS === 'true',
    services: {
      heartbeatSeconds: c.WORKFLOW_EXECUTOR_HEARTBEAT_SECONDS,
      aliveWithinSeconds: c.WORKFLOW_EXECUTOR_DEAD_AFTER_SECONDS,
    },
    console: {
      dir: c.CONSOLE_DIR ?? DEFAULT_CONSOLE_DIR,
      volumeApiUrl: c.CONSOLE_VOLUME_API_URL?.replace(/\/+$/, ''),
    },
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('workflow-api', distributedInfraSchema, env);
