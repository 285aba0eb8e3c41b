import { z } from 'zod';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  CRON_SCHEDULER_HEALTH_PORT: portSchema.default(9102),
  CRON_SCHEDULER_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  /** Triggers fired per transaction. */
  CRON_SCHEDULER_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  /** Longest sleep between looks at the table: triggers created by the API are picked up within it. */
  CRON_SCHEDULER_MAX_SLEEP_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** Sleep while due triggers are held by another replica, or after a database error. */
  CRON_SCHEDULER_BUSY_SLEEP_MS: z.coerce.number().int().min(1).max(10_000).default(50),
});

export interface CronSchedulerConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
  readonly firing: { batchSize: number; maxSleepMs: number; busySleepMs: number };
}

/** Defaults of the firing settings (for callers building a config by hand, e.g. the embedded launcher). */
export const DEFAULT_FIRING: CronSchedulerConfig['firing'] = Object.freeze({ batchSize: 100, maxSleepMs: 500, busySleepMs: 50 });

export function loadConfig(env: Env): CronSchedulerConfig {
  const c = parseConfig('cron-scheduler', schema, env);
  return Object.freeze({
    health: { port: c.CRON_SCHEDULER_HEALTH_PORT, host: c.CRON_SCHEDULER_HEALTH_HOST },
    logLevel: c.LOG_LEVEL,
    firing: { batchSize: c.CRON_SCHEDULER_BATCH_SIZE, maxSleepMs: c.CRON_SCHEDULER_MAX_SLEEP_MS, busySleepMs: c.CRON_SCHEDULER_BUSY_SLEEP_MS },
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('cron-scheduler', distributedInfraSchema, env);
