import 'reflect-metadata';
import {
  type RunningApp,
  closeAll,
  createRuntime,
  distributedRuntimeOptions,
  runProcess,
} from '@osc/platform';
import { loadConfigs, loadInfraConfig, startBackupWorker } from './index';
import { SCHEMA_PARTS } from './schema';

/** Distributed mode: this app alone, on PostgreSQL, RabbitMQ and Redis from the environment. */
runProcess('backup-worker', async (log) => {
  const configs = loadConfigs(process.env);
  const infra = loadInfraConfig(process.env);
  const runtime = await createRuntime(distributedRuntimeOptions(infra), SCHEMA_PARTS);
  // One worker per back end (VOLUME_BACKENDS); the first serves the health port for all of them.
  const apps: RunningApp[] = [];
  try {
    for (const [i, config] of configs.entries())
      apps.push(await startBackupWorker(config, runtime, { http: i === 0 }));
  } catch (err) {
    await closeAll(apps, runtime);
    throw err;
  }
  const first = configs[0];
  log.info(
    `backup-worker running ${configs.map((c) => c.volumeBackend.backendName).join(', ')}; health on ${first?.health.host}:${first?.health.port}`,
  );
  return { close: () => closeAll(apps, runtime) };
});
