import { createHash } from 'node:crypto';
import type { AuthOutcome, HeaderBag, RequestContext } from '../context/request-context';
import {
  type FetchLike,
  KeystoneClient,
  type KeystoneTokenBody,
  KeystoneUnavailableError,
  type ServiceToken,
} from './keystone-client';
import type { KeystoneSettings } from './keystone-settings';
import { ExpiringCache } from './token-cache';

/** What a valid token says about its holder (the `X-User-Id`, `X-Project-Id`, `X-Roles`... of keystonemiddleware). */
export interface KeystoneIdentity {
  readonly userId: string;
  readonly userName: string | null;
  readonly userDomainId: string | null;
  readonly projectId: string;
  readonly projectName: string | null;
  readonly projectDomainId: string | null;
  /** Lower-cased role names, implied roles included (Keystone expands them into the token). */
  readonly roles: readonly string[];
  /** Epoch ms after which the token is no longer valid. */
  readonly expiresAt: number;
}

type CacheEntry =
  { kind: 'valid'; identity: KeystoneIdentity; freshUntil: number } | { kind: 'invalid'; freshUntil: number };

export interface KeystoneAuthenticatorDeps {
  now?: () => number;
  fetch?: FetchLike;
  /** Outages are reported here (never tokens or passwords). */
  warn?: (message: string) => void;
}

export const UNAUTHORIZED_MESSAGE = 'The request you have made requires authentication.';
const UNAVAILABLE_MESSAGE = 'The server is currently unavailable. Please try again at a later time.';
/** Renew the service token this long before it expires (or after two thirds of a shorter life). */
const SERVICE_TOKEN_MARGIN_MS = 60_000;
/** Invalid tokens are remembered at most this long, so a flood of bad tokens stays cheap. */
const INVALID_TOKEN_TTL_MS = 30_000;

/**
 * keystonemiddleware's auth_token for our APIs: validates `X-Auth-Token` with Keystone v3 using the
 * service's own token (issued from configured credentials, renewed before it expires, re-issued
 * when Keystone rejects it), caches results by a hash of the token in a bounded cache (valid ones
 * until the earlier of the token's expiry and the cache TTL; a stale entry is still served while
 * Keystone is unreachable, never past the token's expiry), answers 401 with
 * `WWW-Authenticate: Keystone uri="..."` for a missing or invalid token and 503 when Keystone
 * cannot be asked about a token it has not seen. Only project-scoped tokens are accepted: both
 * services scope every resource by project.
 */
export class KeystoneAuthenticator {
  private readonly client: KeystoneClient;
  private readonly cache: ExpiringCache<CacheEntry>;
  private readonly now: () => number;
  private readonly warn: (message: string) => void;
  private serviceToken: (ServiceToken & { renewAt: number }) | null = null;
  private serviceTokenPending: Promise<ServiceToken> | null = null;
  private readonly inFlight = new Map<string, Promise<CacheEntry>>();

  constructor(
    readonly settings: KeystoneSettings,
    deps: KeystoneAuthenticatorDeps = {},
  ) {
    this.now = deps.now ?? Date.now;
    this.warn = deps.warn ?? (() => undefined);
    this.client = new KeystoneClient(settings, deps.fetch);
    this.cache = new ExpiringCache<CacheEntry>(settings.cacheSize, this.now);
  }

  /** Number of cached validations (valid and invalid). */
  get cachedTokens(): number {
    return this.cache.size;
  }

  /**
   * The request context for the request's token, or the response to send. A fresh cache hit
   * returns synchronously (no I/O, no promise).
   */
  authenticate(headers: HeaderBag, requestId: string): AuthOutcome | Promise<AuthOutcome> {
    const raw = headers['x-auth-token'];
    const token = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (!token) return this.unauthorized();
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(key);
    if (cached && cached.freshUntil > this.now()) return this.outcome(cached, token, requestId);
    return this.validate(key, token).then(
      (entry) => this.outcome(entry, token, requestId),
      (err: unknown) => {
        if (!(err instanceof KeystoneUnavailableError)) throw err;
        this.warn(`keystone: ${err.message}`);
        if (cached?.kind === 'valid') return this.outcome(cached, token, requestId);
        return this.unavailable();
      },
    );
  }

  /** Forget every cached validation (tests, or an operator's revocation drill). */
  clearCache(): void {
    this.cache.clear();
  }

  private outcome(entry: CacheEntry, token: string, requestId: string): AuthOutcome {
    if (entry.kind === 'invalid') return this.unauthorized();
    const id = entry.identity;
    const context: RequestContext = {
      requestId,
      userId: id.userId,
      projectId: id.projectId,
      roles: id.roles,
      isAdmin: id.roles.includes('admin'),
      authToken: token,
      userName: id.userName,
      userDomainId: id.userDomainId,
      projectName: id.projectName,
      projectDomainId: id.projectDomainId,
    };
    return { kind: 'context', context };
  }

  private validate(key: string, token: string): Promise<CacheEntry> {
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const p = this.ask(token)
      .then((entry) => {
        const expiresAt = entry.kind === 'valid' ? entry.identity.expiresAt : entry.freshUntil;
        this.cache.set(key, entry, expiresAt);
        return entry;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, p);
    return p;
  }

  private async ask(token: string): Promise<CacheEntry> {
    let result = await this.client.validate((await this.ensureServiceToken(false)).token, token);
    if (result.kind === 'service-token-rejected') {
      result = await this.client.validate((await this.ensureServiceToken(true)).token, token);
      if (result.kind === 'service-token-rejected')
        throw new KeystoneUnavailableError('Keystone rejected a freshly issued service token');
    }
    const now = this.now();
    if (result.kind === 'invalid')
      return {
        kind: 'invalid',
        freshUntil: now + Math.min(INVALID_TOKEN_TTL_MS, this.settings.cacheTtlSeconds * 1000),
      };
    const identity = toIdentity(result.token);
    if (!identity || identity.expiresAt <= now)
      return {
        kind: 'invalid',
        freshUntil: now + Math.min(INVALID_TOKEN_TTL_MS, this.settings.cacheTtlSeconds * 1000),
      };
    return {
      kind: 'valid',
      identity,
      freshUntil: Math.min(identity.expiresAt, now + this.settings.cacheTtlSeconds * 1000),
    };
  }

  private async ensureServiceToken(forceNew: boolean): Promise<ServiceToken> {
    const current = this.serviceToken;
    if (!forceNew && current && current.renewAt > this.now()) return current;
    if (forceNew) this.serviceToken = null;
    if (!this.serviceTokenPending) {
      const askedAt = this.now();
      this.serviceTokenPending = this.client
        .issueServiceToken()
        .then((t) => {
          const margin = Math.min(SERVICE_TOKEN_MARGIN_MS, (t.expiresAt - askedAt) / 3);
          this.serviceToken = { ...t, renewAt: t.expiresAt - margin };
          return t;
        })
        .finally(() => {
          this.serviceTokenPending = null;
        });
    }
    return this.serviceTokenPending;
  }

  private unauthorized(): AuthOutcome {
    return {
      kind: 'respond',
      status: 401,
      exact: true,
      headers: { 'www-authenticate': `Keystone uri="${this.settings.wwwAuthenticateUri}"` },
      body: { error: { code: 401, title: 'Unauthorized', message: UNAUTHORIZED_MESSAGE } },
    };
  }

  private unavailable(): AuthOutcome {
    return {
      kind: 'respond',
      status: 503,
      exact: true,
      headers: {},
      body: { error: { code: 503, title: 'Service Unavailable', message: UNAVAILABLE_MESSAGE } },
    };
  }
}

/** A project-scoped token's identity; null for unscoped, domain- or system-scoped tokens. */
export function toIdentity(token: KeystoneTokenBody): KeystoneIdentity | null {
  const userId = token.user?.id;
  const projectId = token.project?.id;
  const expiresAt = Date.parse(token.expires_at ?? '');
  if (!userId || !projectId || Number.isNaN(expiresAt)) return null;
  const roles = (token.roles ?? []).map((r) => (r.name ?? '').toLowerCase()).filter((r) => r.length > 0);
  return {
    userId,
    userName: token.user?.name ?? null,
    userDomainId: token.user?.domain?.id ?? null,
    projectId,
    projectName: token.project?.name ?? null,
    projectDomainId: token.project?.domain?.id ?? null,
    roles: [...new Set(roles)],
    expiresAt,
  };
}
