import { z } from 'zod';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  CRON_SCHEDULER_HEALTH_PORT: portSchema.default(9102),
  CRON_SCHEDULER_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
});

export interface CronSchedulerConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
}

export function loadConfig(env: Env): CronSchedulerConfig {
  const c = parseConfig('cron-scheduler', schema, env);
  return Object.freeze({ health: { port: c.CRON_SCHEDULER_HEALTH_PORT, host: c.CRON_SCHEDULER_HEALTH_HOST }, logLevel: c.LOG_LEVEL });
}

export const loadInfraConfig = (env: Env) => parseConfig('cron-scheduler', distributedInfraSchema, env);
