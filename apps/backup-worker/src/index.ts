import { type DynamicModule, Module } from '@nestjs/common';
import { type Runtime, RuntimeModule, type RunningApp, startHttpApp, startWorkerContext } from '@osc/platform';
import type { BackupWorkerConfig } from './config';
import { BackupWorkerModule } from './backup-worker.module';

export { loadConfig, loadInfraConfig, type BackupWorkerConfig } from './config';
export { BackupWorkerModule } from './backup-worker.module';

@Module({})
class BackupWorkerRoot {
  static with(runtime: Runtime, config: BackupWorkerConfig): DynamicModule {
    return { module: BackupWorkerRoot, imports: [RuntimeModule.forRoot(runtime), BackupWorkerModule.forRoot(config)] };
  }
}

/**
 * Start backup-worker on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startBackupWorker(config: BackupWorkerConfig, runtime: Runtime, opts: { http: boolean }): Promise<RunningApp> {
  const root = BackupWorkerRoot.with(runtime, config);
  if (!opts.http) return startWorkerContext('backup-worker', root);
  return startHttpApp(root, {
    app: 'backup-worker',
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
