import 'reflect-metadata';
import { closeAll, createRuntime, distributedRuntimeOptions, runProcess } from '@osc/platform';
import { loadConfig, loadInfraConfig, startVolumeApi } from './index';
import { SCHEMA_PARTS } from './schema';

/** Distributed mode: this app alone, on PostgreSQL, RabbitMQ and Redis from the environment. */
runProcess('volume-api', async (log) => {
  const config = loadConfig(process.env);
  const infra = loadInfraConfig(process.env);
  const runtime = await createRuntime(distributedRuntimeOptions(infra), SCHEMA_PARTS);
  const app = await startVolumeApi(config, runtime);
  log.info(`volume-api listening on ${config.http.host}:${config.http.port}`);
  return { close: () => closeAll([app], runtime) };
});
