import { type ChaosOptions, type ChaosResult, DEFAULT_OPTIONS, runChaos } from '../../../bench/chaos/chaos';
import { summaryTable } from '../../../bench/chaos/summary';

/**
 * The short chaos run (bench/chaos, issue #15 item 6): the product keeps its promises while its
 * processes are SIGKILLed under load — every execution terminal, one std.http call per action
 * execution (duplicates only where a kill explains them), no volume, snapshot or backup left in a
 * transitional status, quota equal to a recount from the rows, restored bytes equal to the source.
 *
 * Part of every test run (CI included): about 3–4 minutes on the 2-core machine.
 */

const log = (msg: string) => void process.stderr.write(`[chaos] ${msg}\n`);
const ci: Omit<ChaosOptions, 'mode'> = {
  ...DEFAULT_OPTIONS,
  durationS: 60,
  kills: 3,
  killEveryS: 8,
  // An action job held by a killed engine comes back only when BullMQ finds it stalled: its lock
  // lapses after 30 s and the check runs every 30 s, so ~60 s after a kill near the load's end (then
  // the claim found taken reports the run as interrupted). 40 s cut that recovery short when the
  // last kill hit an engine late (CI, 2026-11-28: every execution terminal at the verdict, but
  // "not settled within 40 s"); the wait ends as soon as nothing is in flight.
  settleS: 90,
  workflowStuckAfterS: 15,
  blockStorageStuckAfterS: 15,
  cronTriggers: 1,
  log,
};

/** The verdict's failures, empty when every check held: the assertion names what broke. */
function expectAllChecksHold(result: ChaosResult): void {
  log(`\n${summaryTable([result])}`);
  expect(result.kills.length).toBeGreaterThan(0);
  expect(result.verdict.executions.total).toBeGreaterThan(0);
  expect(result.verdict.calls.calls).toBeGreaterThan(0);
  expect(result.verdict.failures).toEqual([]);
}

describe('chaos: SIGKILLed processes under a mixed load', () => {
  it('distributed, two replicas of each app', async () => {
    expectAllChecksHold(await runChaos({ ...ci, mode: 'distributed' }));
  }, 330_000);

  it('embedded, the single process killed 3 times', async () => {
    expectAllChecksHold(await runChaos({ ...ci, mode: 'embedded' }));
  }, 330_000);
});
