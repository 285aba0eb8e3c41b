import net from 'node:net';
import { Body, Controller, Get, Module, Param, Post } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ConflictError, NotFoundError } from '@osc/errors';
import type { RequestContext } from '../context/request-context';
import { createJsonLogger, NestJsonLogger } from '../logging/json-logger';
import { Ctx, createHttpApp } from './http-app';

@Controller()
class ProbeController {
  @Get('/v3/whoami')
  whoami(@Ctx() ctx: RequestContext) {
    return { project: ctx.projectId, admin: ctx.isAdmin };
  }
  @Get('/v3/missing')
  missing() {
    throw new NotFoundError('Volume', 'x', 'Volume x could not be found.');
  }
  @Post('/v3/echo')
  echo(@Body() body: unknown) {
    if (body && typeof body === 'object' && 'dup' in body) throw new ConflictError('duplicate');
    return { got: body };
  }
  @Get('/v3/items/:id')
  item(@Param('id') id: string) {
    return { id };
  }
  @Get('/v3/crash')
  crash() {
    throw new TypeError('secret internals');
  }
}

@Module({ controllers: [ProbeController] })
class ProbeModule {}

describe('createHttpApp', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await createHttpApp(ProbeModule, {
      app: 'probe',
      service: 'block-storage',
      authMode: 'noauth',
      bodyLimit: 1024,
      logLevel: 'silent',
      readiness: [{ name: 'db', check: async () => true }],
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(async () => app.close());

  const inject = (opts: Parameters<NestFastifyApplication['inject']>[0]) => app.inject(opts as never);

  it('builds the context from the noauth token and sets request ids', async () => {
    const res = await inject({ method: 'GET', url: '/v3/whoami', headers: { 'x-auth-token': 'u:p1' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ project: 'p1', admin: true });
    expect(res.headers['x-openstack-request-id']).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(res.headers['x-compute-request-id']).toBe(res.headers['x-openstack-request-id']);
  });
  it('answers 204 with a token in noauth mode without a token', async () => {
    const res = await inject({ method: 'GET', url: '/v3/whoami' });
    expect(res.statusCode).toBe(204);
    expect(res.headers['x-auth-token']).toBe('admin:admin');
  });
  it('maps domain errors, unknown routes and crashes to Cinder faults', async () => {
    const h = { 'x-auth-token': 'u:p' };
    const nf = await inject({ method: 'GET', url: '/v3/missing', headers: h });
    expect(nf.statusCode).toBe(404);
    expect(nf.json()).toEqual({ itemNotFound: { code: 404, message: 'Volume x could not be found.' } });
    const route = await inject({ method: 'GET', url: '/v3/nothing-here', headers: h });
    expect(route.statusCode).toBe(404);
    expect(route.json()).toEqual({
      itemNotFound: { code: 404, message: 'The resource could not be found.' },
    });
    const crash = await inject({ method: 'GET', url: '/v3/crash', headers: h });
    expect(crash.statusCode).toBe(500);
    expect(crash.body).not.toContain('secret');
    expect(crash.json()).toHaveProperty('computeFault.code', 500);
  });
  it('answers router refusals (undecodable path, over-long parameter) in the Cinder format', async () => {
    const h = { 'x-auth-token': 'u:p' };
    const bad = await inject({ method: 'GET', url: '/v3/items/%E0%A4%A', headers: h });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      badRequest: { code: 400, message: 'Invalid URL: the path is not valid percent-encoded UTF-8.' },
    });
    const long = await inject({ method: 'GET', url: `/v3/items/${'n'.repeat(1001)}`, headers: h });
    expect(long.statusCode).toBe(404);
    expect(long.json()).toEqual({ itemNotFound: { code: 404, message: 'The resource could not be found.' } });
    expect(
      (await inject({ method: 'GET', url: `/v3/items/${'n'.repeat(1000)}`, headers: h })).statusCode,
    ).toBe(200);
  });
  it('answers a request the HTTP parser refuses in the Cinder format and says it closes the connection', async () => {
    await app.listen(0, '127.0.0.1');
    const { port } = app.getHttpServer().address() as net.AddressInfo;
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // a raw non-ASCII byte in the request target
    socket.write(
      Buffer.concat([
        Buffer.from('GET /v3/whoami?'),
        Buffer.from([0xe9]),
        Buffer.from('=1 HTTP/1.1\r\nhost: x\r\nx-auth-token: u:p\r\n\r\n'),
      ]),
    );
    await closed;
    const text = Buffer.concat(chunks).toString('latin1');
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(text.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({
      badRequest: { code: 400, message: 'Malformed HTTP request.' },
    });
  });
  it('refuses malformed, oversized and foreign bodies with 4xx', async () => {
    const h = { 'x-auth-token': 'u:p', 'content-type': 'application/json' };
    const bad = await inject({ method: 'POST', url: '/v3/echo', headers: h, payload: '{"a":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ badRequest: { code: 400, message: 'Malformed request body' } });
    const big = await inject({
      method: 'POST',
      url: '/v3/echo',
      headers: h,
      payload: JSON.stringify({ a: 'x'.repeat(4096) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toHaveProperty('overLimit.code', 413);
    const xml = await inject({
      method: 'POST',
      url: '/v3/echo',
      headers: { ...h, 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expect(xml.statusCode).toBe(415);
    const vnd = await inject({
      method: 'POST',
      url: '/v3/echo',
      headers: { ...h, 'content-type': 'application/vnd.openstack.volume+json' },
      payload: '{"dup":1}',
    });
    expect(vnd.statusCode).toBe(409);
    expect(vnd.json()).toEqual({ conflictingRequest: { code: 409, message: 'duplicate' } });
  });
  it('serves health, readiness and metrics without auth', async () => {
    expect((await inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await inject({ method: 'GET', url: '/readyz' })).json()).toEqual({
      status: 'ok',
      checks: { db: 'ok' },
    });
    const m = await inject({ method: 'GET', url: '/metrics' });
    expect(m.statusCode).toBe(200);
    expect(m.body).toContain('http_request_duration_seconds');
  });
});

describe('createHttpApp for the workflow service', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await createHttpApp(ProbeModule, {
      app: 'probe-wf',
      service: 'workflow',
      authMode: 'noauth',
      bodyLimit: 1024,
      logLevel: 'silent',
      readiness: [],
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(async () => app.close());

  it('reads a body without Content-Type as text (the tempest plugin uploads YAML so) and refuses unknown types', async () => {
    const bare = await app.inject({
      method: 'POST',
      url: '/v3/echo',
      headers: { 'x-auth-token': 'u:p' },
      payload: 'a: b',
    });
    expect(bare.statusCode).toBe(201);
    expect(bare.json()).toEqual({ got: 'a: b' });
    const xml = await app.inject({
      method: 'POST',
      url: '/v3/echo',
      headers: { 'x-auth-token': 'u:p', 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    expect(xml.statusCode).toBe(415);
  });
});

describe('createHttpApp logs', () => {
  const lines: Record<string, unknown>[] = [];
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await createHttpApp(ProbeModule, {
      app: 'probe',
      service: 'block-storage',
      authMode: 'noauth',
      bodyLimit: 1024,
      logLevel: 'info',
      logStream: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
      readiness: [],
    });
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
  });
  afterAll(async () => app.close());

  it('writes one JSON line per request with method, route, status, duration and the request id', async () => {
    lines.length = 0;
    const ok = await app.inject({ method: 'GET', url: '/v3/whoami', headers: { 'x-auth-token': 'u:p1' } });
    const missing = await app.inject({
      method: 'GET',
      url: '/v3/missing',
      headers: { 'x-auth-token': 'u:p1' },
    });
    await app.inject({ method: 'GET', url: '/healthz' });
    const done = lines.filter((l) => l['msg'] === 'request completed');
    expect(done).toHaveLength(2);
    expect(done[0]).toEqual({
      level: 'info',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      app: 'probe',
      reqId: ok.headers['x-openstack-request-id'],
      method: 'GET',
      route: '/v3/whoami',
      status: 200,
      durationMs: expect.any(Number),
      msg: 'request completed',
    });
    expect(done[1]).toMatchObject({
      reqId: missing.headers['x-openstack-request-id'],
      route: '/v3/missing',
      status: 404,
    });
    // the 4xx also has its warn line with the same request id, and every line has the same shape
    expect(lines.find((l) => l['level'] === 'warn')).toMatchObject({
      reqId: missing.headers['x-openstack-request-id'],
      status: 404,
    });
    for (const l of lines) expect(Object.keys(l).slice(0, 3)).toEqual(['level', 'time', 'app']);
  });
});

describe('NestJsonLogger', () => {
  it('turns an object message into keys (error lines too) and drops Nest start-up chatter', () => {
    const lines: Record<string, unknown>[] = [];
    const nest = new NestJsonLogger(
      createJsonLogger({
        app: 'x',
        level: 'info',
        stream: { write: (l: string) => lines.push(JSON.parse(l) as Record<string, unknown>) },
      }),
    );
    nest.log({ msg: 'execution finished', executionId: 'e1' }, 'Engine');
    nest.log('Mapped {/v2, GET} route', 'RouterExplorer');
    nest.warn('careful', 'Engine');
    nest.error('boom', 'Error: boom\n    at x', 'Engine');
    nest.error({ msg: 'backup rebase failed', backupId: 'b1' }, 'Rebase');
    expect(lines.map(({ time: _t, ...rest }) => rest)).toEqual([
      { level: 'info', app: 'x', context: 'Engine', executionId: 'e1', msg: 'execution finished' },
      { level: 'warn', app: 'x', context: 'Engine', msg: 'careful' },
      { level: 'error', app: 'x', context: 'Engine', stack: 'Error: boom\n    at x', msg: 'boom' },
      { level: 'error', app: 'x', context: 'Rebase', backupId: 'b1', msg: 'backup rebase failed' },
    ]);
  });
});
