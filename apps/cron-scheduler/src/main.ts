import 'reflect-metadata';
import { closeAll, createRuntime, runProcess } from '@osc/platform';
import { loadConfig, loadInfraConfig, startCronScheduler } from './index';
import { SCHEMA_PARTS } from './schema';

/** Distributed mode: this app alone, on PostgreSQL, RabbitMQ and Redis from the environment. */
runProcess('cron-scheduler', async (log) => {
  const config = loadConfig(process.env);
  const infra = loadInfraConfig(process.env);
  const runtime = await createRuntime(
    {
      mode: 'distributed',
      databaseUrl: infra.DATABASE_URL,
      amqpUrl: infra.AMQP_URL,
      redisUrl: infra.REDIS_URL,
      poolSize: infra.DB_POOL_SIZE,
      queuePrefix: infra.QUEUE_PREFIX,
    },
    SCHEMA_PARTS,
  );
  const app = await startCronScheduler(config, runtime, { http: true });
  log.info(`cron-scheduler running; health on ${config.health.host}:${config.health.port}`);
  return { close: () => closeAll([app], runtime) };
});
