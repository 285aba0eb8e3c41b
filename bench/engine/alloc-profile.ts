/**
 * Preloaded (`-r`) into the product processes of `--via=api` when BENCH_ALLOC_DIR is set (a
 * diagnostic, bench/engine/run.ts): V8's sampling heap profiler runs from the start, counting what is
 * allocated whether or not it is collected since, and the profile is written to
 * `<BENCH_ALLOC_DIR>/<pid>.heapprofile` at exit. `bench/engine/alloc-top.ts` sums it by function.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env['BENCH_ALLOC_DIR'];
if (dir) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 16384,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // an in-process session answers at once, so the profile is written before the process ends
  process.on('exit', () => {
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (!err) writeFileSync(path.join(dir, `${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  });
}
