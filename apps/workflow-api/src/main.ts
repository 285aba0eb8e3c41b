import 'reflect-metadata';
import { closeAll, createRuntime, distributedRuntimeOptions, runProcess } from '@osc/platform';
import { loadConfig, loadInfraConfig, startWorkflowApi } from './index';
import { SCHEMA_PARTS } from './schema';

/** Distributed mode: this app alone, on PostgreSQL, RabbitMQ and Redis from the environment. */
runProcess('workflow-api', async (log) => {
  const config = loadConfig(process.env);
  const infra = loadInfraConfig(process.env);
  const runtime = await createRuntime(distributedRuntimeOptions(infra), SCHEMA_PARTS);
  const app = await startWorkflowApi(config, runtime);
  log.info(`workflow-api listening on ${config.http.host}:${config.http.port}`);
  return { close: () => closeAll([app], runtime) };
});
