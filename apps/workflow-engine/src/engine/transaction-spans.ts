import { type Context, type Span, context, trace } from '@opentelemetry/api';
import { tracer } from '@osc/telemetry';
import { type OutboxItem, withTraceData, withTraceHeaders } from '@osc/messaging';

/**
 * One span per execution and transaction, under the trace of the message that brought its events
 * (a transaction shared by several executions has one span in each of their traces).
 */
export function transactionSpan(
  m: { executionId: string; events: readonly unknown[]; ctx: Context },
  groupSize: number,
): Span {
  return tracer().startSpan(
    'engine transaction',
    {
      attributes: {
        'osc.execution.id': m.executionId,
        'osc.engine.events': m.events.length,
        'osc.engine.group_size': groupSize,
      },
    },
    m.ctx,
  );
}

/** The outgoing items carrying the trace of this execution's transaction span (not another member's). */
export function inTrace(span: Span | undefined, ctx: Context, items: OutboxItem[]): OutboxItem[] {
  if (!span) return items;
  return context.with(trace.setSpan(ctx, span), () =>
    items.map((item) =>
      item.destination === 'bus'
        ? { ...item, message: withTraceHeaders(item.message) }
        : { ...item, job: withTraceData(item.job) },
    ),
  );
}
