import {
  ENGINE_COMMAND_QUEUE,
  type ActionCompletedPayload,
  type EngineCommandMessage,
  engineCommand,
} from '@osc/contracts';
import type { CommandBus } from '@osc/messaging';

interface Waiter {
  payload: ActionCompletedPayload;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Sends an executor's action results to the engine, many per message: the results reported in one
 * turn of the event loop go together at its end (`setImmediate`) as one `engine.actions-completed`
 * (up to `maxPerMessage`), or alone as `engine.action-completed` (id `action-completed:<action
 * execution id>`). Up to `maxInFlight` messages await their broker confirm at once; results reported
 * while that many are out wait for one to be confirmed and then go together. Each `report` resolves
 * once the broker confirmed the message holding it (the job completes only then: at-least-once as
 * before).
 *
 * A quorum queue confirms a persistent message once its log entry is committed, and delivers it to
 * the consumer then too. With one message out at a time, every result of the executor waited for
 * the previous message's confirm before it was even sent (p95 38 ms idle, more under load), a wait
 * added to every hop of a workflow whose actions run in executors. (Those confirms took 24–35 ms
 * then because of Nagle's algorithm on the connection, since turned off; ~1 ms now.)
 */
export class ResultReports {
  private queue: Waiter[] = [];
  private scheduled = false;
  private inFlight = 0;

  constructor(
    private readonly bus: Pick<CommandBus, 'publish'>,
    private readonly maxPerMessage = 200,
    private readonly maxInFlight = 16,
  ) {}

  report(payload: ActionCompletedPayload): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ payload, resolve, reject });
      this.schedule();
    });
  }

  /** Sends at the end of this turn unless a send is already due or every slot is taken. */
  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.send();
    });
  }

  private send(): void {
    while (this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      const batch = this.queue.splice(0, this.maxPerMessage);
      const [first, ...rest] = batch.map((w) => w.payload);
      if (!first) continue;
      this.inFlight++;
      this.bus
        .publish(ENGINE_COMMAND_QUEUE, resultsMessage([first, ...rest]))
        .then(
          () => {
            for (const w of batch) w.resolve();
          },
          (e: unknown) => {
            for (const w of batch) w.reject(e);
          },
        )
        .finally(() => {
          this.inFlight--;
          this.schedule();
        });
    }
  }
}

/** One result as `engine.action-completed`, several as one `engine.actions-completed`. */
export function resultsMessage(
  results: [ActionCompletedPayload, ...ActionCompletedPayload[]],
): EngineCommandMessage {
  const [first] = results;
  if (results.length === 1)
    return engineCommand(`action-completed:${first.actionExecutionId}`, 'engine.action-completed', first);
  return engineCommand(
    `actions-completed:${first.actionExecutionId}:${results.length}`,
    'engine.actions-completed',
    { results },
  );
}
