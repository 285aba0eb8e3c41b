import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { type Runtime, type SchemaPart, createRuntime } from '@osc/platform';
import { TEST_QUEUE_EXPIRES_MS, purgeTestPrefix } from '../messaging/test-prefix';

/** How a test runs the product: embedded (in-memory PGlite, in-process messaging) or on real servers. */
export const TEST_RUNTIME_MODES = ['embedded', 'postgres'] as const;
export type TestRuntimeMode = (typeof TEST_RUNTIME_MODES)[number];

/** Local servers of the development machine and CI; override with TEST_POSTGRES_URL, TEST_AMQP_URL, TEST_REDIS_URL. */
export const testServers = () => ({
  postgresUrl: process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  amqpUrl: process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672',
  redisUrl: process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
});

/** Connections per test runtime (small: many run at once); TEST_DB_POOL_SIZE overrides, e.g. for benches. */
const testPoolSize = (): number => {
  const n = Number(process.env['TEST_DB_POOL_SIZE'] ?? 5);
  return Number.isInteger(n) && n > 0 ? n : 5;
};

export interface TestRuntime {
  readonly runtime: Runtime;
  /** The run's queue prefix on RabbitMQ and in BullMQ's Redis keys (`postgres` mode), else null. */
  readonly queuePrefix: string | null;
  /** Closes the runtime, deletes its queues and BullMQ keys and drops the throw-away database. Safe to call twice. */
  cleanup(): Promise<void>;
}

/**
 * A fresh runtime with `parts` migrated on an empty database:
 * - `embedded`: in-memory PGlite and in-process bus and queue;
 * - `postgres`: a uniquely named database on the test server (dropped by `cleanup`), RabbitMQ and Redis.
 * Missing servers make this reject, so tests fail rather than skip.
 */
export async function createTestRuntime(
  mode: TestRuntimeMode,
  parts: readonly SchemaPart[],
): Promise<TestRuntime> {
  if (mode === 'embedded') {
    const runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, parts);
    return { runtime, queuePrefix: null, cleanup: () => runtime.close() };
  }
  const servers = testServers();
  const database = `osc_e2e_${process.pid}_${randomBytes(6).toString('hex')}`;
  await adminQuery(servers.postgresUrl, `CREATE DATABASE "${database}"`);
  const url = new URL(servers.postgresUrl);
  url.pathname = `/${database}`;
  const queuePrefix = `${database}.`;
  let runtime: Runtime;
  try {
    runtime = await createRuntime(
      {
        mode: 'distributed',
        databaseUrl: url.toString(),
        amqpUrl: servers.amqpUrl,
        redisUrl: servers.redisUrl,
        poolSize: testPoolSize(),
        queuePrefix,
        queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
      },
      parts,
    );
  } catch (err) {
    await purgeTestPrefix({ queuePrefix }).catch(() => undefined);
    await adminQuery(servers.postgresUrl, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    throw err;
  }
  let cleaned = false;
  return {
    runtime,
    queuePrefix,
    async cleanup() {
      if (cleaned) return;
      cleaned = true;
      try {
        await runtime.close();
      } finally {
        try {
          await purgeTestPrefix({ queuePrefix });
        } finally {
          await adminQuery(servers.postgresUrl, `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
        }
      }
    },
  };
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
