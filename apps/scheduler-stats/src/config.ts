import { z } from 'zod';
import type { PlacementConfig } from './placement/placement.service';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  SCHEDULER_STATS_HEALTH_PORT: portSchema.default(9103),
  SCHEDULER_STATS_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  SCHEDULER_CAPACITY_WEIGHT_MULTIPLIER: z.coerce.number().default(1),
  VOLUME_SERVICE_DOWN_SECONDS: z.coerce.number().int().min(1).default(180),
  SCHEDULER_PREFETCH: z.coerce.number().int().min(1).max(1000).default(32),
});

export interface SchedulerStatsConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
  readonly placement: PlacementConfig;
}

export function loadConfig(env: Env): SchedulerStatsConfig {
  const c = parseConfig('scheduler-stats', schema, env);
  return Object.freeze({
    health: { port: c.SCHEDULER_STATS_HEALTH_PORT, host: c.SCHEDULER_STATS_HEALTH_HOST },
    logLevel: c.LOG_LEVEL,
    placement: Object.freeze({
      capacityWeightMultiplier: c.SCHEDULER_CAPACITY_WEIGHT_MULTIPLIER,
      serviceDownSeconds: c.VOLUME_SERVICE_DOWN_SECONDS,
      prefetch: c.SCHEDULER_PREFETCH,
    }),
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('scheduler-stats', distributedInfraSchema, env);
