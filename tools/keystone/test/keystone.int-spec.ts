import { Controller, type DynamicModule, Get, Inject, Module, Param, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Ctx, KeystoneProjects, type RequestContext, createHttpApp, loadAuthConfig } from '@osc/http-common';
import { ForbiddenError } from '@osc/errors';
import { type PolicyEnforcer, cinderPolicy, credentialsOf, parsePolicyFile } from '@osc/policy';
import { type KeystoneUser, RealKeystone } from './keystone-fixture';

/**
 * keystone mode and the policy engine against a real Keystone (tools/keystone/start.sh): valid,
 * expired, revoked and foreign-project tokens; admin, member and reader; a deployment override;
 * and an outage. Tokens live TOKEN_SECONDS, so every test asks for its own.
 */
const TOKEN_SECONDS = 12;
const POLICY = Symbol('policy');

@Controller()
class ProbeController {
  constructor(@Inject(POLICY) private readonly policy: PolicyEnforcer) {}

  @Get('/v3/whoami')
  whoami(@Ctx() ctx: RequestContext) {
    return {
      user: ctx.userId,
      userName: ctx.userName,
      project: ctx.projectId,
      roles: [...ctx.roles].sort(),
      admin: ctx.isAdmin,
    };
  }
  @Get('/v3/:project_id/volumes')
  list(@Ctx() ctx: RequestContext, @Param('project_id') project: string) {
    this.policy.enforce('volume:get_all', { project_id: project }, credentialsOf(ctx));
    return { volumes: [] };
  }
  @Post('/v3/:project_id/volumes')
  create(@Ctx() ctx: RequestContext, @Param('project_id') project: string) {
    this.policy.enforce('volume:create', { project_id: project }, credentialsOf(ctx));
    return { volume: { project } };
  }
  @Post('/v3/:project_id/volumes/force-delete')
  forceDelete(@Ctx() ctx: RequestContext, @Param('project_id') project: string) {
    this.policy.enforce('volume:force_delete', { project_id: project }, credentialsOf(ctx));
    return {};
  }
}

@Module({})
class ProbeModule {
  static with(policy: PolicyEnforcer): DynamicModule {
    return {
      module: ProbeModule,
      controllers: [ProbeController],
      providers: [{ provide: POLICY, useValue: policy }],
    };
  }
}

describe('keystone mode against a real Keystone', () => {
  const ks = new RealKeystone(TOKEN_SECONDS);
  const suffix = Date.now().toString(36);
  let app: NestFastifyApplication;
  let overridden: NestFastifyApplication;
  let alice: KeystoneUser; // member of demo
  let rita: KeystoneUser; // reader of demo
  let bob: KeystoneUser; // member of other
  let service: KeystoneUser;
  let adminProjectId: string;
  const logLines: string[] = [];
  const secrets = new Set<string>();

  const startApp = async (policy: PolicyEnforcer, cacheTtl: string) => {
    const auth = loadAuthConfig('probe', {
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: `${ks.url}/v3`,
      KEYSTONE_USERNAME: service.name,
      KEYSTONE_PASSWORD: service.password,
      KEYSTONE_PROJECT_NAME: service.project,
      KEYSTONE_CACHE_TTL_SECONDS: cacheTtl,
      KEYSTONE_TIMEOUT_MS: '2000',
    });
    const a = await createHttpApp(ProbeModule.with(policy), {
      app: 'probe',
      service: 'block-storage',
      authMode: auth.mode,
      keystone: auth.keystone,
      bodyLimit: 4096,
      logLevel: 'trace',
      logStream: { write: (line: string) => void logLines.push(line) },
      readiness: [],
    });
    await a.init();
    await a.getHttpAdapter().getInstance().ready();
    return a;
  };
  const call = (a: NestFastifyApplication, method: 'GET' | 'POST', url: string, token?: string) =>
    a.inject({ method, url, headers: token === undefined ? {} : { 'x-auth-token': token } });
  const remember = (token: string) => {
    secrets.add(token);
    return token;
  };
  const tokenOf = async (u: KeystoneUser) =>
    remember((await ks.issueToken(u.name, u.password, u.project)).token);
  const adminToken = async () => remember((await ks.issueToken('admin', ks.adminPassword, 'admin')).token);

  beforeAll(async () => {
    await ks.start();
    service = await ks.user(`svc-${suffix}`, 'service', 'service');
    alice = await ks.user(`alice-${suffix}`, `demo-${suffix}`, 'member');
    rita = await ks.user(`rita-${suffix}`, `demo-${suffix}`, 'reader');
    bob = await ks.user(`bob-${suffix}`, `other-${suffix}`, 'member');
    adminProjectId = await ks.projectId('admin');
    for (const u of [service, alice, rita, bob]) secrets.add(u.password);
    secrets.add(ks.adminPassword);
    app = await startApp(cinderPolicy(), '300');
    overridden = await startApp(
      cinderPolicy(
        parsePolicyFile('"volume:create": "role:reader and project_id:%(project_id)s"\n', 'override.yaml'),
      ),
      '1',
    );
  }, 240_000);
  afterAll(async () => {
    await app?.close();
    await overridden?.close();
    await ks.stop();
  });

  it('answers 401 with WWW-Authenticate without a token or with a bogus one', async () => {
    for (const token of [undefined, 'gAAAAAbogus']) {
      const res = await call(app, 'GET', '/v3/whoami', token);
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe(`Keystone uri="${ks.url}/v3"`);
      expect(res.json()).toEqual({
        error: {
          code: 401,
          title: 'Unauthorized',
          message: 'The request you have made requires authentication.',
        },
      });
    }
  });

  it('maps a member token to its user, project and implied roles', async () => {
    const res = await call(app, 'GET', '/v3/whoami', await tokenOf(alice));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      user: alice.id,
      userName: alice.name,
      project: alice.projectId,
      roles: ['member', 'reader'],
      admin: false,
    });
  });

  it('makes the admin token an admin', async () => {
    const res = await call(app, 'GET', '/v3/whoami', await adminToken());
    expect(res.json()).toMatchObject({ project: adminProjectId, admin: true });
  });

  it('enforces the default policy: member writes, reader reads, admin anything', async () => {
    const [a, r, adm] = await Promise.all([tokenOf(alice), tokenOf(rita), adminToken()]);
    const demo = alice.projectId;
    expect((await call(app, 'POST', `/v3/${demo}/volumes`, a)).statusCode).toBe(201);
    expect((await call(app, 'GET', `/v3/${demo}/volumes`, r)).statusCode).toBe(200);
    const denied = await call(app, 'POST', `/v3/${demo}/volumes`, r);
    expect(denied.statusCode).toBe(403);
    expect(denied.json()).toEqual({
      forbidden: { code: 403, message: "Policy doesn't allow volume:create to be performed." },
    });
    expect((await call(app, 'POST', `/v3/${demo}/volumes/force-delete`, a)).statusCode).toBe(403);
    expect((await call(app, 'POST', `/v3/${demo}/volumes/force-delete`, adm)).statusCode).toBe(201);
    expect((await call(app, 'POST', `/v3/${demo}/volumes`, adm)).statusCode).toBe(201);
  });

  it('refuses a token scoped to another project', async () => {
    const b = await tokenOf(bob);
    expect((await call(app, 'GET', '/v3/whoami', b)).json()).toMatchObject({ project: bob.projectId });
    expect((await call(app, 'GET', `/v3/${alice.projectId}/volumes`, b)).statusCode).toBe(403);
    expect((await call(app, 'POST', `/v3/${alice.projectId}/volumes`, b)).statusCode).toBe(403);
    expect((await call(app, 'POST', `/v3/${bob.projectId}/volumes`, b)).statusCode).toBe(201);
  });

  it('applies a deployment override', async () => {
    const r = await tokenOf(rita);
    expect((await call(overridden, 'POST', `/v3/${rita.projectId}/volumes`, r)).statusCode).toBe(201);
    expect((await call(overridden, 'POST', `/v3/${bob.projectId}/volumes`, r)).statusCode).toBe(403);
    expect((await call(app, 'POST', `/v3/${rita.projectId}/volumes`, r)).statusCode).toBe(403);
  });

  it('asks Keystone whether a project exists with the caller token', async () => {
    const auth = loadAuthConfig('probe', {
      AUTH_MODE: 'keystone',
      KEYSTONE_AUTH_URL: ks.url,
      KEYSTONE_USERNAME: 'x',
      KEYSTONE_PASSWORD: 'x',
    });
    if (auth.mode !== 'keystone') throw new Error('keystone mode expected');
    const projects = new KeystoneProjects(auth.keystone);
    const ctxOf = (token: string, projectId: string): RequestContext => ({
      requestId: 'r',
      userId: null,
      projectId,
      roles: [],
      isAdmin: false,
      authToken: token,
    });
    const adm = ctxOf(await adminToken(), adminProjectId);
    expect(await projects.exists(adm, alice.projectId)).toBe(true);
    expect(await projects.exists(adm, '00000000000000000000000000000000')).toBe(false);
    await expect(projects.exists(ctxOf(await tokenOf(bob), bob.projectId), alice.projectId)).rejects.toThrow(
      ForbiddenError,
    );
  });

  it('rejects a revoked token once the cache TTL has passed', async () => {
    const t = await tokenOf(alice);
    expect((await call(overridden, 'GET', '/v3/whoami', t)).statusCode).toBe(200);
    await ks.revoke(t);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await call(overridden, 'GET', '/v3/whoami', t)).statusCode).toBe(401);
  });

  it('rejects an expired token, even one it had cached', async () => {
    const { token, expiresAt } = await ks.issueToken(alice.name, alice.password, alice.project);
    remember(token);
    const fresh = await call(app, 'GET', '/v3/whoami', token);
    expect({
      status: fresh.statusCode,
      body: fresh.body,
      expiresAt,
      now: new Date().toISOString(),
    }).toMatchObject({ status: 200 });
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(expiresAt) - Date.now()) + 200));
    expect((await call(app, 'GET', '/v3/whoami', token)).statusCode).toBe(401);
    expect((await call(overridden, 'GET', '/v3/whoami', token)).statusCode).toBe(401);
  });

  it('serves cached tokens and answers 503 for unknown ones while Keystone is down', async () => {
    const known = await tokenOf(alice);
    const unknown = await tokenOf(bob);
    expect((await call(app, 'GET', '/v3/whoami', known)).statusCode).toBe(200);
    await ks.kill();
    expect((await call(app, 'GET', '/v3/whoami', known)).statusCode).toBe(200);
    const res = await call(app, 'GET', '/v3/whoami', unknown);
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({
      error: {
        code: 503,
        title: 'Service Unavailable',
        message: 'The server is currently unavailable. Please try again at a later time.',
      },
    });
  });

  it('never logs tokens or passwords', () => {
    const log = logLines.join('');
    expect(log).toContain("Policy doesn't allow volume:create"); // the 403s above were logged...
    expect(log).toMatch(/keystone: Keystone at .* is unreachable/); // ...and the outage
    expect(secrets.size).toBeGreaterThan(10);
    for (const secret of secrets)
      expect(log.includes(secret) ? `leaked ${secret.slice(0, 6)}…` : 'clean').toBe('clean');
  });
});
