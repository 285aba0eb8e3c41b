import type { DataSource } from 'typeorm';
import {
  EmbeddedMaintenance,
  type MaintenanceLogger,
  type MigrationClass,
  closeDataSource,
  combineMigrations,
  createDataSource,
  type DatabaseOptions,
} from '@osc/persistence';
import {
  type CommandBus,
  type JobQueue,
  OutboxRelay,
  OutboxWriter,
  createMessaging,
  messagingMigrations,
  meterMessaging,
  outboxEntities,
  tracedBus,
  tracedJobs,
} from '@osc/messaging';
import { type ReadinessCheck, createJsonLogger } from '@osc/http-common';
import { registerQueueDepthSource } from '@osc/telemetry';
import { namespacedBus, namespacedJobs } from './namespaced-messaging';

/** Entities and migrations one side of the product contributes to the database. */
export interface SchemaPart {
  readonly name: string;
  readonly entities: readonly (new (...args: never[]) => unknown)[];
  readonly migrations: readonly (new (...args: never[]) => unknown)[];
}

export type RuntimeOptions =
  | {
      mode: 'embedded';
      dataDir: string;
      /**
       * The embedded database's routine vacuum and analyze (`EmbeddedMaintenance`: PGlite has no
       * autovacuum): milliseconds between passes, 0 for none; {@link DEFAULT_EMBEDDED_MAINTENANCE_MS}
       * by default. Its lines go to `logger` (a JSON logger of app `embedded` by default).
       */
      maintenanceIntervalMs?: number;
      logger?: MaintenanceLogger;
    }
  | {
      mode: 'distributed';
      databaseUrl: string;
      amqpUrl: string;
      redisUrl: string;
      poolSize?: number;
      /** Prefix of every queue name (e.g. per test run); empty by default. */
      queuePrefix?: string;
      /** Tests and benchmarks only: RabbitMQ queues expire after this long unused (x-expires). */
      queueExpiresMs?: number;
    };

/** Passes of the embedded database's maintenance: once a minute, as autovacuum's default naptime. */
export const DEFAULT_EMBEDDED_MAINTENANCE_MS = 60_000;

/** The infrastructure settings every distributed process reads from its environment (`distributedInfraSchema`). */
export interface DistributedInfra {
  readonly DATABASE_URL: string;
  readonly AMQP_URL: string;
  readonly REDIS_URL: string;
  readonly DB_POOL_SIZE: number;
  readonly QUEUE_PREFIX: string;
}

/** The runtime of one app alone in distributed mode (its main.ts), from its infrastructure settings. */
export const distributedRuntimeOptions = (infra: DistributedInfra): RuntimeOptions => ({
  mode: 'distributed',
  databaseUrl: infra.DATABASE_URL,
  amqpUrl: infra.AMQP_URL,
  redisUrl: infra.REDIS_URL,
  poolSize: infra.DB_POOL_SIZE,
  queuePrefix: infra.QUEUE_PREFIX,
});

/**
 * Everything an app needs from the outside world: the database, the command bus, the job queue
 * and the outbox. Embedded mode builds it on PGlite and in-process adapters that journal their
 * messages and jobs in PGlite (docs/runtime.md, "Embedded durability"); distributed mode on
 * PostgreSQL, RabbitMQ and BullMQ. Apps never know which.
 */
export interface Runtime {
  readonly mode: RuntimeOptions['mode'];
  readonly dataSource: DataSource;
  readonly bus: CommandBus;
  readonly jobs: JobQueue;
  readonly outbox: OutboxWriter;
  readonly relay: OutboxRelay;
  readonly readiness: readonly ReadinessCheck[];
  close(): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions, parts: readonly SchemaPart[]): Promise<Runtime> {
  const entities = [...outboxEntities, ...parts.flatMap((p) => p.entities)];
  const migrations = combineMigrations(
    messagingMigrations,
    ...parts.map((p) => p.migrations as readonly MigrationClass[]),
  );
  const db: DatabaseOptions =
    options.mode === 'embedded'
      ? { kind: 'pglite', dataDir: options.dataDir }
      : { kind: 'postgres', url: options.databaseUrl, poolSize: options.poolSize };
  const dataSource = await createDataSource(db, entities as never, migrations as never);
  // Embedded: the in-process bus and queue journal their messages and jobs in the embedded
  // database, and take back what a previous process left unfinished before anything starts.
  const messaging =
    options.mode === 'embedded'
      ? createMessaging({ mode: 'embedded', journal: dataSource })
      : createMessaging({
          mode: 'distributed',
          amqpUrl: options.amqpUrl,
          redisUrl: options.redisUrl,
          queueExpiresMs: options.queueExpiresMs,
        });
  try {
    await messaging.restore();
  } catch (err) {
    await messaging.close();
    await closeDataSource(dataSource);
    throw err;
  }
  const prefix = options.mode === 'distributed' ? (options.queuePrefix ?? '') : '';
  // Trace context rides on every message and job (a no-op unless tracing is configured).
  // Metrics per queue (docs/metrics.md): handlers in flight, counts, durations, depths at scrape.
  const metered = meterMessaging(
    namespacedBus(messaging.bus, prefix),
    namespacedJobs(messaging.jobs, prefix),
    {
      bus: messaging.bus,
      jobs: messaging.jobs,
      prefix,
    },
  );
  const unregisterOutbox = registerQueueDepthSource(async () => {
    const [row] = (await dataSource.query(
      `SELECT count(*)::int AS depth, COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age FROM outbox`,
    )) as { depth: number; age: number }[];
    return [{ kind: 'outbox', queue: 'outbox', depth: row?.depth ?? 0, oldestAgeSeconds: row?.age ?? 0 }];
  });
  const bus = tracedBus(metered.bus);
  const jobs = tracedJobs(metered.jobs);
  // Embedded: items are journaled with the business transaction itself (no outbox row, no relay
  // transaction per message); the relay still moves rows written outside a transaction.
  const outbox = new OutboxWriter(options.mode === 'embedded' ? { bus, jobs } : undefined);
  const relay = new OutboxRelay(dataSource, bus, jobs);
  outbox.onCommitted(() => relay.notify());
  await relay.start();
  const maintenance =
    options.mode === 'embedded'
      ? new EmbeddedMaintenance(dataSource, {
          intervalMs: options.maintenanceIntervalMs ?? DEFAULT_EMBEDDED_MAINTENANCE_MS,
          logger: options.logger ?? createJsonLogger({ app: 'embedded', level: 'info' }),
        })
      : undefined;
  maintenance?.start();
  const readiness: ReadinessCheck[] = [
    { name: 'database', check: async () => (await dataSource.query('SELECT 1 AS ok')).length === 1 },
    { name: 'command-bus', check: () => messaging.bus.ping() },
    { name: 'job-queue', check: () => messaging.jobs.ping() },
  ];
  let closed = false;
  return {
    mode: options.mode,
    dataSource,
    bus,
    jobs,
    outbox,
    relay,
    readiness,
    async close() {
      if (closed) return;
      closed = true;
      metered.close();
      unregisterOutbox();
      await maintenance?.stop();
      await relay.stop();
      await messaging.close();
      await closeDataSource(dataSource);
    },
  };
}
