import { type DynamicModule, Module } from '@nestjs/common';
import type { ServiceKind } from '@osc/http-common';
import { type RunningApp, startHttpApp, startWorkerContext } from './bootstrap';
import type { Runtime } from './runtime';
import { RuntimeModule } from './runtime.module';

/** Root module of one app instance: the runtime plus the app's feature module. */
@Module({})
class AppRoot {}

export function appRoot(runtime: Runtime, feature: DynamicModule): DynamicModule {
  return { module: AppRoot, imports: [RuntimeModule.forRoot(runtime), feature] };
}

export interface BackgroundAppOptions {
  app: string;
  service: ServiceKind;
  runtime: Runtime;
  feature: DynamicModule;
  logLevel: string;
  health: { port: number; host: string };
  /** Serve /healthz, /readyz and /metrics (distributed); embedded mode runs without a port. */
  http: boolean;
}

/** Start a background app (engine, scheduler, worker). */
export function startBackgroundApp(opts: BackgroundAppOptions): Promise<RunningApp> {
  const root = appRoot(opts.runtime, opts.feature);
  if (!opts.http) return startWorkerContext(opts.app, root, opts.logLevel);
  return startHttpApp(root, {
    app: opts.app,
    service: opts.service,
    authMode: 'noauth',
    bodyLimit: 1024,
    logLevel: opts.logLevel,
    readiness: opts.runtime.readiness,
    port: opts.health.port,
    host: opts.health.host,
  });
}
