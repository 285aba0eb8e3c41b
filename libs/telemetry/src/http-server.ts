import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { type Span, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import { tracer } from './spans';
import { withService } from './service-context';

const SPANS = new WeakMap<IncomingMessage, Span>();

/**
 * A Fastify `serverFactory` whose server opens a SERVER span per request (continuing an incoming
 * `traceparent`) and runs the whole request inside it, as part of app `service`. The span ends
 * when the response is finished or the connection closes; 5xx answers mark it as an error.
 */
export function tracedServerFactory(service: string) {
  return (handler: (req: IncomingMessage, res: ServerResponse) => void): Server =>
    createServer((req, res) => {
      withService(service, () => {
        const parent = propagation.extract(context.active(), req.headers);
        const method = req.method ?? 'GET';
        const span = tracer().startSpan(
          method,
          {
            kind: SpanKind.SERVER,
            attributes: {
              'http.request.method': method,
              'url.path': (req.url ?? '/').split('?', 1)[0] ?? '/',
            },
          },
          parent,
        );
        SPANS.set(req, span);
        const ctx = trace.setSpan(parent, span);
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          span.setAttribute('http.response.status_code', res.statusCode);
          if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        };
        res.once('finish', end);
        res.once('close', end);
        // The body arrives through the request's events: bind them, or the handler that runs
        // after the body is read would run outside the span.
        context.bind(ctx, req);
        context.bind(ctx, res);
        context.with(ctx, () => handler(req, res));
      });
    });
}

/** Names the request's span after its route (`POST /v2/executions`), once the router knows it. */
export function nameHttpSpan(req: IncomingMessage, method: string, route: string | undefined): void {
  const span = SPANS.get(req);
  if (!span || !route) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute('http.route', route);
}
