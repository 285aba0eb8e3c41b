/**
 * Who is calling and for which project. Built once per request by the auth mode and handed to
 * services; every query is scoped by it unless `isAdmin` and the caller asked for all projects.
 */
export interface RequestContext {
  readonly requestId: string;
  readonly userId: string | null;
  readonly projectId: string;
  readonly roles: readonly string[];
  readonly isAdmin: boolean;
  readonly authToken?: string;
  /** Set in keystone mode from the validated token (keystonemiddleware's X-User-Name etc.). */
  readonly userName?: string | null;
  readonly userDomainId?: string | null;
  readonly projectName?: string | null;
  readonly projectDomainId?: string | null;
}

export const AUTH_MODES = ['noauth', 'headers', 'keystone'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

/** The service a request is for; auth modes differ in small upstream details between the two. */
export type ServiceKind = 'workflow' | 'block-storage';

/** Mistral with auth disabled acts for this literal project id. */
export const MISTRAL_DEFAULT_PROJECT = '<default-project>';

export type HeaderBag = Readonly<Record<string, string | string[] | undefined>>;

const header = (headers: HeaderBag, name: string): string | undefined => {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** Outcome of authenticating a request: a context, or a response the edge must send as is. */
export type AuthOutcome =
  | { kind: 'context'; context: RequestContext }
  /** `exact`: send `body` as is (keystonemiddleware's own bodies) instead of the service's error format. */
  | { kind: 'respond'; status: number; headers: Record<string, string>; body?: unknown; exact?: boolean };

const splitRoles = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((r) => r.trim().toLowerCase())
    .filter((r) => r.length > 0);

/**
 * `noauth`: OpenStack's no-auth mode. The token `user:project` names the caller (no colon: the
 * project is the user) and every caller is an admin. Cinder answers a request without a token with
 * 204 and a token to use; Mistral with auth disabled acts for `<default-project>`.
 *
 * `headers`: trust X-User-Id / X-Project-Id / X-Roles from an authenticating gateway in front;
 * admin only with the `admin` role.
 */
export function authenticate(
  mode: Exclude<AuthMode, 'keystone'>,
  service: ServiceKind,
  headers: HeaderBag,
  requestId: string,
  requestUrl: string,
): AuthOutcome {
  if (mode === 'headers') {
    const projectId = header(headers, 'x-project-id') ?? header(headers, 'x-tenant-id');
    if (!projectId) {
      return {
        kind: 'respond',
        status: 401,
        headers: {},
        body: { message: 'The request you have made requires authentication.' },
      };
    }
    const roles = splitRoles(header(headers, 'x-roles'));
    return {
      kind: 'context',
      context: {
        requestId,
        userId: header(headers, 'x-user-id') ?? null,
        projectId,
        roles,
        isAdmin: roles.includes('admin'),
      },
    };
  }
  const token = header(headers, 'x-auth-token');
  if (!token) {
    if (service === 'block-storage') {
      const user = header(headers, 'x-auth-user') ?? 'admin';
      const project = header(headers, 'x-auth-project-id') ?? 'admin';
      return {
        kind: 'respond',
        status: 204,
        headers: { 'x-auth-token': `${user}:${project}`, 'x-server-management-url': requestUrl },
      };
    }
    return {
      kind: 'context',
      context: {
        requestId,
        userId: null,
        projectId: MISTRAL_DEFAULT_PROJECT,
        roles: ['admin'],
        isAdmin: true,
      },
    };
  }
  const colon = token.indexOf(':');
  const userId = colon >= 0 ? token.slice(0, colon) : token;
  const projectId = colon >= 0 ? token.slice(colon + 1) : token;
  return {
    kind: 'context',
    context: {
      requestId,
      userId,
      projectId: projectId || userId,
      roles: ['admin'],
      isAdmin: true,
      authToken: token,
    },
  };
}
