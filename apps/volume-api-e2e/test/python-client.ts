import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/** Debian's python, where python3-cinderclient lives (.ci/run installs it; a missing client fails, never skips). */
export const PYTHON = '/usr/bin/python3';

export const hasCinderClient = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import cinderclient'], { stdio: 'ignore' }).status === 0;

/** Runs `python/<script>` with `args`, no OpenStack auth variables leaking in from the environment. */
export const runPythonScript = (script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [path.join(__dirname, 'python', script), ...args], { env: { ...process.env, OS_AUTH_TYPE: '', OS_AUTH_URL: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
