import 'reflect-metadata';
import { type DynamicModule, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FakeKeystone, createHttpApp, listRoutes } from '@osc/http-common';
import { RuntimeModule, type Runtime } from '@osc/platform';
import { type TestRuntime, createTestRuntime } from '@osc/testing';
import * as workflowApi from '@osc/workflow-api';

@Module({})
class Root {
  static with(runtime: Runtime): DynamicModule {
    return { module: Root, imports: [RuntimeModule.forRoot(runtime), workflowApi.WorkflowApiModule] };
  }
}

/** Paths served without a token: the version documents and health. */
const PUBLIC = new Set(['/', '/v2', '/healthz', '/readyz', '/metrics']);
const concrete = (url: string) =>
  url
    .replace(/:[A-Za-z_]+/g, '123e4567-e89b-12d3-a456-426614174000')
    .replace(/\*/g, 'x')
    .replace(/\/$/, '') || '/';

describe('workflow-api in keystone mode: every route needs a valid token', () => {
  const ks = new FakeKeystone();
  let testRuntime: TestRuntime;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    await ks.start();
    testRuntime = await createTestRuntime('embedded', workflowApi.SCHEMA_PARTS);
    const config = workflowApi.loadConfig({
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: ks.url,
      KEYSTONE_USERNAME: 'mistral',
      KEYSTONE_PASSWORD: ks.servicePassword,
      LOG_LEVEL: 'silent',
    });
    app = await createHttpApp(Root.with(testRuntime.runtime), {
      app: 'workflow-api',
      service: 'workflow',
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
    await testRuntime?.cleanup();
    await ks.stop();
  });

  it('answers 401 with WWW-Authenticate on every non-public route, without a token and with a bad one', async () => {
    const routes = listRoutes(app).filter((r) => !(r.method === 'GET' && PUBLIC.has(concrete(r.url))));
    expect(routes.length).toBeGreaterThan(30);
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
    expect(ks.calls.validate).toBe(1);
  });

  it('accepts a valid token and scopes to its project', async () => {
    ks.addToken('good', { user: 'alice', project: 'p-alice', roles: ['member', 'reader'] });
    const res = await app.inject({
      method: 'GET',
      url: '/v2/workflows',
      headers: { 'x-auth-token': 'good' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ workflows: expect.any(Array) });
  });
});
