import { type DynamicModule, Module } from '@nestjs/common';
import { type Runtime, RuntimeModule, type RunningApp, startHttpApp, startWorkerContext } from '@osc/platform';
import type { SchedulerStatsConfig } from './config';
import { SchedulerStatsModule } from './scheduler-stats.module';

export { loadConfig, loadInfraConfig, type SchedulerStatsConfig } from './config';
export { SchedulerStatsModule } from './scheduler-stats.module';

@Module({})
class SchedulerStatsRoot {
  static with(runtime: Runtime, config: SchedulerStatsConfig): DynamicModule {
    return { module: SchedulerStatsRoot, imports: [RuntimeModule.forRoot(runtime), SchedulerStatsModule.forRoot(config)] };
  }
}

/**
 * Start scheduler-stats on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startSchedulerStats(config: SchedulerStatsConfig, runtime: Runtime, opts: { http: boolean }): Promise<RunningApp> {
  const root = SchedulerStatsRoot.with(runtime, config);
  if (!opts.http) return startWorkerContext('scheduler-stats', root);
  return startHttpApp(root, {
    app: 'scheduler-stats',
    service: 'block-storage',
    authMode: 'noauth',
    bodyLimit: 1024,
    logLevel: config.logLevel,
    readiness: runtime.readiness,
    port: config.health.port,
    host: config.health.host,
  });
}
export { SCHEMA_PARTS } from './schema';
