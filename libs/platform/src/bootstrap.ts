import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  type AppLogger,
  type HttpAppOptions,
  createHttpApp,
  createJsonLogger,
  exitOnConfigError,
  NestJsonLogger,
} from '@osc/http-common';
import { startTracing, tracingConfig, withService } from '@osc/telemetry';

/** A started app: something to close on shutdown. */
export interface RunningApp {
  readonly name: string;
  close(): Promise<void>;
}

/** Start an API (or a worker's health endpoint) on host:port. */
export async function startHttpApp(
  module: unknown,
  opts: HttpAppOptions & { port: number; host: string },
): Promise<RunningApp & { app: NestFastifyApplication; port: number }> {
  // Everything the app starts (consumers, workers, timers) belongs to its service in traces.
  const app = await withService(opts.app, () => createHttpApp(module, opts));
  await app.listen(opts.port, opts.host);
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return { name: opts.app, app, port, close: () => app.close() };
}

/** Start a background app with no HTTP surface of its own (embedded mode workers). */
export async function startWorkerContext(
  name: string,
  module: unknown,
  logLevel = 'info',
): Promise<RunningApp & { app: INestApplicationContext }> {
  const logger = createJsonLogger({ app: name, level: logLevel });
  const app = await withService(name, async () => {
    const context = await NestFactory.createApplicationContext(module as never, {
      logger: new NestJsonLogger(logger),
    });
    await context.init();
    return context;
  });
  return { name, app, close: () => app.close() };
}

/**
 * Run a process entry point: start, then close everything in reverse order on SIGINT/SIGTERM.
 * Configuration errors print their message and exit with status 2. Lifecycle lines are JSON, as
 * every other line the product writes. OpenTelemetry tracing starts first when the standard
 * `OTEL_*` variables ask for it (an OTLP endpoint), and is flushed after the apps have closed.
 */
export function runProcess(
  app: string,
  start: (log: AppLogger) => Promise<{ close(): Promise<void> }>,
): void {
  const log = createJsonLogger({ app, level: 'info' });
  let tracing: ReturnType<typeof startTracing>;
  try {
    tracing = startTracing(app, tracingConfig(process.env));
  } catch (err) {
    log.fatal({ err }, 'invalid OpenTelemetry configuration');
    setTimeout(() => process.exit(2), 100);
    return;
  }
  withService(app, () => start(log))
    .then((running) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, 'shutting down');
        const force = setTimeout(() => process.exit(1), 10_000);
        force.unref();
        running
          .close()
          .then(() => tracing.shutdown())
          .then(() => process.exit(0))
          .catch((err: unknown) => {
            log.error({ err }, 'shutdown failed');
            process.exit(1);
          });
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    })
    .catch((err: unknown) => {
      try {
        exitOnConfigError(err);
      } catch (e) {
        log.fatal({ err: e }, 'failed to start');
        // pino writes asynchronously to stdout: leave the line time to reach it
        setTimeout(() => process.exit(1), 100);
      }
    });
}

/** Close apps in reverse start order, then the runtime; errors are reported, not thrown midway. */
export async function closeAll(
  apps: readonly RunningApp[],
  last?: { close(): Promise<void> },
): Promise<void> {
  for (const app of [...apps].reverse()) {
    try {
      await app.close();
    } catch (err) {
      process.stderr.write(`closing ${app.name} failed: ${String(err)}\n`);
    }
  }
  if (last) await last.close();
}
