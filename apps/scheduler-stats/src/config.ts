import { z } from 'zod';
import type { PlacementConfig } from './placement/placement.service';
import type { ReconcileConfig } from './reconcile/reconcile-pass';
import { type Env, distributedInfraSchema, logLevelSchema, parseConfig, portSchema } from '@osc/http-common';

const schema = z.object({
  /** Port of /healthz, /readyz and /metrics when this app runs on its own. */
  SCHEDULER_STATS_HEALTH_PORT: portSchema.default(9103),
  SCHEDULER_STATS_HEALTH_HOST: z.string().default('0.0.0.0'),
  LOG_LEVEL: logLevelSchema,
  SCHEDULER_CAPACITY_WEIGHT_MULTIPLIER: z.coerce.number().default(1),
  VOLUME_SERVICE_DOWN_SECONDS: z.coerce.number().int().min(1).default(180),
  SCHEDULER_PREFETCH: z.coerce.number().int().min(1).max(1000).default(32),
  /** Seconds between reconciler passes (issue #15); 0 turns the reconciler off. */
  BLOCK_STORAGE_RECONCILE_INTERVAL_SECONDS: z.coerce.number().min(0).max(86400).default(60),
  /** A volume, snapshot, backup or group idle this long in a transitional status has lost its work. */
  BLOCK_STORAGE_STUCK_AFTER_SECONDS: z.coerce
    .number()
    .min(0.1)
    .max(30 * 86400)
    .default(300),
  /** Times the reconciler queues a row's lost job again before ending the row in error instead. */
  BLOCK_STORAGE_RECONCILE_MAX_RESUMES: z.coerce.number().int().min(0).max(100).default(1),
  /** Rows per resource kind one pass looks at. */
  BLOCK_STORAGE_RECONCILE_BATCH: z.coerce.number().int().min(1).max(10000).default(200),
});

export interface SchedulerStatsConfig {
  readonly health: { port: number; host: string };
  readonly logLevel: string;
  readonly placement: PlacementConfig;
  readonly reconcile: ReconcileConfig;
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
    reconcile: Object.freeze({
      intervalSeconds: c.BLOCK_STORAGE_RECONCILE_INTERVAL_SECONDS,
      stuckAfterSeconds: c.BLOCK_STORAGE_STUCK_AFTER_SECONDS,
      serviceDownSeconds: c.VOLUME_SERVICE_DOWN_SECONDS,
      maxResumes: c.BLOCK_STORAGE_RECONCILE_MAX_RESUMES,
      batchSize: c.BLOCK_STORAGE_RECONCILE_BATCH,
    }),
  });
}

export const loadInfraConfig = (env: Env) => parseConfig('scheduler-stats', distributedInfraSchema, env);
