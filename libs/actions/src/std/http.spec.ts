import { type ActionOutcome } from '@osc/contracts';
import { ctxFor } from '../../test/action-context';
import { startHttpServer } from '@osc/testing';
import { StandardActionRunner } from '../action-runner';

type Server = Awaited<ReturnType<typeof startHttpServer>>;

const resultOf = (o: ActionOutcome): Record<string, unknown> => {
  if (o.kind === 'async') throw new Error('async outcome');
  return (o.kind === 'success' ? o.result : o.error) as Record<string, unknown>;
};

// Generous per-test bound: CI shares 2 cores with other suites; the assertions carry the real bounds.
jest.setTimeout(30_000);

describe('std.http against a local HTTP server', () => {
  let server: Server;
  const runner = new StandardActionRunner({ http: { maxResponseBytes: 64 * 1024 } });
  const ctx = ctxFor();

  beforeAll(async () => {
    server = await startHttpServer((req, res) => {
      const path = new URL(req.url, 'http://x').pathname;
      switch (path) {
        case '/json':
          res.writeHead(200, { 'Content-Type': 'application/json', 'X-Custom-Header': 'yes' });
          res.end(JSON.stringify({ hello: 'world', n: [1, 2] }));
          return;
        case '/text':
          res.setHeader('Set-Cookie', ['sid=abc; Path=/', 'theme=dark']);
          res.writeHead(200, 'Fine', { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end('plain text');
          return;
        case '/missing':
          res.writeHead(404, { 'Content-Type': 'application/json' });
          res.end('{"error": "nope"}');
          return;
        case '/redirect':
          res.writeHead(302, { Location: '/json' });
          res.end();
          return;
        case '/slow':
          setTimeout(() => {
            if (!res.writableEnded) res.end('late');
          }, 3_000).unref();
          return;
        case '/big':
          res.writeHead(200, { 'Content-Type': 'text/plain' });
          res.end('x'.repeat(200 * 1024));
          return;
        default:
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, url: req.url, body: req.body }));
      }
    });
  });
  afterAll(() => server.close());

  it('GET parses a JSON body and keeps the server header spelling', async () => {
    const outcome = await runner.run('std.http', { url: `${server.url}/json` }, ctx);
    expect(outcome.kind).toBe('success');
    const r = resultOf(outcome);
    expect(r['content']).toEqual({ hello: 'world', n: [1, 2] });
    expect(r['status']).toBe(200);
    expect(r['reason']).toBe('OK');
    expect(r['headers']).toMatchObject({ 'Content-Type': 'application/json', 'X-Custom-Header': 'yes' });
    expect(r['url']).toBe(`${server.url}/json`);
    expect(r['history']).toEqual([]);
    expect(r['encoding']).toBeNull();
    expect(typeof r['elapsed']).toBe('number');
    expect(server.requests.at(-1)?.method).toBe('GET');
  });

  it('a text body stays text; reason, encoding and cookies come from the response', async () => {
    const r = resultOf(await runner.run('std.http', { url: `${server.url}/text` }, ctx));
    expect(r).toMatchObject({
      content: 'plain text',
      reason: 'Fine',
      encoding: 'utf-8',
      cookies: { sid: 'abc', theme: 'dark' },
    });
  });

  it('sends params, method, a map body as JSON text, headers, cookies and basic auth', async () => {
    await runner.run(
      'std.http',
      {
        url: `${server.url}/echo?a=1`,
        method: 'post',
        params: { b: 'x y', c: [1, 2], d: null },
        body: { k: 'v' },
        headers: { 'X-Num': 5, 'X-Str': 's' },
        cookies: { c1: 'v1', c2: 'v2' },
        auth: 'user:secret',
      },
      ctx,
    );
    const req = server.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/echo?a=1&b=x+y&c=1&c=2');
    expect(JSON.parse(req.body)).toEqual({ k: 'v' });
    expect(req.headers['x-num']).toBe('5');
    expect(req.headers['x-str']).toBe('s');
    expect(req.headers['cookie']).toBe('c1=v1; c2=v2');
    expect(req.headers['authorization']).toBe(`Basic ${Buffer.from('user:secret').toString('base64')}`);
  });

  it('json is sent with a JSON content type; json and body together fail', async () => {
    await runner.run('std.http', { url: `${server.url}/echo`, method: 'PUT', json: [1, { a: true }] }, ctx);
    const req = server.requests.at(-1)!;
    expect(req.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req.body)).toEqual([1, { a: true }]);
    const both = await runner.run('std.http', { url: `${server.url}/echo`, body: 'x', json: { a: 1 } }, ctx);
    expect(both).toEqual({
      kind: 'error',
      error: expect.stringContaining("msg='Only one of the parameters 'json' and 'body' can be passed'"),
    });
  });

  it('a status outside 200-306 fails the action with the same map as error value', async () => {
    const outcome = await runner.run('std.http', { url: `${server.url}/missing` }, ctx);
    expect(outcome.kind).toBe('error');
    expect(resultOf(outcome)).toMatchObject({ status: 404, reason: 'Not Found', content: { error: 'nope' } });
  });

  it('redirects are not followed by default (the reference passes allow_redirects=None) and followed on request', async () => {
    const plain = await runner.run('std.http', { url: `${server.url}/redirect` }, ctx);
    expect(plain.kind).toBe('success');
    expect(resultOf(plain)).toMatchObject({ status: 302, headers: { Location: '/json' } });
    const followed = resultOf(
      await runner.run('std.http', { url: `${server.url}/redirect`, allow_redirects: true }, ctx),
    );
    expect(followed).toMatchObject({ status: 200, url: `${server.url}/json`, history: ['<Response [302]>'] });
  });

  it('a read timeout and a refused connection are transport failures', async () => {
    const slow = await runner.run('std.http', { url: `${server.url}/slow`, timeout: 0.2 }, ctx);
    expect(slow).toEqual({
      kind: 'error',
      error: expect.stringContaining(
        "msg='Failed to send HTTP request: HTTPConnectionPool(host='127.0.0.1', port=",
      ),
    });
    expect((slow as { error: string }).error).toContain('Read timed out. (read timeout=0.2)');
    const refused = await runner.run('std.http', { url: 'http://127.0.0.1:1/' }, ctx);
    expect(refused).toEqual({
      kind: 'error',
      error: expect.stringContaining('Failed to send HTTP request: '),
    });
    expect((refused as { error: string }).error).toContain('ECONNREFUSED');
  });

  it('rejects bad URLs, oversized responses and proxies', async () => {
    const noScheme = await runner.run('std.http', { url: 'example.org/x' }, ctx);
    expect((noScheme as { error: string }).error).toContain(
      "Invalid URL 'example.org/x': No scheme supplied. Perhaps you meant https://example.org/x?",
    );
    const ftp = await runner.run('std.http', { url: 'ftp://example.org/x' }, ctx);
    expect((ftp as { error: string }).error).toContain(
      "No connection adapters were found for 'ftp://example.org/x'",
    );
    const big = await runner.run('std.http', { url: `${server.url}/big` }, ctx);
    expect((big as { error: string }).error).toContain('HTTP response is too large');
    const proxied = await runner.run(
      'std.http',
      { url: `${server.url}/json`, proxies: { http: 'http://127.0.0.1:9' } },
      ctx,
    );
    expect((proxied as { error: string }).error).toContain('proxies are not supported by this service');
  });

  it('std.mistral_http sends the execution headers and stays asynchronous on success', async () => {
    const c = ctxFor({
      callbackUrl: 'http://api:8989/v2/action_executions/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
    });
    const outcome = await runner.run(
      'std.mistral_http',
      { url: `${server.url}/echo`, method: 'POST', json: {} },
      c,
    );
    expect(outcome).toEqual({ kind: 'async' });
    const h = server.requests.at(-1)!.headers;
    expect(h['mistral-workflow-name']).toBe('wf');
    expect(h['mistral-workflow-execution-id']).toBe('e1');
    expect(h['mistral-task-id']).toBe('t1');
    expect(h['mistral-action-execution-id']).toBe('0a1b2c3d-4e5f-6789-abcd-ef0123456789');
    expect(h['mistral-callback-url']).toBe(c.callbackUrl);
    const failed = await runner.run('std.mistral_http', { url: `${server.url}/missing` }, c);
    expect(failed.kind).toBe('error');
  });

  it('the task timeout stops a request that exceeds it', async () => {
    const outcome = await runner.run('std.http', { url: `${server.url}/slow` }, ctxFor({ timeoutMs: 150 }));
    expect(outcome).toEqual({ kind: 'error', error: expect.stringContaining("msg='Action timed out'") });
  });
});
