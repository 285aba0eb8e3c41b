import { AppError, HTTP_STATUS_BY_KIND, OverLimitError } from '@osc/errors';
import type { ServiceKind } from '../context/request-context';

/** What an error becomes on the wire: status, body and any extra headers. */
export interface WireError {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/**
 * Mistral renders WSME faults (`faultcode` Client/Server) on JSON endpoints and a bare
 * `{"faultstring"}` on the text-body definition uploads.
 */
export type MistralErrorShape = 'wsme' | 'text';

export function mistralErrorBody(
  status: number,
  message: string,
  shape: MistralErrorShape = 'wsme',
): unknown {
  if (shape === 'text') return { faultstring: message };
  return { faultcode: status >= 500 ? 'Server' : 'Client', faultstring: message, debuginfo: null };
}

const CINDER_FAULT_NAMES: Readonly<Record<number, string>> = {
  400: 'badRequest',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'itemNotFound',
  405: 'badMethod',
  409: 'conflictingRequest',
  413: 'overLimit',
  415: 'badMediaType',
  501: 'notImplemented',
  503: 'serviceUnavailable',
};

/** Cinder's fault body: `{"<faultName>": {"code": status, "message": text}}`. */
export function cinderErrorBody(status: number, message: string, retryAfter?: number): unknown {
  const name = CINDER_FAULT_NAMES[status] ?? 'computeFault';
  const fault: Record<string, unknown> = { code: status, message };
  if (retryAfter !== undefined) fault['retryAfter'] = String(retryAfter);
  return { [name]: fault };
}

export const GENERIC_500_MESSAGE =
  'The server has either erred or is incapable of performing the requested operation.';

/** Status and message of anything thrown, without leaking internals of unexpected errors. */
export function classifyError(
  err: unknown,
  requestId: string,
): { status: number; message: string; retryAfter?: number; expected: boolean } {
  if (err instanceof AppError) {
    const status = HTTP_STATUS_BY_KIND[err.kind];
    const retryAfter = err instanceof OverLimitError ? err.retryAfter : undefined;
    if (status >= 500 && err.kind === 'internal') {
      return { status, message: `${GENERIC_500_MESSAGE} (request ${requestId})`, expected: false };
    }
    return { status, message: err.message, retryAfter, expected: status < 500 };
  }
  const anyErr = err as {
    statusCode?: unknown;
    status?: unknown;
    message?: unknown;
    code?: unknown;
    getStatus?: () => number;
    getResponse?: () => unknown;
  } | null;
  if (anyErr && typeof anyErr.getStatus === 'function') {
    // NestJS HttpException (unknown routes, framework-level refusals).
    const status = anyErr.getStatus();
    if (status < 500)
      return {
        status,
        message: nestMessage(status, anyErr.getResponse?.(), String(anyErr.message ?? '')),
        expected: true,
      };
  }
  if (isDataException(err)) {
    // PostgreSQL refused a value the request carried (SQLSTATE class 22: a NUL character, a JSON
    // \u0000, a string over its column's width, a malformed uuid or timestamp, a number out of
    // range). Only input causes these; the message names the rule, never the value.
    return { status: 400, message: DATA_EXCEPTION_MESSAGE, expected: true };
  }
  const statusCode = typeof anyErr?.statusCode === 'number' ? anyErr.statusCode : undefined;
  if (statusCode !== undefined && statusCode >= 400 && statusCode < 500) {
    // Fastify lifecycle errors: invalid JSON, body too large, unsupported media type.
    return {
      status: statusCode,
      message: fastifyMessage(String(anyErr?.code ?? ''), String(anyErr?.message ?? '')),
      expected: true,
    };
  }
  return { status: 500, message: `${GENERIC_500_MESSAGE} (request ${requestId})`, expected: false };
}

export const DATA_EXCEPTION_MESSAGE =
  'The request contains a value that cannot be stored (invalid characters or too long).';

/** A database error of SQLSTATE class 22 (data exception), from pg, PGlite or TypeORM's wrapper. */
function isDataException(err: unknown): boolean {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = typeof e?.code === 'string' ? e.code : e?.driverError?.code;
  return typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
}

function nestMessage(status: number, response: unknown, fallback: string): string {
  if (status === 404) return 'The resource could not be found.';
  if (status === 405) return 'The method specified is not allowed for this resource.';
  const msg = (response as { message?: unknown } | undefined)?.message;
  if (typeof msg === 'string') return msg;
  if (Array.isArray(msg)) return msg.join('; ');
  return fallback;
}

function fastifyMessage(code: string, message: string): string {
  switch (code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Malformed request body';
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request is too large.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported Content-Type';
    default:
      return message;
  }
}

export function toWireError(
  service: ServiceKind,
  err: unknown,
  requestId: string,
  mistralShape: MistralErrorShape = 'wsme',
): WireError & { expected: boolean } {
  const classified = classifyError(err, requestId);
  // Mistral's size limit is an input error: an over-large body is a 400 there, a 413 in Cinder.
  const c = service === 'workflow' && classified.status === 413 ? { ...classified, status: 400 } : classified;
  const headers: Record<string, string> = {};
  if (c.retryAfter !== undefined) headers['retry-after'] = String(c.retryAfter);
  const body =
    service === 'workflow'
      ? mistralErrorBody(c.status, c.message, mistralShape)
      : cinderErrorBody(c.status, c.message, c.retryAfter);
  return { status: c.status, body, headers, expected: c.expected };
}
