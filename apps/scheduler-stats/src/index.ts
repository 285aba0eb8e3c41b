import { type Runtime, type RunningApp, startBackgroundApp } from '@osc/platform';
import type { SchedulerStatsConfig } from './config';
import { SchedulerStatsModule } from './scheduler-stats.module';

export { loadConfig, loadInfraConfig, type SchedulerStatsConfig } from './config';
export { SchedulerStatsModule } from './scheduler-stats.module';
export { SCHEMA_PARTS } from './schema';

/**
 * Start scheduler-stats on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startSchedulerStats(
  config: SchedulerStatsConfig,
  runtime: Runtime,
  opts: { http: boolean },
): Promise<RunningApp> {
  return startBackgroundApp({
    app: 'scheduler-stats',
    service: 'block-storage',
    runtime,
    feature: SchedulerStatsModule.forRoot(config),
    logLevel: config.logLevel,
    health: config.health,
    http: opts.http,
  });
}
