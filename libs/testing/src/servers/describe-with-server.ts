import { spawnSync } from 'node:child_process';

/**
 * Whether a TCP server answers, checked synchronously (jest collects tests synchronously, so the
 * check cannot be awaited).
 */
export function serverAnswers(host: string, port: number): boolean {
  const script = `const s=require('net').connect(${port},'${host}');s.setTimeout(1500);s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));s.on('timeout',()=>process.exit(1));`;
  return spawnSync(process.execPath, ['-e', script], { timeout: 5000 }).status === 0;
}

/**
 * A suite that needs a real server. When the server does not answer, the suite is replaced by one
 * failing test that names the server: a missing server is a failure, never a silent skip.
 */
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
