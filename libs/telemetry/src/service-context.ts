import { type Context, context, createContextKey } from '@opentelemetry/api';

const SERVICE = createContextKey('osc.service');

/**
 * Runs `fn` as part of app `service`: spans started inside it (and in everything it starts
 * asynchronously, consumers and workers registered during it included) are reported under that
 * service name. Embedded mode runs six apps in one process; each keeps its own `service.name`.
 */
export function withService<T>(service: string, fn: () => T): T {
  return context.with(context.active().setValue(SERVICE, service), fn);
}

/** The app the given (or active) context belongs to, if any. */
export function currentService(ctx: Context = context.active()): string | undefined {
  const value = ctx.getValue(SERVICE);
  return typeof value === 'string' ? value : undefined;
}
