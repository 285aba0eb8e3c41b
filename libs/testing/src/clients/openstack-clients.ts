import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Debian's python, where python3-mistralclient and python3-cinderclient live (.ci/run installs
 * them). Compatibility tests assert the client is there: a missing client fails, never skips.
 */
export const SYSTEM_PYTHON = '/usr/bin/python3';

export const hasPythonModule = (module: string): boolean =>
  existsSync(SYSTEM_PYTHON) &&
  spawnSync(SYSTEM_PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;

export interface ClientRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an OpenStack client command (a python script, the `mistral` CLI, ...) with no OpenStack
 * auth variables leaking in from the environment; `input` goes to its stdin.
 */
export const runClient = (cmd: string, args: readonly string[], input?: string): Promise<ClientRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(cmd, [...args], { env: { ...process.env, OS_AUTH_TYPE: '', OS_AUTH_URL: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (input !== undefined) child.stdin.end(input);
  });
