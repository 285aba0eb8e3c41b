import { z } from 'zod';
import { type Env, authModeSchema, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

const schema = z.object({
  WORKFLOW_API_PORT: portSchema.default(8989),
  WORKFLOW_API_HOST: z.string().default('0.0.0.0'),
  AUTH_MODE: authModeSchema,
  LOG_LEVEL: logLevelSchema,
  /** Largest definition or JSON body accepted, in bytes (Mistral's size limit answers 400). */
  WORKFLOW_API_BODY_LIMIT: z.coerce.number().int().min(1024).default(1024 * 1024),
  /** Public URL clients use, for `next` links; default: from the request. */
  WORKFLOW_API_PUBLIC_URL: z.string().url().optional(),
});

export interface WorkflowApiConfig {
  readonly http: { port: number; host: string; bodyLimit: number; publicUrl?: string };
  readonly authMode: 'noauth' | 'headers';
  readonly logLevel: string;
}

/** Settings of workflow-api; `infra` says whether DATABASE_URL/AMQP_URL/REDIS_URL are required. */
export function loadConfig(env: Env): WorkflowApiConfig {
  const c = parseConfig('workflow-api', schema, env);
  return Object.freeze({
    http: { port: c.WORKFLOW_API_PORT, host: c.WORKFLOW_API_HOST, bodyLimit: c.WORKFLOW_API_BODY_LIMIT, publicUrl: c.WORKFLOW_API_PUBLIC_URL },
    authMode: c.AUTH_MODE,
    logLevel: c.LOG_LEVEL,
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('workflow-api', distributedInfraSchema, env);
