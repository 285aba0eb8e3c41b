/**
 * A standalone engine process for multi-process tests and benchmarks: PostgreSQL from DATABASE_URL,
 * RabbitMQ (AMQP_URL, queue prefix QUEUE_PREFIX, x-expires QUEUE_EXPIRES_MS) and BullMQ (REDIS_URL, prefix BULL_PREFIX); ROLE engine, executor or all
 * (default); HEARTBEAT_MS registers the executor and heartbeats it; EXECUTION_HISTORY=off writes no
 * execution history (the benchmark of its cost). Prints "ready" once consuming.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { BullMqJobQueue, RabbitMqCommandBus } from '@osc/messaging';
import { setExecutionHistoryWrites } from '@osc/workflow-persistence';
import { EngineInstance, prefixedBus, prefixedJobs } from './engine-harness';

async function main(): Promise<void> {
  if (process.env['EXECUTION_HISTORY'] === 'off') setExecutionHistoryWrites(false);
  const dataSource = new DataSource({
    type: 'postgres',
    url: process.env['DATABASE_URL'],
    extra: { max: Number(process.env['DB_POOL'] ?? 20) },
  });
  await dataSource.initialize();
  const queuePrefix = process.env['QUEUE_PREFIX'] ?? '';
  // QUEUE_EXPIRES_MS: x-expires of the run's queues (tests and benchmarks), as the parent declares them.
  const expires = process.env['QUEUE_EXPIRES_MS'];
  const bus = prefixedBus(
    new RabbitMqCommandBus({
      url: process.env['AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672',
      queueExpiresMs: expires ? Number(expires) : undefined,
    }),
    queuePrefix,
  );
  const jobs = prefixedJobs(
    new BullMqJobQueue({
      url: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      prefix: process.env['BULL_PREFIX'] ?? 'osc',
      lockDurationMs: Number(process.env['JOB_LOCK_MS'] ?? 30_000),
      stalledIntervalMs: Number(process.env['JOB_STALLED_MS'] ?? 30_000),
    }),
    queuePrefix,
  );
  const engine = new EngineInstance(dataSource, bus, jobs, {
    prefetch: Number(process.env['PREFETCH'] ?? 32),
    executorConcurrency: Number(process.env['EXECUTOR_CONCURRENCY'] ?? 50),
    role: (process.env['ROLE'] ?? 'all') as 'all' | 'engine' | 'executor',
    ...(process.env['HEARTBEAT_MS'] ? { heartbeatMs: Number(process.env['HEARTBEAT_MS']) } : {}),
  });
  await engine.start();
  process.stdout.write('ready\n');
  const stop = async () => {
    await engine.stop();
    await bus.close();
    await jobs.close();
    await dataSource.destroy();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((e: unknown) => {
  process.stderr.write(`engine process failed: ${String(e)}\n`);
  process.exit(1);
});
