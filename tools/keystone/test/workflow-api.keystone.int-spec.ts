import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { MISTRAL_DEFAULT_POLICY } from '@osc/policy';
import { type KeystoneUser, RealKeystone } from './keystone-fixture';

/**
 * The workflow service (apps/workflow-api/src/main.ts, distributed mode, AUTH_MODE=keystone) against
 * a real Keystone: valid, bogus, expired and foreign-project tokens; admin, member and reader on
 * Mistral's default policy; a WORKFLOW_API_POLICY_FILE override; and no token or password in the
 * process output at the most verbose log level.
 */
// Long enough for a slow, shared machine (Keystone validations took over 10 s at load 19), short
// enough to wait for one to expire.
const TOKEN_SECONDS = 40;
const ROOT = resolve(__dirname, '../../..');
const POSTGRES = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const AMQP = process.env['TEST_AMQP_URL'] ?? 'amqp://guest:guest@127.0.0.1:5672';
const REDIS = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

const WF = (name: string) => `version: '2.0'\n${name}:\n  tasks:\n    t:\n      action: std.noop\n`;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: POSTGRES });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

describe('workflow-api in keystone mode against a real Keystone', () => {
  const ks = new RealKeystone(TOKEN_SECONDS);
  const suffix = Date.now().toString(36);
  const database = `osc_ks_wf_${process.pid}_${randomBytes(4).toString('hex')}`;
  const dir = mkdtempSync(join(tmpdir(), 'osc-wf-policy-'));
  const secrets = new Set<string>();
  let output = '';
  let child: ChildProcess | undefined;
  let base = '';
  let alice: KeystoneUser; // member of demo
  let rita: KeystoneUser; // reader of demo
  let bob: KeystoneUser; // member of other
  let service: KeystoneUser;

  const remember = (t: string) => (secrets.add(t), t);
  const tokenOf = async (u: KeystoneUser) =>
    remember((await ks.issueToken(u.name, u.password, u.project)).token);
  const adminToken = async () => remember((await ks.issueToken('admin', ks.adminPassword, 'admin')).token);
  const call = async (method: string, path: string, token?: string, body?: string, type = 'text/plain') => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token === undefined ? {} : { 'x-auth-token': token }),
        ...(body === undefined ? {} : { 'content-type': type }),
      },
      ...(body === undefined ? {} : { body }),
    });
    const text = await res.text();
    let json: any = undefined;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, body: json, headers: res.headers };
  };

  beforeAll(async () => {
    await ks.start();
    service = await ks.user(`svc-${suffix}`, 'service', 'service');
    alice = await ks.user(`alice-${suffix}`, `demo-${suffix}`, 'member');
    rita = await ks.user(`rita-${suffix}`, `demo-${suffix}`, 'reader');
    bob = await ks.user(`bob-${suffix}`, `other-${suffix}`, 'member');
    for (const u of [service, alice, rita, bob]) secrets.add(u.password);
    secrets.add(ks.adminPassword);
    // The deployment's overrides: only admins delete workflows; only members create event triggers.
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(
      policyFile,
      '"workflows:delete": "rule:admin_only"\n"event_triggers:create": "role:member and project_id:%(project_id)s"\n',
    );
    await admin(`CREATE DATABASE "${database}"`);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/workflow-api/src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        DATABASE_URL: POSTGRES.replace(/\/[^/]*$/, `/${database}`),
        AMQP_URL: AMQP,
        REDIS_URL: REDIS,
        QUEUE_PREFIX: `${database}.`,
        DB_POOL_SIZE: '4',
        WORKFLOW_API_PORT: String(port),
        WORKFLOW_API_HOST: '127.0.0.1',
        AUTH_MODE: 'keystone',
        KEYSTONE_AUTH_URL: `${ks.url}/v3`,
        KEYSTONE_USERNAME: service.name,
        KEYSTONE_PASSWORD: service.password,
        KEYSTONE_PROJECT_NAME: service.project,
        KEYSTONE_CACHE_TTL_SECONDS: '1',
        KEYSTONE_TIMEOUT_MS: '30000',
        WORKFLOW_API_POLICY_FILE: policyFile,
        LOG_LEVEL: 'trace',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`workflow-api exited (${child.exitCode}):\n${output}`);
      try {
        if ((await fetch(`${base}/`)).status === 200) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`workflow-api not ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }, 600_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child?.once('exit', r));
    }
    await admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    await ks.stop();
  });

  it('answers 401 with WWW-Authenticate without a token or with a bogus one', async () => {
    for (const token of [undefined, 'gAAAAAbogus']) {
      const res = await call('GET', '/v2/workflows', token);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain(ks.url);
    }
    // The version document stays public.
    expect((await call('GET', '/')).status).toBe(200);
  });

  it('maps a member token to its project: create, read, and the standard workflows', async () => {
    const token = await tokenOf(alice);
    const created = await call('POST', '/v2/workflows', token, WF(`wf_alice_${suffix}`));
    expect(created.status).toBe(201);
    expect(created.body.workflows[0].project_id).toBe(alice.projectId);
    const list = await call('GET', '/v2/workflows', token);
    const names = list.body.workflows.map((w: { name: string }) => w.name);
    expect(names).toEqual(
      expect.arrayContaining([`wf_alice_${suffix}`, 'create_instance', 'delete_instance']),
    );
    // The standard workflows are public and read-only for non-admins.
    const del = await call('DELETE', '/v2/workflows/create_instance', token);
    expect(del.status).toBe(403);
  });

  it("applies Mistral's default policy to a reader: no role difference, owner rules pass", async () => {
    const token = await tokenOf(rita);
    expect((await call('GET', `/v2/workflows/wf_alice_${suffix}`, token)).status).toBe(200);
    const created = await call('POST', '/v2/workflows', token, WF(`wf_rita_${suffix}`));
    expect(created.status).toBe(201);
    expect(created.body.workflows[0].project_id).toBe(rita.projectId);
  });

  it('keeps a foreign-project token away from the project, and all_projects admin-only', async () => {
    const token = await tokenOf(bob);
    expect((await call('GET', `/v2/workflows/wf_alice_${suffix}`, token)).status).toBe(404);
    const list = await call('GET', '/v2/workflows', token);
    expect(list.body.workflows.map((w: { name: string }) => w.name)).not.toContain(`wf_alice_${suffix}`);
    const all = await call('GET', '/v2/workflows?all_projects=true', token);
    expect(all.status).toBe(403);
    expect(all.body.faultstring).toBe('Operation forbidden (insufficient permissions)');
    const asAdmin = await call('GET', '/v2/workflows?all_projects=true', await adminToken());
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.body.workflows.map((w: { name: string }) => w.name)).toEqual(
      expect.arrayContaining([`wf_alice_${suffix}`, `wf_rita_${suffix}`]),
    );
  });

  it('publishes a workflow as the workflows:publicize rule in force says', async () => {
    const rule = MISTRAL_DEFAULT_POLICY['workflows:publicize'];
    const res = await call(
      'POST',
      '/v2/workflows?scope=public',
      await tokenOf(alice),
      WF(`wf_pub_${suffix}`),
    );
    if (rule === 'rule:admin_only') {
      expect(res.status).toBe(403);
      expect(res.body.faultstring).toBe('Operation forbidden (insufficient permissions)');
    } else {
      expect(rule).toBe('rule:admin_or_owner');
      expect(res.status).toBe(201);
      expect(res.body.workflows[0].scope).toBe('public');
    }
    const byAdmin = await call(
      'POST',
      '/v2/workflows?scope=public',
      await adminToken(),
      WF(`wf_adminpub_${suffix}`),
    );
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body.workflows[0].scope).toBe('public');
  });

  it('enforces the WORKFLOW_API_POLICY_FILE overrides over the defaults', async () => {
    // A fresh token for every call: a slow machine must not turn this into an expiry test.
    // workflows:delete is admin-only here (the default lets the owner delete).
    const refused = await call('DELETE', `/v2/workflows/wf_alice_${suffix}`, await tokenOf(alice));
    expect(refused.status).toBe(403);
    expect(refused.body.faultstring).toBe('Operation forbidden (insufficient permissions)');
    const wfId = (await call('GET', `/v2/workflows/wf_alice_${suffix}`, await tokenOf(alice))).body
      .id as string;
    // event_triggers:create needs the member role here: the reader is refused, the member is not.
    const body = JSON.stringify({
      workflow_id: wfId,
      exchange: 'nova',
      topic: 'notifications',
      event: 'compute.instance.create.end',
    });
    expect(
      (await call('POST', '/v2/event_triggers', await tokenOf(rita), body, 'application/json')).status,
    ).toBe(403);
    const trigger = await call('POST', '/v2/event_triggers', await tokenOf(alice), body, 'application/json');
    expect(trigger.status).toBe(201);
    expect(trigger.body.project_id).toBe(alice.projectId);
    expect((await call('DELETE', `/v2/event_triggers/${trigger.body.id}`, await tokenOf(alice))).status).toBe(
      204,
    );
    expect((await call('DELETE', `/v2/workflows/${wfId}`, await adminToken())).status).toBe(204);
  });

  it('rejects an expired token, even one it had cached', async () => {
    const { token, expiresAt } = await ks.issueToken(alice.name, alice.password, alice.project);
    remember(token);
    expect((await call('GET', '/v2/workflows', token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(expiresAt) - Date.now()) + 1_200));
    expect((await call('GET', '/v2/workflows', token)).status).toBe(401);
  }, 120_000);

  it('never writes tokens or passwords to its output, even at log level trace', () => {
    expect(output).toContain('"status":403'); // the refusals above were logged
    expect(secrets.size).toBeGreaterThan(10);
    for (const secret of secrets)
      expect(output.includes(secret) ? `leaked ${secret.slice(0, 6)}…` : 'clean').toBe('clean');
  });
});
