import 'reflect-metadata';
import { closeAll, createRuntime, distributedRuntimeOptions, runProcess } from '@osc/platform';
import { loadConfig, loadInfraConfig, startSchedulerStats } from './index';
import { SCHEMA_PARTS } from './schema';

/** Distributed mode: this app alone, on PostgreSQL, RabbitMQ and Redis from the environment. */
runProcess('scheduler-stats', async (log) => {
  const config = loadConfig(process.env);
  const infra = loadInfraConfig(process.env);
  const runtime = await createRuntime(distributedRuntimeOptions(infra), SCHEMA_PARTS);
  const app = await startSchedulerStats(config, runtime, { http: true });
  log.info(`scheduler-stats running; health on ${config.health.host}:${config.health.port}`);
  return { close: () => closeAll([app], runtime) };
});
