import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { type AddressInfo } from 'node:net';
import { ctxFor } from '../../test/action-context';
import { StandardActionRunner } from '../action-runner';

// A self-signed certificate for 127.0.0.1, valid until 2126, made for this test only.
const FIXTURES = join(__dirname, '../../test/fixtures');

describe('std.http verify against a local HTTPS server', () => {
  let server: Server;
  let url: string;
  const runner = new StandardActionRunner();
  const ctx = ctxFor();

  beforeAll(async () => {
    server = createServer(
      {
        key: readFileSync(join(FIXTURES, 'self-signed.key')),
        cert: readFileSync(join(FIXTURES, 'self-signed.crt')),
      },
      (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"secure": true}');
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  it('rejects an untrusted certificate by default', async () => {
    const outcome = await runner.run('std.http', { url }, ctx);
    expect(outcome).toEqual({
      kind: 'error',
      error: expect.stringContaining('Failed to send HTTP request: '),
    });
  });

  it('verify false skips the check; verify <path> trusts that CA bundle', async () => {
    await expect(runner.run('std.http', { url, verify: false }, ctx)).resolves.toMatchObject({
      kind: 'success',
      result: { status: 200, content: { secure: true } },
    });
    await expect(
      runner.run('std.http', { url, verify: join(FIXTURES, 'self-signed.crt') }, ctx),
    ).resolves.toMatchObject({
      kind: 'success',
      result: { status: 200 },
    });
    const missing = await runner.run('std.http', { url, verify: '/nonexistent/ca.pem' }, ctx);
    expect(missing).toEqual({
      kind: 'error',
      error: expect.stringContaining('invalid path: /nonexistent/ca.pem'),
    });
  });
});
