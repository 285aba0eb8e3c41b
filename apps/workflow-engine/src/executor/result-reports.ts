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
 * Sends an executor's action results to the engine, many per message: results reported while no
 * report is being published go at the end of the event loop's turn (`setImmediate`), those reported
 * while one is being published wait for it; either way they go together as one
 * `engine.actions-completed` (up to `maxPerMessage`), or alone as `engine.action-completed` (id
 * `action-completed:<action execution id>`). So an idle executor adds no wait beyond the turn, and a
 * busy one pays one broker message, confirm, delivery and ack per group of results instead of per
 * result. Each `report` resolves once the broker confirmed the
 * message holding it (the job completes only then: at-least-once as before).
 */
export class ResultReports {
  private queue: Waiter[] = [];
  private busy = false;

  constructor(
    private readonly bus: Pick<CommandBus, 'publish'>,
    private readonly maxPerMessage = 200,
  ) {}

  report(payload: ActionCompletedPayload): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ payload, resolve, reject });
      if (!this.busy) {
        // the results that finish in this turn of the event loop (the runs of a batch job often do) go together
        this.busy = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxPerMessage);
        try {
          const [first, ...rest] = batch.map((w) => w.payload);
          if (first) await this.bus.publish(ENGINE_COMMAND_QUEUE, resultsMessage([first, ...rest]));
          for (const w of batch) w.resolve();
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      this.busy = false;
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
