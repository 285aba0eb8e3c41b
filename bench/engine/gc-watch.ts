/**
 * Preloaded (`-r`) into the product processes of `--via=api` when BENCH_GC_DIR is set (a diagnostic,
 * bench/engine/run.ts): after each batch of garbage collections this process observed, writes its
 * running totals (count and milliseconds, scavenges apart from the rest) to `<BENCH_GC_DIR>/<pid>.json`,
 * which the benchmark reads before and after each with-items run.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';

const dir = process.env['BENCH_GC_DIR'];
if (dir) {
  const totals = { minor: { count: 0, ms: 0 }, other: { count: 0, ms: 0 } };
  const file = path.join(dir, `${process.pid}.json`);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind;
      const t = kind === constants.NODE_PERFORMANCE_GC_MINOR ? totals.minor : totals.other;
      t.count++;
      t.ms += e.duration;
    }
    writeFileSync(file, JSON.stringify(totals));
  }).observe({ entryTypes: ['gc'] });
}
