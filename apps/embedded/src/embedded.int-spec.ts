import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { appCommand } from '../test/distributed-stack';

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

interface Started {
  child: ChildProcess;
  output: () => string;
}

/** Start `npm start`'s entry point as its own process, as a user would (from the bundle with OSC_TEST_FROM_BUNDLES=1). */
function startProduct(env: Record<string, string>): Started {
  let out = '';
  const child = spawn(process.execPath, appCommand('embedded'), {
    cwd: ROOT,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

async function waitForAnswer(url: string, deadline: number, started: Started): Promise<Response> {
  for (;;) {
    if (started.child.exitCode !== null) throw new Error(`product exited early:\n${started.output()}`);
    try {
      return await fetch(url);
    } catch {
      if (Date.now() > deadline) throw new Error(`no answer from ${url} in time:\n${started.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function stop(started: Started): Promise<number | null> {
  return new Promise((resolve) => {
    if (started.child.exitCode !== null) return resolve(started.child.exitCode);
    started.child.once('exit', (code) => resolve(code));
    started.child.kill('SIGTERM');
  });
}

describe('embedded mode (npm start)', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'osc-embedded-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('answers GET / on both APIs within 30 s, stops cleanly and starts again on the same data', async () => {
    for (let round = 0; round < 2; round++) {
      const [wfPort, volPort] = [await freePort(), await freePort()];
      const started = startProduct({
        DATA_DIR: dataDir,
        WORKFLOW_API_PORT: String(wfPort),
        VOLUME_API_PORT: String(volPort),
      });
      try {
        const deadline = Date.now() + 30_000;
        const wf = await waitForAnswer(`http://127.0.0.1:${wfPort}/`, deadline, started);
        expect(wf.status).toBe(200);
        expect(
          ((await wf.json()) as { versions: { id: string; status: string }[] }).versions[0],
        ).toMatchObject({
          id: 'v2.0',
          status: 'CURRENT',
        });
        const vol = await waitForAnswer(`http://127.0.0.1:${volPort}/`, deadline, started);
        expect(vol.status).toBe(300);
        const ids = ((await vol.json()) as { versions: { id: string }[] }).versions.map((v) => v.id);
        expect(ids).toContain('v3.0');
        const ready = await fetch(`http://127.0.0.1:${wfPort}/readyz`);
        expect(ready.status).toBe(200);
      } finally {
        expect(await stop(started)).toBe(0);
      }
    }
  }, 90_000);

  it('refuses a malformed setting with a message naming it', async () => {
    const started = startProduct({ DATA_DIR: dataDir, WORKFLOW_API_PORT: 'not-a-port' });
    const code = await new Promise<number | null>((resolve) => started.child.once('exit', resolve));
    expect(code).toBe(2);
    expect(started.output()).toContain('WORKFLOW_API_PORT');
  }, 30_000);
});
