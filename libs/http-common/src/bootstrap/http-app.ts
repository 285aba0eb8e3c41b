import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import {
  type ArgumentsHost,
  Catch,
  type ExceptionFilter,
  type INestApplication,
  createParamDecorator,
  type ExecutionContext,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { type AppError, InvalidInputError, NotFoundError, UnauthorizedError } from '@osc/errors';
import { nameHttpSpan, productRegistry, tracedServerFactory } from '@osc/telemetry';
import { KeystoneAuthenticator } from '../auth/keystone-authenticator';
import type { KeystoneSettings } from '../auth/keystone-settings';
import {
  type AuthMode,
  type AuthOutcome,
  type RequestContext,
  type ServiceKind,
  authenticate,
} from '../context/request-context';
import {
  type MistralErrorShape,
  cinderErrorBody,
  mistralErrorBody,
  toWireError,
} from '../errors/error-bodies';
import { AppMetrics, type ReadinessCheck, runReadiness } from '../health/metrics';
import { createJsonLogger, NestJsonLogger } from '../logging/json-logger';

declare module 'fastify' {
  interface FastifyRequest {
    requestContext: RequestContext | null;
    /** Mistral renders text-endpoint errors as a bare faultstring; controllers may set this. */
    mistralErrorShape: MistralErrorShape | null;
  }
}

export interface HttpAppOptions {
  /** App name for logs and metrics, e.g. `workflow-api`. */
  app: string;
  service: ServiceKind;
  authMode: AuthMode;
  /** Required when `authMode` is `keystone`: how to reach Keystone (see `loadAuthConfig`). */
  keystone?: KeystoneSettings;
  /** Largest accepted request body in bytes. */
  bodyLimit: number;
  logLevel: string;
  /** Where log lines go (default stdout); tests capture them to check that no secret is logged. */
  logStream?: { write(line: string): void };
  readiness: readonly ReadinessCheck[];
  /** Paths served without authentication (version documents, health). */
  isPublicPath?: (path: string, method: string) => boolean;
  /** Hook for service-specific request handling run after authentication (e.g. microversions). */
  onRequest?: (request: FastifyRequest, reply: FastifyReply) => Promise<void> | void;
}

const ALWAYS_PUBLIC = new Set(['/healthz', '/readyz', '/metrics']);

/** Most body bytes read and dropped after an early answer before the connection is cut. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

/** One registered route: method and URL pattern (`/v3/:project_id/volumes`). */
export interface RouteInfo {
  readonly method: string;
  readonly url: string;
}

const ROUTES = new WeakMap<object, RouteInfo[]>();

/**
 * Every route of an app made by `createHttpApp` (after `init()`), HEAD routes left out: for tests
 * that walk the whole surface, e.g. "every route answers 401 without a valid token".
 */
export function listRoutes(app: NestFastifyApplication): RouteInfo[] {
  return [...(ROUTES.get(app.getHttpAdapter().getInstance()) ?? [])];
}

/** The request context of the current request; controllers take it with `@Ctx() ctx: RequestContext`. */
export const Ctx = createParamDecorator((_data: unknown, ctx: ExecutionContext): RequestContext => {
  const req = ctx.switchToHttp().getRequest<FastifyRequest>();
  if (!req.requestContext) throw new UnauthorizedError('The request you have made requires authentication.');
  return req.requestContext;
});

/**
 * The one place where anything thrown during a request becomes a response in the service's wire
 * format. 4xx are logged at warn, 5xx at error with the request id.
 */
@Catch()
export class OpenStackExceptionFilter implements ExceptionFilter {
  constructor(private readonly service: ServiceKind) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendError(this.service, exception, http.getRequest<FastifyRequest>(), http.getResponse<FastifyReply>());
  }
}

function sendError(
  service: ServiceKind,
  exception: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const shape: MistralErrorShape =
    request.mistralErrorShape ??
    (String(request.headers['content-type'] ?? '').startsWith('text/plain') ? 'text' : 'wsme');
  const wire = toWireError(service, exception, String(request.id), shape);
  if (wire.status >= 500) request.log.error({ err: exception, reqId: request.id }, 'request failed');
  else
    request.log.warn(
      { status: wire.status, reqId: request.id, url: request.url },
      String((exception as Error)?.message ?? ''),
    );
  if (reply.sent) return;
  void reply.code(wire.status).headers(wire.headers).type('application/json').send(wire.body);
}

/**
 * What a router refusal means to the client. A path that is not valid percent-encoded UTF-8 is a
 * bad request; a path parameter longer than any id or name (maxParamLength) names nothing there is,
 * so it is the 404 an unknown resource gets.
 */
function routerRefusal(error: Error & { code?: string }): AppError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new NotFoundError('Resource', 'path', 'The resource could not be found.');
  return new InvalidInputError('Invalid URL: the path is not valid percent-encoded UTF-8.');
}

/**
 * A request Node's HTTP parser refused (bytes that are not HTTP, headers over the size limit, a
 * client too slow with its headers): an answer in the service's error format, then the connection
 * is closed, saying so (`Connection: close`) so a keep-alive client does not send its next request
 * on it and lose it to the close.
 */
function answerMalformedRequest(
  service: ServiceKind,
  error: Error & { code?: string },
  socket: Socket,
): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request header fields too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request was not received in time.']
        : [400, 'Malformed HTTP request.'];
  const payload = JSON.stringify(
    service === 'workflow' ? mistralErrorBody(status, message) : cinderErrorBody(status, message),
  );
  const started =
    (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !started) {
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`,
    );
  }
  socket.destroySoon();
}

/**
 * Build a NestJS application on Fastify with the cross-cutting behaviour every API shares:
 * request ids, authentication into a request context, the service's error format, body limits,
 * `/healthz`, `/readyz` and `/metrics`. The caller adds routes through `module` and listens.
 */
export async function createHttpApp(module: unknown, opts: HttpAppOptions): Promise<NestFastifyApplication> {
  const logger = createJsonLogger({ app: opts.app, level: opts.logLevel, stream: opts.logStream });
  const adapter = new FastifyAdapter({
    bodyLimit: opts.bodyLimit,
    genReqId: () => `req-${randomUUID()}`,
    // One info line per request, written by our onResponse hook (method, route, status, duration),
    // instead of Fastify's two (incoming, completed).
    logController: new LogController({ disableRequestLogging: true }),
    loggerInstance: logger,
    // Clients send odd but valid URLs (double slashes, trailing slashes); be lenient like upstream.
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 1000 },
    // A SERVER span per request (OpenTelemetry; a no-op unless tracing is configured).
    serverFactory: tracedServerFactory(opts.app),
    // Refusals of Fastify's router (an undecodable path, a parameter over maxParamLength) and of
    // Node's HTTP parser answer in the service's error format like everything else.
    frameworkErrors: (error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply) =>
      sendError(opts.service, routerRefusal(error), request, reply),
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) =>
      answerMalformedRequest(opts.service, error, socket),
  } as ConstructorParameters<typeof FastifyAdapter>[0]);
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: new NestJsonLogger(logger),
    // Our own JSON parser below gives every malformed body the same 400.
    bodyParser: false,
  });
  const fastify = app.getHttpAdapter().getInstance() as unknown as FastifyInstance;
  installHooks(fastify, opts);
  app.useGlobalFilters(new OpenStackExceptionFilter(opts.service));
  return app;
}

function installHooks(fastify: FastifyInstance, opts: HttpAppOptions): void {
  const metrics = new AppMetrics(opts.app);
  const authenticateRequest = requestAuthenticator(opts, fastify);
  const routes: RouteInfo[] = [];
  ROUTES.set(fastify, routes);
  fastify.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) {
      if (method !== 'HEAD') routes.push({ method, url: route.url });
    }
  });
  fastify.decorateRequest('requestContext', null);
  fastify.decorateRequest('mistralErrorShape', null);

  // Definition uploads (Mistral) are raw YAML text.
  fastify.addContentTypeParser(
    ['text/plain', 'application/x-yaml', 'text/yaml'],
    { parseAs: 'string' },
    (_req, body, done) => done(null, body),
  );
  if (opts.service === 'workflow') {
    // Mistral reads an upload body whatever its Content-Type; python clients (the tempest plugin) send none.
    fastify.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
      if (req.headers['content-type'] === undefined) return done(null, body);
      done(
        Object.assign(new Error('Unsupported Media Type'), {
          statusCode: 415,
          code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE',
        }),
        undefined,
      );
    });
  }
  const jsonTypes =
    opts.service === 'block-storage'
      ? ['application/json', 'application/vnd.openstack.volume+json']
      : ['application/json'];
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser(jsonTypes, { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim().length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(text, rejectProtoKeys));
    } catch {
      done(
        Object.assign(new Error('Malformed request body'), {
          statusCode: 400,
          code: 'FST_ERR_CTP_INVALID_JSON_BODY',
        }),
        undefined,
      );
    }
  });

  fastify.addHook('onRequest', async (request, reply) => {
    nameHttpSpan(request.raw, request.method, request.routeOptions.url);
    void reply.header('x-openstack-request-id', request.id);
    if (opts.service === 'block-storage') void reply.header('x-compute-request-id', request.id);
    const path = request.url.split('?', 1)[0] ?? '/';
    if (ALWAYS_PUBLIC.has(path)) return;
    if (opts.isPublicPath?.(path, request.method)) {
      if (request.headers['x-auth-token'] || request.headers['x-project-id']) {
        const out = await authenticateRequest(request);
        if (out.kind === 'context') request.requestContext = out.context;
      }
    } else {
      const out = await authenticateRequest(request);
      if (out.kind === 'respond') {
        if (out.exact) {
          await reply.code(out.status).headers(out.headers).type('application/json').send(out.body);
        } else if (out.status === 401) {
          sendError(
            opts.service,
            new UnauthorizedError('The request you have made requires authentication.'),
            request,
            reply,
          );
        } else {
          await reply
            .code(out.status)
            .headers(out.headers)
            .send(out.body ?? '');
        }
        return reply;
      }
      request.requestContext = out.context;
    }
    if (opts.onRequest) await opts.onRequest(request, reply);
    return undefined;
  });

  // An answer given before the request body was read (a body over the limit; Fastify then asks
  // for `Connection: close`) must reach a client that is still sending. Closing a socket with
  // unread bytes makes the kernel reset the connection, which fails the client's writes and drops
  // the answer from its buffers. So the connection stays open and the rest of the body is read
  // and dropped (after it the connection serves the next request); a client sending more than
  // DRAIN_LIMIT bytes beyond the answer is cut off.
  fastify.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.complete || raw.readableEnded) return payload;
    reply.removeHeader('connection');
    let drained = 0;
    const limit = Math.max(DRAIN_LIMIT, 4 * opts.bodyLimit);
    const onData = (chunk: Buffer | string) => {
      drained += chunk.length;
      if (drained > limit) raw.socket?.destroy();
    };
    raw.on('data', onData);
    raw.once('end', () => raw.off('data', onData));
    raw.resume();
    return payload;
  });

  fastify.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions?.url ?? 'unmatched';
    metrics.httpDuration
      .labels(request.method, route, String(reply.statusCode))
      .observe(reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) metrics.httpErrors.labels(String(reply.statusCode)).inc();
    if (!ALWAYS_PUBLIC.has(route)) {
      request.log.info(
        {
          method: request.method,
          route,
          status: reply.statusCode,
          durationMs: Math.round(reply.elapsedTime * 100) / 100,
        },
        'request completed',
      );
    }
  });

  // NestJS installs the Fastify error handler and hands lifecycle errors (body parsing, limits) to
  // the global filter above, so they get the same wire format.

  fastify.get('/healthz', async () => ({ status: 'ok' }));
  fastify.get('/readyz', async (_req, reply) => {
    const r = await runReadiness(opts.readiness);
    return reply.code(r.ok ? 200 : 503).send({ status: r.ok ? 'ok' : 'unavailable', checks: r.checks });
  });
  // This app's HTTP and process metrics, then the process's product metrics (docs/metrics.md).
  fastify.get('/metrics', async (_req, reply) => {
    const [own, product] = await Promise.all([metrics.registry.metrics(), productRegistry.metrics()]);
    return reply.type(metrics.registry.contentType).send(`${own.trimEnd()}\n${product}`);
  });
}

/**
 * The auth mode's authenticator. In keystone mode a cache hit resolves without I/O; Keystone
 * outages are logged at warn without tokens.
 */
function requestAuthenticator(
  opts: HttpAppOptions,
  fastify: FastifyInstance,
): (request: FastifyRequest) => AuthOutcome | Promise<AuthOutcome> {
  const mode = opts.authMode;
  if (mode === 'keystone') {
    if (!opts.keystone) throw new Error(`${opts.app}: auth mode keystone needs keystone settings`);
    const keystone = new KeystoneAuthenticator(opts.keystone, {
      warn: (message) => fastify.log.warn(message),
    });
    return (request) => keystone.authenticate(request.headers, String(request.id));
  }
  return (request) => authenticate(mode, opts.service, request.headers, String(request.id), fullUrl(request));
}

/** JSON reviver that drops `__proto__` keys so no body can pollute prototypes. */
function rejectProtoKeys(key: string, value: unknown): unknown {
  return key === '__proto__' ? undefined : value;
}

/** Scheme and host the client used (honouring proxies), for links in responses. */
export function requestBaseUrl(request: FastifyRequest, configured?: string): string {
  if (configured) return configured.replace(/\/+$/, '');
  const fwdHost = request.headers['x-forwarded-host'];
  const fwdProto = request.headers['x-forwarded-proto'];
  const host = (Array.isArray(fwdHost) ? fwdHost[0] : fwdHost) ?? request.headers.host ?? 'localhost';
  const proto = (Array.isArray(fwdProto) ? fwdProto[0] : fwdProto) ?? request.protocol ?? 'http';
  return `${proto}://${host}`;
}

function fullUrl(request: FastifyRequest): string {
  return `${requestBaseUrl(request)}${request.url}`;
}

/** Close a Nest app, swallowing errors from already-closed resources. */
export async function closeQuietly(app: INestApplication | undefined): Promise<void> {
  if (!app) return;
  try {
    await app.close();
  } catch {
    /* already closed */
  }
}
