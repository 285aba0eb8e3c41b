import type { DataSource } from 'typeorm';
import {
  ACTION_RUN_BATCH_JOB,
  ENGINE_COMMAND_QUEUE,
  type ActionRunBatchJob,
  type ActionRunJob,
  type EngineCommandMessage,
  type TimerFiredPayload,
  engineCommand,
  isEngineCommandType,
} from '@osc/contracts';
import type { CommandMessage, Job, OutboxItem, OutboxWriter } from '@osc/messaging';
import { completeStandaloneAction, failExecutionRow } from '@osc/workflow-persistence';
import { toEngineEvents } from '../engine/engine-events';
import { type ReconcilerLog, jsonLineLog } from './reconciler-log';
import { actionFailed } from './workflow-reconciler';

/** Id prefix of the command that fails an execution whose command was dead-lettered. */
const DEAD_LETTER_ID = 'dead-letter:';

/**
 * What happens to work that failed for good (issue #15): an engine command dead-lettered on
 * `<engine queue>.dlq`, an action job or a timer job whose attempts are exhausted. Each leaves an
 * error line naming the execution, and the execution does not stay RUNNING in silence:
 *
 * - a dead-lettered engine command fails its execution (`engine.force-execution-state` ERROR, id
 *   `dead-letter:<command id>`, state_info saying which command failed and why); if that command is
 *   dead-lettered too, the execution row is set to ERROR directly;
 * - a failed action job reports each of its runs as an ERROR (`action-completed:<id>`, ignored if the
 *   run had reported), so the task's retry/on-error decide; a standalone run's row is completed;
 * - a failed timer job's command goes out again through the outbox, which retries until it is sent.
 *
 * Commands are written to the outbox, not published: they survive a broker that is down now.
 */
export class DeadLetters {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly log: ReconcilerLog = jsonLineLog,
  ) {}

  /** Handler of the engine command queue's dead-letter queue. Never throws for a message it cannot use. */
  async onEngineCommand(msg: CommandMessage): Promise<void> {
    const reason = msg.headers?.['x-dead-letter-reason'] ?? 'unknown';
    const error = msg.headers?.['x-error'] ?? 'unknown error';
    if (!isEngineCommandType(msg.type)) {
      this.log('error', 'a dead-lettered engine message is not an engine command', {
        commandId: msg.id,
        type: msg.type,
        reason,
        error,
      });
      return;
    }
    let executionIds: string[];
    try {
      // several for engine.actions-completed (results of several executions), else one
      executionIds = [...new Set(toEngineEvents(msg as EngineCommandMessage).map((e) => e.executionId))];
    } catch (e) {
      this.log('error', 'a dead-lettered engine command names no execution', {
        commandId: msg.id,
        type: msg.type,
        reason,
        error: String(e),
      });
      return;
    }
    const why = `dead letter: engine command ${msg.type} (${msg.id}) failed for good (${reason}): ${error}`;
    for (const executionId of executionIds)
      this.log('error', why, { executionId, commandId: msg.id, type: msg.type, reason });
    if (msg.id.startsWith(DEAD_LETTER_ID)) {
      for (const executionId of executionIds)
        await failExecutionRow(this.dataSource, executionId, why, new Date());
      return;
    }
    const suffix = (executionId: string) => (executionIds.length > 1 ? `:${executionId}` : '');
    await this.send(
      executionIds.map((executionId) =>
        bus(
          engineCommand(`${DEAD_LETTER_ID}${msg.id}${suffix(executionId)}`, 'engine.force-execution-state', {
            executionId,
            state: 'ERROR',
            message: why,
          }),
        ),
      ),
    );
  }

  /** `onFailed` of the action job worker. */
  async onActionJobFailed(job: Job, error: unknown): Promise<void> {
    const runs =
      job.name === ACTION_RUN_BATCH_JOB ? (job.data as ActionRunBatchJob).runs : [job.data as ActionRunJob];
    const why = `the action job failed for good after ${job.attempt} attempt(s): ${error instanceof Error ? error.message : String(error)}`;
    const items: OutboxItem[] = [];
    for (const run of runs) {
      this.log('error', why, {
        executionId: run.executionId || null,
        taskExecutionId: run.taskExecutionId || null,
        actionExecutionId: run.actionExecutionId,
        jobId: job.id,
      });
      if (run.standalone)
        await completeStandaloneAction(
          this.dataSource,
          run.actionExecutionId,
          { state: 'ERROR', error: why },
          new Date(),
        );
      else items.push(bus(actionFailed(run.executionId, run.taskExecutionId, run.actionExecutionId, why)));
    }
    await this.send(items);
  }

  /** `onFailed` of the timer job worker: the timer's command could not be published. */
  async onTimerJobFailed(job: Job, error: unknown): Promise<void> {
    const data = job.data as TimerFiredPayload;
    this.log(
      'error',
      `timer job failed for good; its command goes out through the outbox: ${String(error)}`,
      {
        executionId: data.executionId,
        taskExecutionId: data.taskExecutionId,
        timerId: data.timerId,
      },
    );
    await this.send([bus(engineCommand(`timer:${data.timerId}`, 'engine.timer-fired', data))]);
  }

  private async send(items: OutboxItem[]): Promise<void> {
    if (items.length === 0) return;
    await this.dataSource.transaction((em) => this.outbox.add(em, items));
  }
}

const bus = (message: EngineCommandMessage): OutboxItem => ({
  destination: 'bus',
  queue: ENGINE_COMMAND_QUEUE,
  message,
});
