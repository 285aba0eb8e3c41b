import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  DEFAULT_MICROVERSION,
  microversionResponseHeaders,
  negotiateMicroversion,
  type LinkContext,
  type Microversion,
  type ViewContext,
} from '@osc/block-storage-domain';
import { InvalidInputError, NotFoundError, UnauthorizedError, UnsupportedMediaTypeError } from '@osc/errors';
import { requestBaseUrl, type RequestContext } from '@osc/http-common';
import { type Credentials, type PolicyEnforcer, cinderPolicy, credentialsOf } from '@osc/policy';

declare module 'fastify' {
  interface FastifyRequest {
    /** Negotiated microversion (3.0 on v2 and on requests without the header). */
    volumeMicroversion?: Microversion;
    /** The project id segment of the URL, when the request had one (links repeat it, BS-1.8). */
    volumeProjectSegment?: string | null;
    volumeApiPrefix?: 'v2' | 'v3';
    /** The app's policy enforcer (Cinder's defaults over the deployment's file). */
    volumePolicy?: PolicyEnforcer;
  }
}

/**
 * First path segments after `/v3/` that are collections, not a project id. Anything else in that
 * position is a project segment (BS-1.2, BS-1.3).
 */
const COLLECTIONS = new Set([
  'volumes',
  'types',
  'snapshots',
  'extensions',
  'default-types',
  'scheduler-stats',
  'os-quota-sets',
  'os-quota-class-sets',
  'limits',
  'os-availability-zone',
  'backups',
  'os-volume-transfer',
  'volume-transfers',
  'capabilities',
  'os-hosts',
  'qos-specs',
  'attachments',
  'groups',
  'group_types',
  'group_snapshots',
  'consistencygroups',
  'cgsnapshots',
  'messages',
  'resource_filters',
  'os-services',
  'clusters',
  'workers',
  'manageable_volumes',
  'manageable_snapshots',
  'os-volume-manage',
  'os-snapshot-manage',
  'os-backup-policies',
]);

const PROJECT_SEGMENT = /^[0-9a-f-]+$/;

/**
 * The volume-api part of request handling, run after authentication: negotiates the microversion
 * (BS-4.3) and sets the response headers of BS-4.5 on every `/v3` and `/` response (errors
 * included), and checks the project segment of the URL (BS-1.3). v2 ignores microversions
 * (BS-4.7) and needs the project segment.
 */
export async function volumeApiOnRequest(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const path = request.url.split('?', 1)[0] ?? '/';
  const segments = path.split('/').filter((s) => s.length > 0);
  const root = segments[0];
  rejectTrailingSlash(path, segments);
  if (root === 'v2') {
    assertJsonBody(request);
    request.volumeApiPrefix = 'v2';
    request.volumeMicroversion = DEFAULT_MICROVERSION;
    request.volumeProjectSegment = segments[1] ?? null;
    checkProject(request, segments[1]);
    return;
  }
  if (root === undefined) {
    let mv = DEFAULT_MICROVERSION;
    try {
      mv = negotiateMicroversion(request.headers);
    } catch {
      // The version list answers whatever was asked; a bad header only matters below /v3.
    }
    void reply.headers(microversionResponseHeaders(mv));
    return;
  }
  if (root !== 'v3') return;
  request.volumeApiPrefix = 'v3';
  void reply.headers(microversionResponseHeaders(DEFAULT_MICROVERSION));
  const mv = negotiateMicroversion(request.headers);
  request.volumeMicroversion = mv;
  void reply.headers(microversionResponseHeaders(mv));
  assertJsonBody(request);
  const first = segments[1];
  if (first === undefined || COLLECTIONS.has(first)) {
    request.volumeProjectSegment = null;
    return;
  }
  request.volumeProjectSegment = first;
  checkProject(request, first);
}

/** {@link volumeApiOnRequest} for an app whose requests are judged by `policy`. */
export const volumeApiOnRequestWith =
  (policy: PolicyEnforcer) =>
  (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    request.volumePolicy = policy;
    return volumeApiOnRequest(request, reply);
  };

/**
 * Cinder's router has no trailing-slash forms: `GET /v3/{project}/volumes/` (or `/types/`,
 * `/volumes/{id}/`) matches no route and answers 404, where Fastify would otherwise ignore the
 * slash. The version roots (`/v3/`, `/v3/{project}/`) keep answering.
 */
function rejectTrailingSlash(path: string, segments: readonly string[]): void {
  if (!path.endsWith('/') || (segments[0] !== 'v2' && segments[0] !== 'v3')) return;
  const second = segments[1];
  if (segments.length >= 3 || (segments.length === 2 && second !== undefined && COLLECTIONS.has(second))) {
    throw new NotFoundError('resource', path, 'The resource could not be found.');
  }
}

const JSON_TYPES = ['application/json', 'application/vnd.openstack.volume+json'];

/** BS-1.5: a body of another content type → 415 (a body without any content type reads as absent). */
function assertJsonBody(request: FastifyRequest): void {
  const type = request.headers['content-type'];
  if (type === undefined) return;
  const length = Number(request.headers['content-length'] ?? 0);
  if (!(length > 0) && request.headers['transfer-encoding'] === undefined) return;
  const base = (type.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (!JSON_TYPES.includes(base)) throw new UnsupportedMediaTypeError('Unsupported Content-Type');
}

function checkProject(request: FastifyRequest, segment: string | undefined): void {
  if (segment === undefined) return;
  if (!PROJECT_SEGMENT.test(segment))
    throw new NotFoundError('resource', segment, 'The resource could not be found.');
  const ctx = request.requestContext;
  if (ctx && ctx.projectId !== segment) throw new InvalidInputError('Malformed request url');
}

/** Everything a controller needs about the caller and the request. */
export interface ApiRequest {
  readonly ctx: RequestContext;
  /**
   * Cinder's `context.is_admin`: the policy rule `context_is_admin` (role admin by default). It
   * decides all_tenants, the admin-only fields and whose rows a lookup may see.
   */
  readonly isAdmin: boolean;
  /** Throws 403 with Cinder's message unless policy `rule` allows the caller on a target of `targetProject` (default: its own). */
  authorize(rule: string, targetProject?: string): void;
  /** Whether policy `rule` allows the caller on a target of `targetProject`. */
  allowed(rule: string, targetProject?: string): boolean;
  readonly mv: Microversion;
  readonly links: LinkContext;
  readonly view: ViewContext;
  readonly query: Readonly<Record<string, string | string[] | undefined>>;
  /** The collection path of the request after the API and project prefix, e.g. `volumes/detail`. */
  readonly collectionPath: string;
}

let configuredPublicUrl: string | undefined;
/** Set once at start from configuration (BS-1.8: the configured public endpoint wins). */
export const setPublicUrl = (url: string | undefined): void => {
  configuredPublicUrl = url;
};

let fallbackPolicy: PolicyEnforcer | undefined;
/** Cinder's defaults, for requests that did not pass {@link volumeApiOnRequestWith}. */
const defaultPolicy = (): PolicyEnforcer => (fallbackPolicy ??= cinderPolicy());

export function apiRequestOf(request: FastifyRequest): ApiRequest {
  const ctx = request.requestContext;
  if (!ctx) throw new UnauthorizedError('The request you have made requires authentication.');
  const mv = request.volumeMicroversion ?? DEFAULT_MICROVERSION;
  const projectSegment = request.volumeProjectSegment ?? null;
  const apiPrefix = request.volumeApiPrefix ?? 'v3';
  const links: LinkContext = {
    baseUrl: requestBaseUrl(request, configuredPublicUrl),
    projectSegment,
    apiPrefix,
  };
  const path = request.url.split('?', 1)[0] ?? '';
  const segments = path
    .split('/')
    .filter((s) => s.length > 0)
    .slice(projectSegment === null ? 1 : 2);
  const policy = request.volumePolicy ?? defaultPolicy();
  const base = credentialsOf({ ...ctx, isAdmin: false });
  const isAdmin = policy.check('context_is_admin', { project_id: ctx.projectId }, base);
  const creds: Credentials = Object.freeze({ ...base, is_admin: isAdmin });
  const target = (project: string | undefined) => ({
    project_id: project ?? ctx.projectId,
    user_id: ctx.userId,
  });
  return {
    ctx,
    isAdmin,
    authorize: (rule, targetProject) => policy.enforce(rule, target(targetProject), creds),
    allowed: (rule, targetProject) => policy.check(rule, target(targetProject), creds),
    mv,
    links,
    view: { mv, isAdmin, links },
    query: (request.query ?? {}) as Record<string, string | string[] | undefined>,
    collectionPath: segments.join('/'),
  };
}

/** `@Api() api: ApiRequest` in controllers. */
export const Api = createParamDecorator((_data: unknown, ctx: ExecutionContext): ApiRequest =>
  apiRequestOf(ctx.switchToHttp().getRequest<FastifyRequest>()),
);

/** Path prefixes every v3 (and v2) controller is mounted under (BS-1.2, BS-4.7). */
export const routes = (path: string, options: { v2?: boolean } = { v2: true }): string[] => [
  `v3/:project_id/${path}`,
  `v3/${path}`,
  ...(options.v2 === false ? [] : [`v2/:project_id/${path}`]),
];
