/**
 * CPU time a process has used so far, in seconds, read from /proc (Linux; 0 elsewhere or once the
 * process is gone).
 *
 * The scheduler's own count is used: the first field of each thread's `schedstat`, the nanoseconds
 * it ran, summed over the process's threads. `utime` + `stime` of `/proc/<pid>/stat` are charged a
 * whole clock tick (10 ms) to whichever process a tick finds running: summed over a score of
 * PostgreSQL backends, their error on a 0.3 s run (a with-items run of 1,000 items) was several
 * tens of ms, while the run itself costs a few hundred. Where `schedstat` is missing (a kernel
 * without scheduler statistics), the ticks are used. The time of threads that ended is not counted;
 * the processes measured keep theirs (a Node.js process's workers, a backend's one thread).
 */
import { readFileSync, readdirSync } from 'node:fs';

const ranNs = (file: string): number => Number(readFileSync(file, 'utf8').split(' ')[0]);

export function processCpuSeconds(pid: number): number {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += ranNs(`/proc/${pid}/task/${tid}/schedstat`);
      } catch {
        // the thread ended between the listing and the read
      }
    }
    if (Number.isFinite(ns) && ns > 0) return ns / 1e9;
  } catch {
    // no such process, or no scheduler statistics: the ticks below
  }
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}
