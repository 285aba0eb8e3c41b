import { type Runtime, type RunningApp, startBackgroundApp } from '@osc/platform';
import type { BackupWorkerConfig } from './config';
import { BackupWorkerModule } from './backup-worker.module';

export { loadConfig, loadConfigs, loadInfraConfig, type BackupWorkerConfig } from './config';
export { BackupWorkerModule } from './backup-worker.module';
export { SCHEMA_PARTS } from './schema';
export {
  createBackupStore,
  BackupStoreError,
  type BackupStore,
  type BackupStoreConfig,
} from './backups/stores';

/**
 * Start backup-worker on the given runtime. On its own (distributed) it serves /healthz, /readyz and
 * /metrics on its health port; inside the embedded process it runs without a port.
 */
export function startBackupWorker(
  config: BackupWorkerConfig,
  runtime: Runtime,
  opts: { http: boolean },
): Promise<RunningApp> {
  return startBackgroundApp({
    app: 'backup-worker',
    service: 'block-storage',
    runtime,
    feature: BackupWorkerModule.forRoot(config),
    logLevel: config.logLevel,
    health: config.health,
    http: opts.http,
  });
}
