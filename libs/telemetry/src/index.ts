export { type Tracing, type TracingConfig, tracingConfig, startTracing } from './tracing';
export { withService, currentService } from './service-context';
export { TRACER_NAME, tracer, inSpan } from './spans';
export {
  injectHeaders,
  contextFromHeaders,
  wrapJobData,
  unwrapJobData,
  type TraceCarrier,
} from './propagation';
export { tracedServerFactory, nameHttpSpan } from './http-server';
export {
  productRegistry,
  productMetrics,
  registerQueueDepthSource,
  timed,
  type QueueDepth,
  type QueueDepthSource,
} from './metrics';
