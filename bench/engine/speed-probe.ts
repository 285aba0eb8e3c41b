/**
 * The machine's speed next to a benchmark's figures: `decide-seq10.ts` (the engine's pure work for one
 * seq10 execution, no I/O) run in a child process of its own, in CPU ms per execution. The load
 * average does not show a host's other guests: on the same code, this figure was 0.36–0.38 ms on one
 * machine of issue 17's sessions and 0.50–0.94 on another, idle, within half an hour; the end-to-end
 * CPU figures moved with it. A probe before and one after a run bracket the speed the run met.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

/** CPU ms per seq10 decision in a fresh process, or null if the probe could not run. */
export function decideSeq10Ms(n = 2000): Promise<number | null> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', '@swc-node/register', path.join(__dirname, 'decide-seq10.ts'), `--n=${n}`],
      { cwd: path.join(__dirname, '../..'), timeout: 120_000 },
      (err, stdout) => {
        if (err) return resolve(null);
        try {
          const line = stdout.trim().split('\n').at(-1) ?? '';
          const ms = (JSON.parse(line) as { cpu_ms_per_execution?: unknown }).cpu_ms_per_execution;
          resolve(typeof ms === 'number' ? ms : null);
        } catch {
          resolve(null);
        }
      },
    );
  });
}
