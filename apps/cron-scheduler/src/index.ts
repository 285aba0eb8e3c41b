import { type DynamicModule, Module } from '@nestjs/common';
import { type Runtime, RuntimeModule, type RunningApp, startHttpApp, startWorkerContext } from '@osc/platform';
import type { CronSchedulerConfig } from './config';
import { CronSchedulerModule } from './cron-scheduler.module';

export { DEFAULT_FIRING, loadConfig, loadInfraConfig, type CronSchedulerConfig } from './config';
export { CRON_SCHEDULER_CONFIG, CronSchedulerModule, CronSchedulerRunner } from './cron-scheduler.module';
export { CronTriggerFiring, type CronFiringOptions, type FiredTrigger } from './firing/cron-trigger-firing';
export { CronPoller, type CronPollerOptions } from './firing/cron-poller';

@Module({})
class CronSchedulerRoot {
  static with(runtime: Runtime, config: CronSchedulerConfig): DynamicModule {
    return { module: CronSchedulerRoot, imports: [RuntimeModule.forRoot(runtime), CronSchedulerModule.forRoot(config)] };
  }
}

/**
 * Start cron-scheduler on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startCronScheduler(config: CronSchedulerConfig, runtime: Runtime, opts: { http: boolean }): Promise<RunningApp> {
  const root = CronSchedulerRoot.with(runtime, config);
  if (!opts.http) return startWorkerContext('cron-scheduler', root);
  return startHttpApp(root, {
    app: 'cron-scheduler',
    service: 'workflow',
    authMode: 'noauth',
    bodyLimit: 1024,
    logLevel: config.logLevel,
    readiness: runtime.readiness,
    port: config.health.port,
    host: config.health.host,
  });
}
export { SCHEMA_PARTS } from './schema';
