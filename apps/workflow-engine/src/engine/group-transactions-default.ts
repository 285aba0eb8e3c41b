/**
 * Group transactions one engine runs at once by default (`WORKFLOW_ENGINE_GROUP_TRANSACTIONS`; see
 * group-transactions.ts). Fewer transactions at once make bigger groups under load, and each
 * transaction's fixed costs (lock and load statements, the rows' statement, the commit, the
 * backend's wake-ups) are paid fewer times: seq10 with every action through executors, 200
 * executions on two cores, went from 19.3–19.6 ms of CPU per execution with 4 to 16.2–16.9 with 2
 * (83–87 → 95–103 executions/s), and with 1 to 18.1 ms against 20.8 with 2 (10 alternated pairs, 89.7
 * against 79.4 executions/s, on a slower machine). With inline actions a transaction decides whole
 * stretches of a workflow, and two at once let one decide while the other waits on PostgreSQL: 1
 * cost 8.2–8.7 ms per execution against 7.35–7.85 with 2 (3 pairs). (With-items of `std.echo` runs
 * inline, with 2.) A module of its own: the configuration reads it without loading the engine.
 */
export const DEFAULT_GROUP_TRANSACTIONS = 2;

/** {@link DEFAULT_GROUP_TRANSACTIONS} with inline actions; one at a time when every action goes through executors. */
export const defaultGroupTransactions = (inlineActions: boolean): number =>
  inlineActions ? DEFAULT_GROUP_TRANSACTIONS : 1;
