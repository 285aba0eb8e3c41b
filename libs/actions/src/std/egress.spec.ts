import { ctxFor } from '../../test/action-context';
import { startHttpServer } from '@osc/testing';
import { StandardActionRunner } from '../action-runner';
import { EgressPolicy } from './egress';

describe('std.http egress policy', () => {
  let server: Awaited<ReturnType<typeof startHttpServer>>;
  const ctx = ctxFor();

  beforeAll(async () => {
    server = await startHttpServer((req, res) => {
      if (req.url.startsWith('/to-denied')) {
        const port = new URL(server.url).port;
        res.writeHead(302, { Location: `http://127.0.0.2:${port}/x` });
        res.end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
  });
  afterAll(() => server.close());

  it('matches addresses against the denied CIDRs', () => {
    const policy = new EgressPolicy(['169.254.0.0/16', '10.0.0.0/8', '::1/128']);
    expect(policy.isDenied('169.254.169.254')).toBe(true);
    expect(policy.isDenied('10.1.2.3')).toBe(true);
    expect(policy.isDenied('::1')).toBe(true);
    expect(policy.isDenied('8.8.8.8')).toBe(false);
    expect(policy.isDenied('not-an-ip')).toBe(false);
    expect(() => new EgressPolicy(['nonsense/8'])).toThrow('invalid denied network');
  });

  it('allows everything by default and refuses denied literals, names and redirect targets when configured', async () => {
    await expect(
      new StandardActionRunner().run('std.http', { url: `${server.url}/ok` }, ctx),
    ).resolves.toMatchObject({
      kind: 'success',
    });
    const port = new URL(server.url).port;
    const strict = new StandardActionRunner({ http: { deniedNetworks: ['127.0.0.1/32', '::1/128'] } });
    const literal = await strict.run('std.http', { url: `${server.url}/ok` }, ctx);
    expect(literal).toEqual({
      kind: 'error',
      error: expect.stringContaining(
        "msg='Failed to send HTTP request: Host '127.0.0.1' is in a denied network.'",
      ),
    });
    const byName = await strict.run('std.http', { url: `http://localhost:${port}/ok` }, ctx);
    expect(byName).toEqual({
      kind: 'error',
      error: expect.stringContaining("Host 'localhost' resolves to a denied network."),
    });

    const redirects = new StandardActionRunner({ http: { deniedNetworks: ['127.0.0.2/32'] } });
    const hop = await redirects.run(
      'std.http',
      { url: `${server.url}/to-denied`, allow_redirects: true },
      ctx,
    );
    expect(hop).toEqual({
      kind: 'error',
      error: expect.stringContaining("Host '127.0.0.2' is in a denied network."),
    });
    const before = server.requests.length;
    await redirects.run('std.http', { url: `${server.url}/ok` }, ctx);
    expect(server.requests.length).toBe(before + 1);
  });
});
