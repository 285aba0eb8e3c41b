import { type Context, ROOT_CONTEXT, context, propagation } from '@opentelemetry/api';

/** W3C trace context as string headers: `traceparent` and, when present, `tracestate`. */
export type TraceCarrier = Record<string, string>;

/**
 * `headers` plus the W3C `traceparent` (and `tracestate`) of `ctx` (default: the active context).
 * Headers already carrying a `traceparent` keep it unless `replace`. Without a registered SDK the
 * propagator is a no-op and `headers` come back unchanged.
 */
export function injectHeaders(
  headers: Record<string, string> | undefined,
  ctx: Context = context.active(),
  replace = false,
): Record<string, string> | undefined {
  if (!replace && headers?.['traceparent']) return headers;
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  if (Object.keys(carrier).length === 0) return headers;
  return { ...headers, ...carrier };
}

/** The remote context named by `traceparent`/`tracestate` in `headers`, or the root context. */
export function contextFromHeaders(headers: Record<string, string> | undefined): Context {
  if (!headers?.['traceparent']) return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, headers);
}

/**
 * Job data travels with its trace context in one JSON object (BullMQ job data, the embedded
 * queue's journal, outbox rows): `{ "$osc.trace": { traceparent }, "$osc.data": data }`. Handlers
 * never see the wrapper (`unwrapJobData`); data added without one (older rows, other producers)
 * is passed through unchanged.
 */
const TRACE_KEY = '$osc.trace';
const DATA_KEY = '$osc.data';

export function wrapJobData(data: unknown, ctx: Context = context.active(), replace = false): unknown {
  const { data: inner, trace: existing } = unwrapJobData(data);
  const carrier = injectHeaders(replace ? undefined : existing, ctx, replace);
  if (!carrier?.['traceparent']) return data;
  return { [TRACE_KEY]: carrier, [DATA_KEY]: inner ?? null };
}

export function unwrapJobData(data: unknown): { data: unknown; trace?: TraceCarrier } {
  if (
    data === null ||
    typeof data !== 'object' ||
    Array.isArray(data) ||
    !(TRACE_KEY in data) ||
    !(DATA_KEY in data)
  ) {
    return { data };
  }
  const d = data as Record<string, unknown>;
  const carrier = d[TRACE_KEY];
  const trace: TraceCarrier = {};
  if (carrier !== null && typeof carrier === 'object') {
    for (const [k, v] of Object.entries(carrier)) if (typeof v === 'string') trace[k] = v;
  }
  return { data: d[DATA_KEY], trace };
}
