/**
 * The scale bench's system under test: workflow-api and volume-api (distributed runtimes) over the
 * PostgreSQL database named by DATABASE_URL, both in `headers` auth mode. Prints
 * `READY <workflow port> <volume port>` when both listen; stops on SIGTERM (the database stays: the
 * bench owns it).
 */
import 'reflect-metadata';
import { createRuntime, type Runtime } from '@osc/platform';
import { TEST_QUEUE_EXPIRES_MS, purgeTestPrefix } from '@osc/testing';
import * as volumeApi from '@osc/volume-api';
import { SCHEMA_PARTS, startWorkflowApi } from '@osc/workflow-api';

const env = (name: string, dflt: string): string => process.env[name] ?? dflt;

async function main(): Promise<void> {
  const databaseUrl = env('DATABASE_URL', '');
  const prefix = `scale${process.pid}.`;
  const common = {
    mode: 'distributed' as const,
    databaseUrl,
    amqpUrl: env('TEST_AMQP_URL', 'amqp://guest:guest@127.0.0.1:5672'),
    redisUrl: env('TEST_REDIS_URL', 'redis://127.0.0.1:6379'),
    poolSize: 8,
    queuePrefix: prefix,
    queueExpiresMs: TEST_QUEUE_EXPIRES_MS,
  };
  const runtimes: Runtime[] = [];
  const wfRuntime = await createRuntime(common, SCHEMA_PARTS);
  runtimes.push(wfRuntime);
  const wf = await startWorkflowApi(
    {
      http: { port: 0, host: '127.0.0.1', bodyLimit: 4 * 1024 * 1024 },
      authMode: 'headers',
      logLevel: env('LOG_LEVEL', 'warn'),
    },
    wfRuntime,
  );
  const bsRuntime = await createRuntime(common, volumeApi.SCHEMA_PARTS);
  runtimes.push(bsRuntime);
  const bs = await volumeApi.startVolumeApi(
    volumeApi.loadConfig({
      VOLUME_API_PORT: '0',
      VOLUME_API_HOST: '127.0.0.1',
      AUTH_MODE: 'headers',
      LOG_LEVEL: env('LOG_LEVEL', 'warn'),
    }),
    bsRuntime,
  );
  process.stdout.write(`READY ${wf.port} ${bs.port}\n`);
  const stop = () => {
    void (async () => {
      await bs.close().catch(() => undefined);
      await wf.close().catch(() => undefined);
      for (const r of runtimes) await r.close().catch(() => undefined);
      await purgeTestPrefix({ queuePrefix: prefix }).catch(() => undefined);
      process.exit(0);
    })();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `scale server failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
