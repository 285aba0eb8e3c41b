import { Controller, Get, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Ctx, createHttpApp, listRoutes } from '../bootstrap/http-app';
import { ConfigError } from '../config/config';
import type { RequestContext } from '../context/request-context';
import { loadAuthConfig } from './auth-config';
import { FakeKeystone } from './fake-keystone';

@Controller()
class WhoAmIController {
  @Get('/v3/whoami')
  whoami(@Ctx() ctx: RequestContext) {
    return { user: ctx.userId, project: ctx.projectId, roles: ctx.roles, admin: ctx.isAdmin };
  }
  @Get('/')
  versions() {
    return { versions: [] };
  }
}

@Module({ controllers: [WhoAmIController] })
class WhoAmIModule {}

describe.each(['block-storage', 'workflow'] as const)('createHttpApp in keystone mode (%s)', (service) => {
  const ks = new FakeKeystone();
  let app: NestFastifyApplication;
  beforeAll(async () => {
    await ks.start();
    const auth = loadAuthConfig('probe', {
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: ks.url,
      KEYSTONE_USERNAME: 'svc',
      KEYSTONE_PASSWORD: ks.servicePassword,
    });
    app = await createHttpApp(WhoAmIModule, {
      app: 'probe',
      service,
      authMode: auth.mode,
      keystone: auth.keystone,
      bodyLimit: 1024,
      logLevel: 'silent',
      readiness: [],
      isPublicPath: (path) => path === '/',
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    ks.addToken('good', { user: 'alice', project: 'p1', roles: ['member', 'reader'] });
  });
  afterAll(async () => {
    await app.close();
    await ks.stop();
  });

  it('builds the context from a valid token', async () => {
    const res = await app.inject({ method: 'GET', url: '/v3/whoami', headers: { 'x-auth-token': 'good' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      user: 'alice-id',
      project: 'p1',
      roles: ['member', 'reader'],
      admin: false,
    });
  });
  it.each([[{}], [{ 'x-auth-token': 'bad' }]])(
    'answers 401 with keystonemiddleware body and header (%j)',
    async (headers) => {
      const res = await app.inject({ method: 'GET', url: '/v3/whoami', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Keystone uri="${ks.url}"`);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        error: {
          code: 401,
          title: 'Unauthorized',
          message: 'The request you have made requires authentication.',
        },
      });
    },
  );
  it('lists the routes it serves', () => {
    expect(listRoutes(app)).toEqual(
      expect.arrayContaining([
        { method: 'GET', url: '/v3/whoami' },
        { method: 'GET', url: '/' },
        { method: 'GET', url: '/healthz' },
      ]),
    );
  });
  it('serves public paths without a token', async () => {
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
  });
});

describe('loadAuthConfig', () => {
  it('defaults to noauth', () => {
    expect(loadAuthConfig('x', {})).toEqual({ mode: 'noauth' });
  });
  it('requires URL, user and password in keystone mode and never echoes values', () => {
    let err: unknown;
    try {
      loadAuthConfig('volume-api', { AUTH_MODE: 'keystone', KEYSTONE_PASSWORD: 'hunter2' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const msg = (err as Error).message;
    expect(msg).toContain('KEYSTONE_AUTH_URL');
    expect(msg).toContain('KEYSTONE_USERNAME');
    expect(msg).not.toContain('KEYSTONE_PASSWORD');
    expect(msg).not.toContain('hunter2');
  });
  it('fills keystone defaults', () => {
    const c = loadAuthConfig('x', {
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: 'http://k:5000/v3',
      KEYSTONE_USERNAME: 'cinder',
      KEYSTONE_PASSWORD: 'p',
    });
    expect(c).toEqual({
      mode: 'keystone',
      keystone: {
        authUrl: 'http://k:5000/v3',
        wwwAuthenticateUri: 'http://k:5000/v3',
        username: 'cinder',
        password: 'p',
        projectName: 'service',
        userDomainName: 'Default',
        projectDomainName: 'Default',
        cacheSize: 10_000,
        cacheTtlSeconds: 300,
        timeoutMs: 5_000,
      },
    });
  });
  it('rejects a bad URL by name', () => {
    expect(() => loadAuthConfig('x', { AUTH_MODE: 'keystone', KEYSTONE_AUTH_URL: 'ftp://k' })).toThrow(
      /KEYSTONE_AUTH_URL/,
    );
  });
});
