/**
 * Preloaded (`-r`) into the product processes of `--via=api --history=alternate` (bench/engine/run.ts):
 * on SIGUSR2, turns the writing of execution history on or off in this process as the file named by
 * BENCH_HISTORY_SWITCH says (`on` / `off`), between the benchmark's phases. A benchmark switch only:
 * the product has no setting for it (see history-off.ts).
 */
import { readFileSync } from 'node:fs';
import { setExecutionHistoryWrites } from '@osc/workflow-persistence';

const file = process.env['BENCH_HISTORY_SWITCH'];
if (file) {
  process.on('SIGUSR2', () => {
    setExecutionHistoryWrites(readFileSync(file, 'utf8').trim() !== 'off');
  });
}
