/** The little logging the adapters need; pino's and NestJS's loggers both fit through a small wrapper. */
export interface MessagingLogger {
  warn(message: string, context?: Record<string, unknown>): void;
  error(message: string, context?: Record<string, unknown>): void;
}

/** Default: one JSON line on stderr, so broker trouble is never silent. */
export const stderrLogger: MessagingLogger = {
  warn: (message, context) => writeLine('warn', message, context),
  error: (message, context) => writeLine('error', message, context),
};

function writeLine(level: string, message: string, context?: Record<string, unknown>): void {
  process.stderr.write(
    `${JSON.stringify({ level, time: new Date().toISOString(), lib: 'messaging', msg: message, ...context })}\n`,
  );
}
