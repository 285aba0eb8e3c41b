import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = join(__dirname, '..');

export interface KeystoneUser {
  readonly name: string;
  readonly password: string;
  readonly id: string;
  readonly project: string;
  readonly projectId: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A private Keystone for one test file: started by tools/keystone/start.sh on a free loopback port
 * with its own SQLite database and Fernet keys, stopped and removed by `stop()`. Helpers create
 * projects, users and role assignments through the v3 API as the bootstrap admin.
 */
export class RealKeystone {
  readonly adminPassword = randomBytes(12).toString('hex');
  readonly dir = mkdtempSync(join(tmpdir(), 'osc-keystone-'));
  url = '';
  private adminTokenCache: { token: string; at: number } | null = null;

  constructor(readonly tokenExpirationSeconds: number) {}

  async start(): Promise<void> {
    const port = await freePort();
    try {
      const { stdout } = await run(join(here, 'start.sh'), [this.dir, String(port)], {
        env: {
          ...process.env,
          KEYSTONE_ADMIN_PASSWORD: this.adminPassword,
          KEYSTONE_TOKEN_EXPIRATION: String(this.tokenExpirationSeconds),
        },
        timeout: 180_000,
      });
      const m = /KEYSTONE_URL=(\S+)/.exec(stdout);
      if (!m?.[1]) throw new Error(`start.sh printed no KEYSTONE_URL: ${stdout}`);
      this.url = m[1];
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(
        `Keystone did not start (needs the Debian packages keystone and uwsgi-plugin-python3): ${e.stderr ?? e.message}`,
      );
    }
  }

  async stop(): Promise<void> {
    await run(join(here, 'stop.sh'), [this.dir, '--purge']).catch(() => undefined);
  }

  /** Stop the server but keep its data (an outage). */
  async kill(): Promise<void> {
    await run(join(here, 'stop.sh'), [this.dir]);
  }

  /** A project-scoped token and its body. */
  async issueToken(
    user: string,
    password: string,
    project: string,
  ): Promise<{ token: string; expiresAt: string }> {
    const res = await fetch(`${this.url}/v3/auth/tokens?nocatalog`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: user, domain: { id: 'default' }, password } },
          },
          scope: { project: { name: project, domain: { id: 'default' } } },
        },
      }),
    });
    if (res.status !== 201)
      throw new Error(`token for ${user}@${project}: HTTP ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { token: { expires_at: string } };
    return { token: res.headers.get('x-subject-token') ?? '', expiresAt: body.token.expires_at };
  }

  async revoke(token: string): Promise<void> {
    const res = await fetch(`${this.url}/v3/auth/tokens`, {
      method: 'DELETE',
      headers: { 'x-auth-token': await this.adminToken(), 'x-subject-token': token },
    });
    if (res.status !== 204) throw new Error(`revoke: HTTP ${res.status}`);
  }

  private async adminToken(): Promise<string> {
    // Tokens may live only seconds here: reuse one for at most a third of that.
    if (
      this.adminTokenCache &&
      Date.now() - this.adminTokenCache.at < (this.tokenExpirationSeconds * 1000) / 3
    )
      return this.adminTokenCache.token;
    const { token } = await this.issueToken('admin', this.adminPassword, 'admin');
    this.adminTokenCache = { token, at: Date.now() };
    return token;
  }

  private async api<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${this.url}/v3${path}`, {
      method,
      headers: { 'content-type': 'application/json', 'x-auth-token': await this.adminToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
    return (res.status === 204 ? {} : await res.json()) as T;
  }

  async projectId(name: string): Promise<string> {
    const r = await this.api<{ projects: Array<{ id: string }> }>(
      'GET',
      `/projects?name=${encodeURIComponent(name)}`,
    );
    if (r.projects[0]) return r.projects[0].id;
    const created = await this.api<{ project: { id: string } }>('POST', '/projects', {
      project: { name, domain_id: 'default' },
    });
    return created.project.id;
  }

  async roleId(name: string): Promise<string> {
    const r = await this.api<{ roles: Array<{ id: string }> }>(
      'GET',
      `/roles?name=${encodeURIComponent(name)}`,
    );
    if (r.roles[0]) return r.roles[0].id;
    const created = await this.api<{ role: { id: string } }>('POST', '/roles', { role: { name } });
    return created.role.id;
  }

  /** A new user with `role` on `project` (created if missing). */
  async user(name: string, project: string, role: string): Promise<KeystoneUser> {
    const password = randomBytes(9).toString('hex');
    const projectId = await this.projectId(project);
    const created = await this.api<{ user: { id: string } }>('POST', '/users', {
      user: { name, password, domain_id: 'default', enabled: true },
    });
    await this.api('PUT', `/projects/${projectId}/users/${created.user.id}/roles/${await this.roleId(role)}`);
    return { name, password, id: created.user.id, project, projectId };
  }
}
