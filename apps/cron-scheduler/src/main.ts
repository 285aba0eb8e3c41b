import 'reflect-metadata';
import { closeAll, createRuntime, distributedRuntimeOptions, runProcess } from '@osc/platform';
import { loadConfig, loadInfraConfig, startCronScheduler } from './index';
import { SCHEMA_PARTS } from './schema';

/** Distributed mode: this app alone, on PostgreSQL, RabbitMQ and Redis from the environment. */
runProcess('cron-scheduler', async (log) => {
  const config = loadConfig(process.env);
  const infra = loadInfraConfig(process.env);
  const runtime = await createRuntime(distributedRuntimeOptions(infra), SCHEMA_PARTS);
  const app = await startCronScheduler(config, runtime, { http: true });
  log.info(`cron-scheduler running; health on ${config.health.host}:${config.health.port}`);
  return { close: () => closeAll([app], runtime) };
});
