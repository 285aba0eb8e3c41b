import type { KeystoneSettings } from './keystone-settings';

/** Keystone could not be asked (network, timeout, 5xx) or refused our own credentials. */
export class KeystoneUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KeystoneUnavailableError';
  }
}

/** The parts of a Keystone v3 token body a service needs. */
export interface KeystoneTokenBody {
  readonly expires_at?: string;
  readonly user?: { id?: string; name?: string; domain?: { id?: string; name?: string } };
  readonly project?: { id?: string; name?: string; domain?: { id?: string; name?: string } };
  readonly domain?: { id?: string; name?: string };
  readonly roles?: ReadonlyArray<{ id?: string; name?: string }>;
}

/** A token of the service itself, used to validate callers' tokens. */
export interface ServiceToken {
  readonly token: string;
  readonly expiresAt: number;
}

export type ValidateResult =
  | { kind: 'valid'; token: KeystoneTokenBody }
  | { kind: 'invalid' }
  /** Keystone rejected the service token itself: get a new one and ask again. */
  | { kind: 'service-token-rejected' };

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  json(): Promise<unknown>;
  text(): Promise<string>;
}>;

/** `http://k:5000`, `http://k:5000/`, `http://k:5000/v3` and `/identity/v3` all give the v3 root. */
export function identityV3Root(authUrl: string): string {
  const trimmed = authUrl.replace(/\/+$/, '');
  return /\/v3$/.test(trimmed) ? trimmed : `${trimmed}/v3`;
}

/**
 * The two Keystone v3 calls keystonemiddleware makes: a password authentication for the service's
 * own project-scoped token, and `GET /v3/auth/tokens` with `X-Subject-Token` to validate a caller.
 */
export class KeystoneClient {
  private readonly root: string;

  constructor(
    private readonly settings: KeystoneSettings,
    private readonly fetchFn: FetchLike = fetch as unknown as FetchLike,
  ) {
    this.root = identityV3Root(settings.authUrl);
  }

  async issueServiceToken(): Promise<ServiceToken> {
    const s = this.settings;
    const body = JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: s.username, domain: { name: s.userDomainName }, password: s.password } },
        },
        scope: { project: { name: s.projectName, domain: { name: s.projectDomainName } } },
      },
    });
    const res = await this.call(
      'POST',
      `${this.root}/auth/tokens?nocatalog`,
      { 'content-type': 'application/json' },
      body,
    );
    if (res.status !== 201 && res.status !== 200) {
      throw new KeystoneUnavailableError(`Keystone refused the service credentials (HTTP ${res.status})`);
    }
    const token = res.headers.get('x-subject-token');
    const parsed = (await res.json().catch(() => null)) as { token?: KeystoneTokenBody } | null;
    const expiresAt = Date.parse(parsed?.token?.expires_at ?? '');
    if (!token || Number.isNaN(expiresAt))
      throw new KeystoneUnavailableError('Keystone returned no usable service token');
    return { token, expiresAt };
  }

  async validate(serviceToken: string, subjectToken: string): Promise<ValidateResult> {
    const res = await this.call('GET', `${this.root}/auth/tokens?nocatalog`, {
      'x-auth-token': serviceToken,
      'x-subject-token': subjectToken,
    });
    if (res.status === 200) {
      const parsed = (await res.json().catch(() => null)) as { token?: KeystoneTokenBody } | null;
      if (!parsed?.token) throw new KeystoneUnavailableError('Keystone returned a malformed token body');
      return { kind: 'valid', token: parsed.token };
    }
    // Drain the body so the connection can be reused.
    await res.text().catch(() => '');
    if (res.status === 404 || res.status === 400) return { kind: 'invalid' };
    if (res.status === 401) return { kind: 'service-token-rejected' };
    throw new KeystoneUnavailableError(`Keystone token validation failed (HTTP ${res.status})`);
  }

  private async call(method: string, url: string, headers: Record<string, string>, body?: string) {
    try {
      return await this.fetchFn(url, {
        method,
        headers: { accept: 'application/json', ...headers },
        body,
        signal: AbortSignal.timeout(this.settings.timeoutMs),
      });
    } catch (err) {
      // The cause may be a URL-bearing network error, never a token: tokens travel in headers only.
      throw new KeystoneUnavailableError(`Keystone at ${this.root} is unreachable`, { cause: err });
    }
  }
}
