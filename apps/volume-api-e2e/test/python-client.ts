import path from 'node:path';
import { hasPythonModule, runClient, SYSTEM_PYTHON, type ClientRun } from '@osc/testing';

export const hasCinderClient = hasPythonModule('cinderclient');

/** Runs `python/<script>` of these tests with Debian's python. */
export const runPythonScript = (script: string, args: string[]): Promise<ClientRun> => runClient(SYSTEM_PYTHON, [path.join(__dirname, 'python', script), ...args]);
