import type { AuthOutcome } from '../context/request-context';
import { FakeKeystone } from './fake-keystone';
import { KeystoneAuthenticator, toIdentity } from './keystone-authenticator';
import { identityV3Root } from './keystone-client';
import type { KeystoneSettings } from './keystone-settings';

describe('KeystoneAuthenticator against a fake Keystone', () => {
  const ks = new FakeKeystone();
  let offset = 0;
  const now = () => Date.now() + offset;
  const warnings: string[] = [];
  const settings = (over: Partial<KeystoneSettings> = {}): KeystoneSettings => ({
    authUrl: ks.url,
    wwwAuthenticateUri: 'http://keystone.example:5000',
    username: 'volume',
    password: ks.servicePassword,
    projectName: 'service',
    userDomainName: 'Default',
    projectDomainName: 'Default',
    cacheSize: 100,
    cacheTtlSeconds: 300,
    timeoutMs: 2_000,
    ...over,
  });
  const make = (over: Partial<KeystoneSettings> = {}) =>
    new KeystoneAuthenticator(settings(over), { now, warn: (m) => warnings.push(m) });
  const auth = (a: KeystoneAuthenticator, token?: string): Promise<AuthOutcome> =>
    Promise.resolve(a.authenticate(token === undefined ? {} : { 'x-auth-token': token }, 'req-1'));

  beforeAll(() => ks.start());
  afterAll(() => ks.stop());
  beforeEach(() => {
    offset = 0;
    ks.mode = 'up';
    ks.calls = { issue: 0, validate: 0 };
    ks.tokens.clear();
    ks.serviceTokens.clear();
    warnings.length = 0;
  });

  it('maps a valid token to the request context', async () => {
    ks.addToken('tok-member', { user: 'alice', project: 'p1', roles: ['member', 'reader'] });
    const out = await auth(make(), 'tok-member');
    expect(out).toEqual({
      kind: 'context',
      context: {
        requestId: 'req-1',
        userId: 'alice-id',
        userName: 'alice',
        userDomainId: 'default',
        projectId: 'p1',
        projectName: 'p1-name',
        projectDomainId: 'default',
        roles: ['member', 'reader'],
        isAdmin: false,
        authToken: 'tok-member',
      },
    });
  });
  it('makes the admin role an admin, whatever its case', async () => {
    ks.addToken('tok-admin', { user: 'root', project: 'p0', roles: ['Admin', 'member'] });
    const out = await auth(make(), 'tok-admin');
    expect(out.kind === 'context' && out.context.isAdmin).toBe(true);
  });
  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['unknown', 'nope'],
  ])('answers 401 with WWW-Authenticate for a %s token', async (_what, token) => {
    const out = await auth(make(), token);
    expect(out).toEqual({
      kind: 'respond',
      status: 401,
      exact: true,
      headers: { 'www-authenticate': 'Keystone uri="http://keystone.example:5000"' },
      body: {
        error: {
          code: 401,
          title: 'Unauthorized',
          message: 'The request you have made requires authentication.',
        },
      },
    });
  });
  it('serves a cached validation without asking Keystone again, synchronously', async () => {
    ks.addToken('tok', { user: 'alice', project: 'p1', roles: ['reader'] });
    const a = make();
    await auth(a, 'tok');
    const sync = a.authenticate({ 'x-auth-token': 'tok' }, 'req-2');
    expect(sync).not.toBeInstanceOf(Promise);
    expect(ks.calls).toEqual({ issue: 1, validate: 1 });
  });
  it('asks once for concurrent requests with the same token', async () => {
    ks.addToken('tok', { user: 'alice', project: 'p1', roles: ['reader'] });
    const a = make();
    const outs = await Promise.all([auth(a, 'tok'), auth(a, 'tok'), auth(a, 'tok')]);
    expect(outs.every((o) => o.kind === 'context')).toBe(true);
    expect(ks.calls.validate).toBe(1);
  });
  it('revalidates after the cache TTL and rejects a token that expired meanwhile', async () => {
    ks.addToken('short', { user: 'alice', project: 'p1', roles: ['reader'], expiresInMs: 1_500 });
    const a = make({ cacheTtlSeconds: 1 });
    expect((await auth(a, 'short')).kind).toBe('context');
    await new Promise((r) => setTimeout(r, 1_600));
    const out = await auth(a, 'short');
    expect(out.kind === 'respond' && out.status).toBe(401);
    expect(ks.calls.validate).toBe(2);
  });
  it('never serves a cached token past its own expiry', async () => {
    ks.addToken('tok', { user: 'alice', project: 'p1', roles: ['reader'], expiresInMs: 60_000 });
    const a = make({ cacheTtlSeconds: 3_600 });
    expect((await auth(a, 'tok')).kind).toBe('context');
    offset = 61_000;
    ks.mode = 'down';
    expect(await auth(a, 'tok')).toMatchObject({ kind: 'respond', status: 503 });
  });
  it('keeps serving cached tokens during an outage and answers 503 for unknown ones', async () => {
    ks.addToken('known', { user: 'alice', project: 'p1', roles: ['reader'] });
    ks.addToken('unknown', { user: 'bob', project: 'p2', roles: ['reader'] });
    const a = make({ cacheTtlSeconds: 1 });
    await auth(a, 'known');
    ks.mode = 'down';
    offset = 2_000; // past the TTL: a stale entry is still trusted while Keystone is unreachable
    expect((await auth(a, 'known')).kind).toBe('context');
    expect(await auth(a, 'unknown')).toEqual({
      kind: 'respond',
      status: 503,
      exact: true,
      headers: {},
      body: {
        error: {
          code: 503,
          title: 'Service Unavailable',
          message: 'The server is currently unavailable. Please try again at a later time.',
        },
      },
    });
    ks.mode = 'error';
    expect(await auth(a, 'unknown')).toMatchObject({ status: 503 });
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.join('\n')).not.toMatch(/unknown|known|secret/);
  });
  it('renews the service token before it expires', async () => {
    ks.serviceTokenTtlMs = 120_000;
    ks.addToken('t1', { user: 'a', project: 'p1', roles: ['reader'] });
    ks.addToken('t2', { user: 'b', project: 'p1', roles: ['reader'] });
    const a = make();
    await auth(a, 't1');
    offset = 79_000; // a 2-minute token is kept for its first 80 s
    await auth(a, 't2');
    expect(ks.calls.issue).toBe(1);
    a.clearCache();
    offset = 81_000; // then renewed before it expires
    await auth(a, 't2');
    expect(ks.calls.issue).toBe(2);
    ks.serviceTokenTtlMs = 3_600_000;
  });
  it('keeps a short-lived service token for two thirds of its life', async () => {
    ks.serviceTokenTtlMs = 30_000;
    for (const t of ['t1', 't2', 't3']) ks.addToken(t, { user: t, project: 'p1', roles: ['reader'] });
    const a = make();
    await auth(a, 't1');
    offset = 15_000;
    await auth(a, 't2');
    expect(ks.calls.issue).toBe(1);
    offset = 21_000;
    await auth(a, 't3');
    expect(ks.calls.issue).toBe(2);
    ks.serviceTokenTtlMs = 3_600_000;
  });
  it('re-issues the service token when Keystone rejects it', async () => {
    ks.addToken('t1', { user: 'a', project: 'p1', roles: ['reader'] });
    ks.addToken('t2', { user: 'b', project: 'p1', roles: ['reader'] });
    const a = make();
    await auth(a, 't1');
    ks.serviceTokens.clear(); // e.g. revoked by an operator
    expect((await auth(a, 't2')).kind).toBe('context');
    expect(ks.calls.issue).toBe(2);
  });
  it('answers 503 when the service credentials are refused', async () => {
    ks.addToken('t1', { user: 'a', project: 'p1', roles: ['reader'] });
    const out = await auth(make({ password: 'wrong' }), 't1');
    expect(out).toMatchObject({ kind: 'respond', status: 503 });
  });
  it('bounds the cache', async () => {
    const a = make({ cacheSize: 2 });
    for (const t of ['a', 'b', 'c']) {
      ks.addToken(t, { user: t, project: 'p1', roles: ['reader'] });
      await auth(a, t);
    }
    expect(a.cachedTokens).toBe(2);
  });
});

describe('toIdentity', () => {
  it('rejects tokens that are not project-scoped', () => {
    expect(
      toIdentity({ expires_at: '2999-01-01T00:00:00Z', user: { id: 'u' }, domain: { id: 'd' }, roles: [] }),
    ).toBeNull();
  });
});

describe('identityV3Root', () => {
  it.each([
    ['http://k:5000', 'http://k:5000/v3'],
    ['http://k:5000/', 'http://k:5000/v3'],
    ['http://k/identity/v3/', 'http://k/identity/v3'],
  ])('%s → %s', (url, root) => expect(identityV3Root(url)).toBe(root));
});
