import type { LoggerService } from '@nestjs/common';
import pino, { type Logger } from 'pino';

/** The product's logger: pino, one JSON object per line. */
export type AppLogger = Logger;

export interface JsonLoggerOptions {
  /** App name, a key of every line (`workflow-api`, `backup-worker`, ...). */
  app: string;
  /** pino level name (`info`, `warn`, ..., `silent`). */
  level: string;
  /** Where lines go; default stdout. Tests capture lines here. */
  stream?: { write(line: string): void };
}

/**
 * One format for every line the product writes (docs/runtime.md, "Logs"): `level` as a name,
 * `time` as an ISO timestamp, `app`, `msg`, then the line's own keys (`reqId`, `executionId`,
 * `taskExecutionId`, `volumeId`, ...). No colours, no multi-line text.
 */
export function createJsonLogger(opts: JsonLoggerOptions): AppLogger {
  const options: pino.LoggerOptions = {
    level: opts.level,
    base: { app: opts.app },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  return opts.stream ? pino(options, opts.stream as pino.DestinationStream) : pino(options);
}

/** NestJS's own messages (start-up, module errors) through the same JSON logger. */
export class NestJsonLogger implements LoggerService {
  constructor(private readonly logger: AppLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.logger.info(contextOf(rest), text(message));
  }

  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?)
    const [stack, ...more] = rest;
    const ctx = contextOf(typeof stack === 'string' && stack.includes('\n') ? more : rest);
    if (message instanceof Error) this.logger.error({ ...ctx, err: message }, message.message);
    else this.logger.error({ ...ctx, ...(typeof stack === 'string' && stack.includes('\n') ? { stack } : {}) }, text(message));
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.logger.warn(contextOf(rest), text(message));
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.logger.debug(contextOf(rest), text(message));
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.logger.trace(contextOf(rest), text(message));
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.logger.fatal(contextOf(rest), text(message));
  }
}

function text(message: unknown): string {
  if (typeof message === 'string') return message;
  if (message instanceof Error) return message.message;
  try {
    return JSON.stringify(message);
  } catch {
    return String(message);
  }
}

/** Nest's last optional argument is the context (the class that logs). */
function contextOf(rest: readonly unknown[]): Record<string, unknown> {
  const last = rest[rest.length - 1];
  return typeof last === 'string' ? { context: last } : {};
}
