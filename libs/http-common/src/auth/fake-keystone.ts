import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KeystoneTokenBody } from './keystone-client';

/**
 * A small Keystone v3 stand-in for unit tests of the validator (the real Keystone is exercised in
 * the keystone jest project): password auth for the service user, token validation with the
 * service token, and a switch that makes it fail like an outage. Not exported from the lib.
 */
export class FakeKeystone {
  readonly tokens = new Map<string, KeystoneTokenBody>();
  readonly serviceTokens = new Set<string>();
  /** Project ids `GET /v3/projects/{id}` knows; any registered token may read them. */
  readonly projects = new Set<string>();
  calls = { issue: 0, validate: 0 };
  /** `down`: every request gets its socket destroyed; `error`: every request gets a 500. */
  mode: 'up' | 'down' | 'error' = 'up';
  serviceTokenTtlMs = 3_600_000;
  private server: Server | null = null;
  private counter = 0;

  constructor(readonly servicePassword = 'service-secret') {}

  get url(): string {
    const addr = this.server?.address() as AddressInfo;
    return `http://127.0.0.1:${addr.port}`;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      if (this.mode === 'down') return req.socket.destroy();
      if (this.mode === 'error') return res.writeHead(500).end('{}');
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const path = (req.url ?? '').split('?')[0] ?? '';
        if (req.method === 'GET' && path.startsWith('/v3/projects/')) {
          if (!this.tokens.has(String(req.headers['x-auth-token']))) return res.writeHead(401).end('{}');
          const id = decodeURIComponent(path.slice('/v3/projects/'.length));
          if (!this.projects.has(id)) return res.writeHead(404).end('{}');
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ project: { id, domain_id: 'default', name: id } }));
        }
        if (path !== '/v3/auth/tokens') return res.writeHead(404).end('{}');
        if (req.method === 'POST') {
          this.calls.issue += 1;
          const parsed = JSON.parse(body) as {
            auth: { identity: { password: { user: { name: string; password: string } } } };
          };
          if (parsed.auth.identity.password.user.password !== this.servicePassword)
            return res.writeHead(401).end('{}');
          const token = `svc-${++this.counter}`;
          this.serviceTokens.add(token);
          const expires = new Date(Date.now() + this.serviceTokenTtlMs).toISOString();
          res.writeHead(201, { 'content-type': 'application/json', 'x-subject-token': token });
          return res.end(JSON.stringify({ token: { expires_at: expires } }));
        }
        this.calls.validate += 1;
        if (!this.serviceTokens.has(String(req.headers['x-auth-token']))) return res.writeHead(401).end('{}');
        const subject = this.tokens.get(String(req.headers['x-subject-token']));
        if (!subject || Date.parse(subject.expires_at ?? '') <= Date.now())
          return res.writeHead(404).end('{}');
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ token: subject }));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  /** Register a project-scoped token. */
  addToken(
    token: string,
    opts: { user: string; project: string; roles: string[]; expiresInMs?: number },
  ): void {
    this.tokens.set(token, {
      expires_at: new Date(Date.now() + (opts.expiresInMs ?? 3_600_000)).toISOString(),
      user: { id: `${opts.user}-id`, name: opts.user, domain: { id: 'default', name: 'Default' } },
      project: { id: opts.project, name: `${opts.project}-name`, domain: { id: 'default', name: 'Default' } },
      roles: opts.roles.map((name) => ({ id: `${name}-rid`, name })),
    });
  }
}
