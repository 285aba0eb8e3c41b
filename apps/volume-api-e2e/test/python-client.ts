import path from 'node:path';
import { hasPythonModule, runClient, SYSTEM_PYTHON, type ClientRun } from '@osc/testing';

export const hasCinderClient = hasPythonModule('cinderclient');

/** Runs `python/<script>` of these tests with Debian's python. */
export const runPythonScript = (script: string, args: string[]): Promise<ClientRun> =>
  runClient(SYSTEM_PYTHON, [path.join(__dirname, 'python', script), ...args]);

/**
 * The real `cinder` CLI in noauth mode as admin of `project` against `base` (the service root).
 * keystoneauth reads the noauth plugin's options only when OS_AUTH_TYPE names it (runClient blanks it).
 */
export const runCinderCli = (
  base: string,
  project: string,
  microversion: string,
  args: string[],
): Promise<ClientRun> =>
  runClient('/usr/bin/env', [
    'OS_AUTH_TYPE=noauth',
    SYSTEM_PYTHON,
    '/usr/bin/cinder',
    '--os-auth-type',
    'noauth',
    '--user-id',
    'admin',
    '--project-id',
    project,
    '--os-endpoint',
    `${base}/v3`,
    '--os-volume-api-version',
    microversion,
    ...args,
  ]);
