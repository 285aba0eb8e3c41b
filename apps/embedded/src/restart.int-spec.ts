import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../../..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

/** `npm start`'s entry point as its own process, waiting until the workflow API answers. */
async function startProduct(dataDir: string): Promise<{ child: ChildProcess; base: string; output: () => string }> {
  const [wfPort, volPort] = [await freePort(), await freePort()];
  let out = '';
  const child = spawn(process.execPath, ['-r', '@swc-node/register', 'apps/embedded/src/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, WORKFLOW_API_PORT: String(wfPort), VOLUME_API_PORT: String(volPort), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const base = `http://127.0.0.1:${wfPort}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`product exited early:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`workflow API not ready in time:\n${out}`);
    }
    try {
      const res = await fetch(`${base}/readyz`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, base, output: () => out };
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

const WORKFLOW = `version: '2.0'
survivor:
  input: [who]
  tasks:
    hello:
      action: std.echo output=<% $.who %>
`;

/** Foundation acceptance: data written through the API survives a restart on the same DATA_DIR. */
describe('embedded mode restart', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-restart-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('reads back after a restart a workflow written before it', async () => {
    const first = await startProduct(dataDir);
    let created: { id: string; checksum: string; created_at: string };
    try {
      const res = await fetch(`${first.base}/v2/workflows`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: WORKFLOW });
      expect(res.status).toBe(201);
      created = ((await res.json()) as { workflows: (typeof created)[] }).workflows[0]!;
    } finally {
      expect(await stop(first.child)).toBe(0);
    }

    const second = await startProduct(dataDir);
    try {
      const res = await fetch(`${second.base}/v2/workflows/survivor`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        id: created.id,
        name: 'survivor',
        definition: WORKFLOW,
        checksum: created.checksum,
        created_at: created.created_at,
        input: 'who',
      });
    } finally {
      expect(await stop(second.child)).toBe(0);
    }
  }, 180_000);
});
