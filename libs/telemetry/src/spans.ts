import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  context,
  trace,
} from '@opentelemetry/api';

/** The instrumentation scope of every span the product makes. */
export const TRACER_NAME = '@osc/telemetry';

/** The product's tracer: the global one, a no-op until `startTracing` registers the SDK. */
export const tracer = () => trace.getTracer(TRACER_NAME);

/**
 * Runs `fn` in a new span (child of `parent`, else of the active context) and ends the span when
 * `fn` settles; a thrown error is recorded on the span and rethrown. Without a registered SDK the
 * span is a non-recording no-op.
 */
export async function inSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}
