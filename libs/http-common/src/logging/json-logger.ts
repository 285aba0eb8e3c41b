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

/**
 * NestJS's own messages (start-up, module errors) through the same JSON logger. Our code logs
 * through Nest's `Logger` too: a plain object as the message becomes the line's keys, its `msg` the
 * message (`logger.log({ msg: 'execution finished', executionId })`).
 */
export class NestJsonLogger implements LoggerService {
  constructor(private readonly logger: AppLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    // a level that is off costs nothing: the line's keys are not even gathered
    if (!this.logger.isLevelEnabled('info')) return;
    const ctx = contextOf(rest);
    // Nest's own start-up chatter (every module and route at info) is left out; ours is kept
    if (typeof ctx['context'] === 'string' && NEST_INTERNALS.has(ctx['context'])) return;
    this.logger.info(...line(ctx, message));
  }

  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?)
    const [stack, ...more] = rest;
    const ctx = contextOf(typeof stack === 'string' && stack.includes('\n') ? more : rest);
    if (message instanceof Error) this.logger.error({ ...ctx, err: message }, message.message);
    else
      this.logger.error(
        ...line({ ...ctx, ...(typeof stack === 'string' && stack.includes('\n') ? { stack } : {}) }, message),
      );
  }

  warn(message: unknown, ...rest: unknown[]): void {
    if (!this.logger.isLevelEnabled('warn')) return;
    this.logger.warn(...line(contextOf(rest), message));
  }

  debug(message: unknown, ...rest: unknown[]): void {
    if (!this.logger.isLevelEnabled('debug')) return;
    this.logger.debug(...line(contextOf(rest), message));
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    if (!this.logger.isLevelEnabled('trace')) return;
    this.logger.trace(contextOf(rest), text(message));
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.logger.fatal(contextOf(rest), text(message));
  }
}

const NEST_INTERNALS = new Set([
  'NestFactory',
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestApplication',
  'NestMicroservice',
]);

function line(ctx: Record<string, unknown>, message: unknown): [Record<string, unknown>, string] {
  if (
    message !== null &&
    typeof message === 'object' &&
    !(message instanceof Error) &&
    !Array.isArray(message)
  ) {
    const { msg, ...fields } = message as Record<string, unknown>;
    return [{ ...ctx, ...fields }, typeof msg === 'string' ? msg : ''];
  }
  return [ctx, text(message)];
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
