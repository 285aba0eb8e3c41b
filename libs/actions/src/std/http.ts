import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { type Dispatcher } from 'undici';
import { SpanKind } from '@opentelemetry/api';
import { inSpan, injectHeaders } from '@osc/telemetry';
import { ActionException, type ActionImplementation, type ActionScope, failure, success } from '../action';
import { isTruthy, pyFloat, pyFormat } from '../python-values';
import { type EgressPolicy } from './egress';

const STD = 'mistral.actions.std_actions';
const MAX_REDIRECTS = 30;

/** The result map of std.http, shaped as the reference builds it (DSL-17.4). */
export interface HttpActionResult {
  content: unknown;
  status: number;
  headers: Record<string, string>;
  url: string;
  history: string[];
  encoding: string | null;
  reason: string;
  cookies: Record<string, string>;
  elapsed: number;
}

interface RawResponse {
  status: number;
  reason: string;
  headers: Record<string, string>;
  setCookies: string[];
  body: Buffer;
}

interface PreparedRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  timeoutMs: number;
  followRedirects: boolean;
  dispatcher: Dispatcher;
}

/** std.http: a real HTTP request (undici); the response as a map, an error map for a status outside 200–306. */
export const httpAction: ActionImplementation = {
  name: 'std.http',
  className: `${STD}.HTTPAction`,
  run: async (input, scope) => sendHttpAction(input, scope, {}),
};

/**
 * std.mistral_http: std.http plus the execution headers (DSL-17.5). Asynchronous: a response inside
 * 200–306 leaves the action RUNNING until a result is posted to `Mistral-Callback-URL`; any failure
 * completes it at once.
 */
export const mistralHttpAction: ActionImplementation = {
  name: 'std.mistral_http',
  className: `${STD}.MistralHTTPAction`,
  run: async (input, scope) => {
    const { ctx } = scope;
    const outcome = await sendHttpAction(input, scope, {
      'Mistral-Workflow-Name': ctx.workflowName,
      'Mistral-Workflow-Execution-Id': ctx.workflowExecutionId,
      'Mistral-Task-Id': ctx.taskExecutionId,
      'Mistral-Action-Execution-Id': ctx.actionExecutionId,
      'Mistral-Callback-URL': ctx.callbackUrl ?? `/v2/action_executions/${ctx.actionExecutionId}`,
    });
    return outcome.kind === 'success' ? { kind: 'async' } : outcome;
  },
};

async function sendHttpAction(
  input: Readonly<Record<string, unknown>>,
  scope: ActionScope,
  extraHeaders: Record<string, string>,
): ReturnType<ActionImplementation['run']> {
  const request = prepare(input, scope, extraHeaders);
  // A CLIENT span per call; the called service continues the trace from `traceparent` (unless the
  // workflow set its own). The span names the host and path, never the query or credentials.
  return inSpan(
    `std.http ${request.method}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': request.method,
        'server.address': request.url.hostname,
        'url.path': request.url.pathname,
      },
    },
    async (span) => {
      if (!findKey(request.headers, 'traceparent'))
        request.headers = injectHeaders(request.headers) ?? request.headers;
      try {
        const outcome = await exchange(request, scope);
        const answer = (
          outcome.kind === 'success' ? outcome.result : outcome.kind === 'error' ? outcome.error : undefined
        ) as { status?: unknown } | undefined;
        if (typeof answer?.status === 'number') span.setAttribute('http.response.status_code', answer.status);
        return outcome;
      } finally {
        if (!scope.config.http.egress.isShared(request.dispatcher)) {
          await request.dispatcher.close().catch(() => undefined);
        }
      }
    },
  );
}

async function exchange(
  request: PreparedRequest,
  scope: ActionScope,
): ReturnType<ActionImplementation['run']> {
  const started = performance.now();
  const history: string[] = [];
  let current = request;
  let response: RawResponse;
  for (;;) {
    try {
      response = await sendOnce(current, scope.signal, scope.config.http.maxResponseBytes);
    } catch (e) {
      throw new ActionException(`Failed to send HTTP request: ${transportReason(e, current)}`);
    }
    const location = response.headers[findKey(response.headers, 'location') ?? ''];
    if (!current.followRedirects || !location || ![301, 302, 303, 307, 308].includes(response.status)) break;
    if (history.length >= MAX_REDIRECTS) {
      throw new ActionException(`Failed to send HTTP request: Exceeded ${MAX_REDIRECTS} redirects.`);
    }
    history.push(`<Response [${response.status}]>`);
    const next = new URL(location, current.url);
    checkLiteralHost(next, scope.config.http.egress);
    // Browsers' and requests' rule: 303 (and 301/302 for POST) continue as a GET without a body.
    const toGet =
      response.status === 303 || ([301, 302].includes(response.status) && current.method === 'POST');
    current = {
      ...current,
      url: next,
      method: toGet && current.method !== 'HEAD' ? 'GET' : current.method,
      body: toGet ? undefined : current.body,
      headers: toGet ? withoutKeys(current.headers, ['content-type', 'content-length']) : current.headers,
    };
  }
  const elapsed = (performance.now() - started) / 1000;
  const contentType = response.headers[findKey(response.headers, 'content-type') ?? ''] ?? '';
  const encoding = responseEncoding(contentType);
  const text = decode(response.body, encoding);
  let content: unknown;
  try {
    content = JSON.parse(text);
  } catch {
    content = text;
  }
  const result: HttpActionResult = {
    content,
    status: response.status,
    headers: response.headers,
    url: current.url.toString(),
    history,
    encoding,
    reason: response.reason,
    cookies: parseSetCookies(response.setCookies),
    elapsed,
  };
  return response.status >= 200 && response.status < 307 ? success(result) : failure(result);
}

function prepare(
  input: Readonly<Record<string, unknown>>,
  scope: ActionScope,
  extraHeaders: Record<string, string>,
): PreparedRequest {
  const rawUrl = input['url'];
  if (typeof rawUrl !== 'string')
    throw new ActionException(`Failed to send HTTP request: Invalid URL ${pyFormat(rawUrl)}`);
  if (!/^[a-z][a-z0-9+.-]*:/i.test(rawUrl)) {
    throw new ActionException(
      `Failed to send HTTP request: Invalid URL '${rawUrl}': No scheme supplied. Perhaps you meant https://${rawUrl}?`,
    );
  }
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new ActionException(`Failed to send HTTP request: Invalid URL '${rawUrl}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ActionException(
      `Failed to send HTTP request: No connection adapters were found for '${rawUrl}'`,
    );
  }
  checkLiteralHost(url, scope.config.http.egress);
  appendParams(url, input['params']);

  const body = input['body'];
  const json = input['json'];
  if (isTruthy(body) && isTruthy(json)) {
    throw new ActionException("Only one of the parameters 'json' and 'body' can be passed");
  }
  const headers: Record<string, string> = {};
  const rawHeaders = input['headers'];
  if (rawHeaders !== null && rawHeaders !== undefined) {
    if (typeof rawHeaders !== 'object' || Array.isArray(rawHeaders)) {
      throw new ActionException('Failed to send HTTP request: headers must be a map');
    }
    for (const [k, v] of Object.entries(rawHeaders))
      if (v !== null && v !== undefined) headers[k] = pyFormat(v);
  }
  let payload: string | undefined;
  if (json !== null && json !== undefined) {
    payload = JSON.stringify(json);
    if (!findKey(headers, 'content-type')) headers['Content-Type'] = 'application/json';
  } else if (body !== null && body !== undefined) {
    payload = typeof body === 'string' ? body : JSON.stringify(body);
  }
  const cookies = input['cookies'];
  if (cookies && typeof cookies === 'object' && !Array.isArray(cookies)) {
    const pairs = Object.entries(cookies).map(([k, v]) => `${k}=${pyFormat(v)}`);
    if (pairs.length > 0) headers['Cookie'] = pairs.join('; ');
  }
  const auth = input['auth'];
  if (auth !== null && auth !== undefined && auth !== '') {
    const parts = typeof auth === 'string' ? auth.split(':') : [];
    if (parts.length !== 2)
      throw new ActionException("Failed to send HTTP request: auth must be 'user:password'");
    headers['Authorization'] = `Basic ${Buffer.from(`${parts[0]}:${parts[1]}`, 'latin1').toString('base64')}`;
  }
  Object.assign(headers, extraHeaders);

  return {
    url,
    method:
      typeof input['method'] === 'string' && input['method'] !== '' ? input['method'].toUpperCase() : 'GET',
    headers,
    body: payload,
    timeoutMs: timeoutMs(input['timeout'], scope.config.http.defaultTimeoutMs),
    followRedirects: isTruthy(input['allow_redirects']),
    dispatcher: dispatcherFor(url, input['verify'], input['proxies'], scope.config.http.egress),
  };
}

/** requests' `params`: a map (list values repeat the key, null values are dropped) or a query string. */
function appendParams(url: URL, params: unknown): void {
  if (params === null || params === undefined || params === '') return;
  if (typeof params === 'string') {
    url.search = url.search ? `${url.search}&${params}` : params;
    return;
  }
  if (typeof params !== 'object' || Array.isArray(params)) {
    throw new ActionException('Failed to send HTTP request: params must be a map or a query string');
  }
  for (const [k, v] of Object.entries(params)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item !== null && item !== undefined) url.searchParams.append(k, pyFormat(item));
    }
  }
}

/** requests' `timeout` in seconds: a number, or `[connect, read]` (the larger bounds each wait here). */
function timeoutMs(value: unknown, fallback: number): number {
  if (value === null || value === undefined) return fallback;
  const seconds = Array.isArray(value) ? Math.max(...value.map((v) => pyFloat(v) ?? 0)) : pyFloat(value);
  if (seconds === undefined || !(seconds > 0))
    throw new ActionException(`Failed to send HTTP request: invalid timeout ${pyFormat(value)}`);
  return seconds * 1000;
}

/**
 * The dispatcher of one request. Proxies are refused (the executor egress is the deployment's
 * business); Mistral passes `verify` only for https URLs: false disables certificate checks, a string
 * names a CA bundle file.
 */
function dispatcherFor(url: URL, verify: unknown, proxies: unknown, egress: EgressPolicy): Dispatcher {
  if (isTruthy(proxies))
    throw new ActionException('Failed to send HTTP request: proxies are not supported by this service');
  if (url.protocol === 'https:') {
    if (verify === false) return egress.agent('insecure');
    if (typeof verify === 'string' && verify !== '') {
      let ca: Buffer;
      try {
        ca = readFileSync(verify);
      } catch {
        throw new ActionException(
          `Failed to send HTTP request: Could not find a suitable TLS CA certificate bundle, invalid path: ${verify}`,
        );
      }
      return egress.newAgent({ ca });
    }
  }
  return egress.agent('verify');
}

/** An IP-literal host never goes through the agent's lookup: check it here (first URL and redirects). */
function checkLiteralHost(url: URL, egress: EgressPolicy): void {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && egress.isDenied(host)) {
    throw new ActionException(`Failed to send HTTP request: Host '${host}' is in a denied network.`);
  }
}

function sendOnce(req: PreparedRequest, signal: AbortSignal, maxBytes: number): Promise<RawResponse> {
  return new Promise<RawResponse>((resolve, reject) => {
    let abort: ((err?: Error) => void) | undefined;
    let settled = false;
    const chunks: Buffer[] = [];
    let size = 0;
    let head: Omit<RawResponse, 'body'> | undefined;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = (): void => {
      const err = new Error('The request was aborted');
      abort?.(err);
      finish(() => reject(err));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const headers: Record<string, string> = { ...req.headers };
    if (!findKey(headers, 'user-agent')) headers['User-Agent'] = 'osc-workflow/std.http';
    req.dispatcher.dispatch(
      {
        origin: req.url.origin,
        path: `${req.url.pathname}${req.url.search}`,
        method: req.method as Dispatcher.HttpMethod,
        headers,
        body: req.body,
        headersTimeout: req.timeoutMs,
        bodyTimeout: req.timeoutMs,
      },
      {
        onConnect: (fn) => {
          abort = fn;
          if (settled) fn(new Error('The request was aborted')); // aborted before the connection was made
        },
        onHeaders: (status, raw, _resume, reason) => {
          head = { status, reason, ...collectHeaders(raw) };
          return true;
        },
        onData: (chunk) => {
          size += chunk.length;
          if (size > maxBytes) {
            const err = new Error(`HTTP response is too large (limit=${maxBytes} bytes).`);
            abort?.(err);
            finish(() => reject(err));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete: () => {
          finish(() =>
            head
              ? resolve({ ...head, body: Buffer.concat(chunks) })
              : reject(new Error('response without status line')),
          );
        },
        onError: (err) => finish(() => reject(err)),
      },
    );
  });
}

/** requests' header map: the server's spelling, repeated headers joined with `, `. */
function collectHeaders(raw: Buffer[] | string[] | null): {
  headers: Record<string, string>;
  setCookies: string[];
} {
  const headers: Record<string, string> = {};
  const lowerToKey = new Map<string, string>();
  const setCookies: string[] = [];
  const list = raw ?? [];
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = String(list[i]);
    const value = String(list[i + 1]);
    if (name.toLowerCase() === 'set-cookie') setCookies.push(value);
    const key = lowerToKey.get(name.toLowerCase());
    if (key === undefined) {
      lowerToKey.set(name.toLowerCase(), name);
      headers[name] = value;
    } else {
      headers[key] = `${headers[key]}, ${value}`;
    }
  }
  return { headers, setCookies };
}

function parseSetCookies(values: readonly string[]): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const v of values) {
    const pair = v.split(';', 1)[0] ?? '';
    const eq = pair.indexOf('=');
    if (eq > 0) cookies[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return cookies;
}

/** requests' `Response.encoding`: the charset parameter; `ISO-8859-1` for text types without one. */
function responseEncoding(contentType: string): string | null {
  const charset = /charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType);
  if (charset?.[1]) return charset[1];
  return contentType.toLowerCase().startsWith('text') ? 'ISO-8859-1' : null;
}

function decode(body: Buffer, encoding: string | null): string {
  try {
    return new TextDecoder(encoding && encoding.toLowerCase() !== 'iso-8859-1' ? encoding : 'utf-8').decode(
      body,
    );
  } catch {
    return body.toString('utf8');
  }
}

function transportReason(e: unknown, req: PreparedRequest): string {
  const err = e as { code?: string; message?: string; cause?: { message?: string } };
  const port = req.url.port || (req.url.protocol === 'https:' ? '443' : '80');
  const pool = `${req.url.protocol === 'https:' ? 'HTTPS' : 'HTTP'}ConnectionPool(host='${req.url.hostname}', port=${port})`;
  if (err.code === 'UND_ERR_HEADERS_TIMEOUT' || err.code === 'UND_ERR_BODY_TIMEOUT') {
    return `${pool}: Read timed out. (read timeout=${req.timeoutMs / 1000})`;
  }
  if (err.code === 'UND_ERR_CONNECT_TIMEOUT') return `${pool}: Connection timed out.`;
  const detail = err.cause?.message ?? err.message ?? String(e);
  return `${pool}: ${detail}`;
}

const findKey = (headers: Record<string, string>, lower: string): string | undefined =>
  Object.keys(headers).find((k) => k.toLowerCase() === lower);

const withoutKeys = (headers: Record<string, string>, lowers: string[]): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => !lowers.includes(k.toLowerCase())));
