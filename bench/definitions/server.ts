/**
 * The bench's system under test: workflow-api over a fresh runtime in one mode, in its own process
 * so that the load generator does not share its event loop. Prints `READY <port>` when listening
 * and cleans up (drops the throw-away database) on SIGTERM. A line `ANALYZE` on stdin refreshes the
 * planner statistics (answered by `ANALYZED`).
 */
import 'reflect-metadata';
import { createTestRuntime, type TestRuntimeMode } from '@osc/testing';
import { SCHEMA_PARTS, startWorkflowApi } from '@osc/workflow-api';

async function main(): Promise<void> {
  const mode = (process.argv[2] ?? 'embedded') as TestRuntimeMode;
  const { runtime, cleanup } = await createTestRuntime(mode, SCHEMA_PARTS);
  const app = await startWorkflowApi(
    {
      http: { port: 0, host: '127.0.0.1', bodyLimit: 4 * 1024 * 1024 },
      authMode: 'noauth',
      logLevel: process.env['LOG_LEVEL'] ?? 'warn',
    },
    runtime,
  );
  process.stdout.write(`READY ${app.port}\n`);
  // After seeding, the bench asks for fresh planner statistics, as autovacuum keeps them in steady state.
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    if (!chunk.includes('ANALYZE')) return;
    runtime.dataSource
      .query('ANALYZE')
      .then(() => process.stdout.write('ANALYZED\n'))
      .catch((err: unknown) => process.stdout.write(`ANALYZE FAILED ${String(err)}\n`));
  });
  const stop = () => {
    app
      .close()
      .then(cleanup)
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        process.stderr.write(`${String(err)}\n`);
        process.exit(1);
      });
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((err: unknown) => {
  process.stderr.write(
    `bench server failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
