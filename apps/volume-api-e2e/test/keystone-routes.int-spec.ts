import 'reflect-metadata';
import { type DynamicModule, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FakeKeystone, createHttpApp, listRoutes } from '@osc/http-common';
import { RuntimeModule, type Runtime, createRuntime } from '@osc/platform';
import * as volumeApi from '@osc/volume-api';

@Module({})
class Root {
  static with(runtime: Runtime, config: volumeApi.VolumeApiConfig): DynamicModule {
    return {
      module: Root,
      imports: [RuntimeModule.forRoot(runtime), volumeApi.VolumeApiModule.forRoot(config)],
    };
  }
}

/** Paths served without a token: version documents and health (BS-2.2 applies to everything else). */
const PUBLIC = new Set(['/', '/v2', '/v3', '/healthz', '/readyz', '/metrics']);
const concrete = (url: string) =>
  url
    .replace(/:[A-Za-z_]+/g, '0f0e0d0c0b0a09080706050403020100')
    .replace(/\*/g, 'x')
    .replace(/\/$/, '') || '/';

describe('volume-api in keystone mode: every route needs a valid token', () => {
  const ks = new FakeKeystone();
  let runtime: Runtime;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    await ks.start();
    runtime = await createRuntime({ mode: 'embedded', dataDir: 'memory://' }, volumeApi.SCHEMA_PARTS);
    const config = volumeApi.loadConfig({
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: ks.url,
      KEYSTONE_USERNAME: 'cinder',
      KEYSTONE_PASSWORD: ks.servicePassword,
      LOG_LEVEL: 'silent',
    });
    app = await createHttpApp(Root.with(runtime, config), {
      app: 'volume-api',
      service: 'block-storage',
      authMode: config.authMode,
      keystone: config.keystone,
      bodyLimit: config.http.bodyLimit,
      logLevel: 'silent',
      readiness: [],
      isPublicPath: (path, method) => method === 'GET' && PUBLIC.has(path.replace(/\/$/, '') || '/'),
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(async () => {
    await app?.close();
    await runtime?.close();
    await ks.stop();
  });

  it('answers 401 with WWW-Authenticate on every non-public route, without a token and with a bad one', async () => {
    const routes = listRoutes(app).filter((r) => !(r.method === 'GET' && PUBLIC.has(concrete(r.url))));
    expect(routes.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const r of routes) {
      for (const headers of [{}, { 'x-auth-token': 'not-a-token' }]) {
        const res = await app.inject({
          method: r.method as 'GET',
          url: concrete(r.url),
          headers: { ...headers, 'content-type': 'application/json' },
          payload: '{}',
        });
        const ok =
          res.statusCode === 401 &&
          res.headers['www-authenticate'] === `Keystone uri="${ks.url}"` &&
          res.body ===
            JSON.stringify({
              error: {
                code: 401,
                title: 'Unauthorized',
                message: 'The request you have made requires authentication.',
              },
            });
        if (!ok) failures.push(`${r.method} ${r.url} ${JSON.stringify(headers)} → ${res.statusCode}`);
      }
    }
    expect(failures).toEqual([]);
    expect(ks.calls.validate).toBe(1); // one bad token, asked once, then cached as invalid
  });

  it('serves the version documents without a token', async () => {
    expect((await app.inject({ method: 'GET', url: '/' })).statusCode).toBeLessThan(400);
  });

  it('accepts a valid token', async () => {
    ks.addToken('good', {
      user: 'alice',
      project: '0f0e0d0c0b0a09080706050403020100',
      roles: ['member', 'reader'],
    });
    const res = await app.inject({
      method: 'GET',
      url: '/v3/0f0e0d0c0b0a09080706050403020100/volumes',
      headers: { 'x-auth-token': 'good' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ volumes: [] });
  });
});
