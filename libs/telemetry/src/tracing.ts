import {
  type Context,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
  context,
  propagation,
  trace,
} from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtlpProto from '@opentelemetry/exporter-trace-otlp-proto';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import type {
  SpanExporter,
  SpanProcessor,
  TracerProvider as SdkTracerProvider,
} from '@opentelemetry/sdk-trace';
import type * as SemConv from '@opentelemetry/semantic-conventions';
import { currentService } from './service-context';

/**
 * The OpenTelemetry SDK and the OTLP exporter, loaded only when tracing is enabled: a process that
 * exports no spans (the default, and embedded mode) never loads them. Requiring them took ~0.15 s
 * of an embedded start's CPU (issue #17, start-up).
 */
const sdk = () => ({
  asyncHooks: require('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks,
  core: require('@opentelemetry/core') as typeof OtelCore,
  resources: require('@opentelemetry/resources') as typeof Resources,
  trace: require('@opentelemetry/sdk-trace') as typeof SdkTrace,
  semconv: require('@opentelemetry/semantic-conventions') as typeof SemConv,
});

/** What the standard OTEL_* variables ask for, as far as this product supports them. */
export interface TracingConfig {
  /** Export only when an OTLP endpoint is configured (and the SDK is not disabled). */
  readonly enabled: boolean;
  readonly protocol: 'http/protobuf' | 'http/json';
  /** OTEL_SERVICE_NAME: the process's service name; embedded mode's apps keep their own. */
  readonly serviceName?: string;
}

const PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/**
 * Reads OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (either turns export on),
 * OTEL_SDK_DISABLED, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL (default
 * `http/protobuf`, as the specification says) and OTEL_SERVICE_NAME. The exporter itself reads the
 * rest (headers, timeout, compression, per-signal endpoint). `grpc` is refused: no gRPC exporter
 * is installed.
 */
export function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig {
  const endpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'] || env['OTEL_EXPORTER_OTLP_ENDPOINT'];
  const disabled =
    (env['OTEL_SDK_DISABLED'] ?? '').toLowerCase() === 'true' ||
    (env['OTEL_TRACES_EXPORTER'] ?? '') === 'none';
  const protocol =
    env['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'] || env['OTEL_EXPORTER_OTLP_PROTOCOL'] || 'http/protobuf';
  if (!(PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL must be one of ${PROTOCOLS.join(', ')}, got ${protocol}`);
  }
  return {
    enabled: Boolean(endpoint) && !disabled,
    protocol: protocol as TracingConfig['protocol'],
    serviceName: env['OTEL_SERVICE_NAME'] || undefined,
  };
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

let registered: Tracing | undefined;

/**
 * Registers the OpenTelemetry SDK for this process when `config.enabled`; otherwise nothing is
 * registered and every span is the API's no-op (no cost beyond a function call). `process` is the
 * process's own name (`workflow-api`, or `embedded`); spans started as part of another app
 * (`withService`) get that app's `service.name`. Called once per process; later calls return the
 * first registration.
 */
export function startTracing(process: string, config: TracingConfig, version = '0.1.0'): Tracing {
  if (registered) return registered;
  if (!config.enabled) {
    registered = { enabled: false, shutdown: async () => undefined };
    return registered;
  }
  const { asyncHooks, core, resources, trace: sdkTrace, semconv } = sdk();
  const exporter: SpanExporter =
    config.protocol === 'http/json'
      ? new (require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp).OTLPTraceExporter()
      : new (require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpProto).OTLPTraceExporter();
  const processor = new sdkTrace.BatchSpanProcessor({ exporter });
  const providers = new Map<string, SdkTracerProvider>();
  const defaultService = config.serviceName ?? process;
  const providerFor = (service: string): SdkTracerProvider => {
    let provider = providers.get(service);
    if (!provider) {
      provider = new sdkTrace.TracerProvider({
        resource: resources.resourceFromAttributes({
          [semconv.ATTR_SERVICE_NAME]: service,
          [semconv.ATTR_SERVICE_VERSION]: version,
        }),
        spanProcessors: [sharedProcessor(processor)],
      });
      providers.set(service, provider);
    }
    return provider;
  };
  // In distributed mode the process is one app: OTEL_SERVICE_NAME, when set, names it.
  const serviceOf = (ctx: Context): string => {
    const s = currentService(ctx);
    return s === undefined || s === process ? defaultService : s;
  };
  context.setGlobalContextManager(new asyncHooks.AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new core.W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new ServiceRoutingTracerProvider(providerFor, serviceOf));
  registered = {
    enabled: true,
    async shutdown() {
      await processor.forceFlush();
      await processor.shutdown();
    },
  };
  return registered;
}

/** One batch processor and exporter behind every per-service provider; only `shutdown()` above closes it. */
function sharedProcessor(p: SpanProcessor): SpanProcessor {
  return {
    onStart: (span, ctx) => p.onStart(span, ctx),
    onEnd: (span) => p.onEnd(span),
    forceFlush: () => p.forceFlush(),
    shutdown: async () => undefined,
  };
}

/**
 * The global provider: a span goes to the provider of the app whose context starts it, so one
 * process reports several services (embedded mode), each with its own resource.
 */
class ServiceRoutingTracerProvider implements TracerProvider {
  constructor(
    private readonly providerFor: (service: string) => SdkTracerProvider,
    private readonly serviceOf: (ctx: Context) => string,
  ) {}

  getTracer(name: string, version?: string): Tracer {
    const pick = (ctx: Context): Tracer => this.providerFor(this.serviceOf(ctx)).getTracer(name, version);
    return {
      startSpan: (spanName: string, options?: SpanOptions, ctx?: Context): Span =>
        pick(ctx ?? context.active()).startSpan(spanName, options, ctx),
      startActiveSpan: ((...args: unknown[]) => {
        const ctx = args.length >= 4 ? (args[2] as Context) : context.active();
        return (pick(ctx).startActiveSpan as (...a: unknown[]) => unknown)(...args);
      }) as Tracer['startActiveSpan'],
    };
  }
}
