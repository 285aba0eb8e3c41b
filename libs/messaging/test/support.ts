import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

// @osc/testing has the same helper but depends on platform, which depends on messaging: messaging's
// own tests keep a local copy to avoid the cycle.

/** Whether a TCP server answers, checked synchronously (jest collects tests synchronously). */
export function serverAnswers(host: string, port: number): boolean {
  const script = `const s=require('net').connect(${port},'${host}');s.setTimeout(1500);s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));s.on('timeout',()=>process.exit(1));`;
  return spawnSync(process.execPath, ['-e', script], { timeout: 5000 }).status === 0;
}

/** A suite that needs a real server; without it the suite fails, it never skips. */
export function describeWithServer(
  title: string,
  server: { host: string; port: number; name: string },
  fn: () => void,
): void {
  if (serverAnswers(server.host, server.port)) {
    describe(title, fn);
    return;
  }
  describe(title, () => {
    it(`needs ${server.name} at ${server.host}:${server.port}`, () => {
      throw new Error(
        `${server.name} is not answering at ${server.host}:${server.port}; start it (see README)`,
      );
    });
  });
}

export const uniqueName = (prefix: string): string =>
  `${prefix}-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;

export interface Deferred<T = void> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Polls a condition (every 10 ms) until true; fails with `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
