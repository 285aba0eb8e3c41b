import { ROOT_CONTEXT, TraceFlags, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { contextFromHeaders, injectHeaders, unwrapJobData, wrapJobData } from './propagation';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';
const ctx = trace.setSpanContext(ROOT_CONTEXT, {
  traceId: TRACE,
  spanId: SPAN,
  traceFlags: TraceFlags.SAMPLED,
  isRemote: false,
});
const TRACEPARENT = `00-${TRACE}-${SPAN}-01`;

describe('trace context in headers and job data', () => {
  beforeAll(() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()));
  afterAll(() => propagation.disable());

  it('adds traceparent to headers, keeps an existing one unless asked to replace it', () => {
    expect(injectHeaders({ a: '1' }, ctx)).toEqual({ a: '1', traceparent: TRACEPARENT });
    expect(injectHeaders({ traceparent: 'kept' }, ctx)).toEqual({ traceparent: 'kept' });
    expect(injectHeaders({ traceparent: 'old' }, ctx, true)).toEqual({ traceparent: TRACEPARENT });
  });

  it('leaves headers alone without an active trace', () => {
    const headers = { a: '1' };
    expect(injectHeaders(headers, ROOT_CONTEXT)).toBe(headers);
  });

  it('reads the remote context back', () => {
    expect(trace.getSpanContext(contextFromHeaders({ traceparent: TRACEPARENT }))).toMatchObject({
      traceId: TRACE,
      spanId: SPAN,
      isRemote: true,
    });
    expect(trace.getSpanContext(contextFromHeaders({}))).toBeUndefined();
  });

  it.each([[{ x: 1 }], [null], [[1, 2]], ['text']])(
    'wraps job data %j and gives it back unchanged',
    (data) => {
      const wrapped = wrapJobData(data, ctx);
      expect(wrapped).toEqual({ '$osc.trace': { traceparent: TRACEPARENT }, '$osc.data': data });
      expect(unwrapJobData(JSON.parse(JSON.stringify(wrapped)))).toEqual({
        data,
        trace: { traceparent: TRACEPARENT },
      });
    },
  );

  it('passes unwrapped data through and does not wrap twice', () => {
    expect(unwrapJobData({ x: 1 })).toEqual({ data: { x: 1 } });
    const once = wrapJobData({ x: 1 }, ctx);
    expect(wrapJobData(once, ROOT_CONTEXT)).toEqual(once);
    expect(wrapJobData({ x: 1 }, ROOT_CONTEXT)).toEqual({ x: 1 });
  });
});
