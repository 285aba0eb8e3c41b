import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { appCommand } from './distributed-stack';

const ROOT = path.resolve(__dirname, '../../..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

export interface Product {
  child: ChildProcess;
  base: string;
  output: () => string;
}

/**
 * `npm start`'s entry point as its own process (its bundle with OSC_TEST_FROM_BUNDLES=1, as `npm start`
 * runs it; its sources otherwise), waiting until the workflow API is ready.
 */
export async function startProduct(dataDir: string): Promise<Product> {
  const [wfPort, volPort] = [await freePort(), await freePort()];
  let out = '';
  const child = spawn(process.execPath, appCommand('embedded'), {
    cwd: ROOT,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      WORKFLOW_API_PORT: String(wfPort),
      VOLUME_API_PORT: String(volPort),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const base = `http://127.0.0.1:${wfPort}`;
  // Compiling and starting six apps on two shared cores: readiness is checked, not its speed.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`product exited early:\n${out}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`workflow API not ready in time:\n${out}`);
    }
    // Our own child must say it is ready on that port: a port found free may be taken meanwhile by
    // another process on this shared machine, whose /readyz would answer for us.
    if (out.includes(`embedded mode ready: workflow API ${base}/`)) {
      try {
        if ((await fetch(`${base}/readyz`)).status === 200) break;
      } catch {
        // not listening yet
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, base, output: () => out };
}

export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
  });
}

export async function kill9(p: Product): Promise<void> {
  p.child.kill('SIGKILL');
  await exited(p.child);
}

export async function stop(p: Product): Promise<number | null> {
  if (p.child.exitCode !== null) return p.child.exitCode;
  const code = new Promise<number | null>((resolve) => p.child.once('exit', (c) => resolve(c)));
  p.child.kill('SIGTERM');
  return code;
}
