import type { DataSource } from 'typeorm';
import type { Clock } from '@osc/platform';
import { earliestCronTriggerTime } from '@osc/workflow-persistence';
import { DuePoller, type DuePollerOptions } from '../due-poller';
import type { CronTriggerFiring } from './cron-trigger-firing';

export type CronPollerOptions = DuePollerOptions;

/**
 * The scheduler loop: fire what is due, then sleep until the earliest next_execution_time in the
 * table, never longer than maxSleepMs. The timer only decides when to look again; what fires is
 * decided by the database at that moment, so timers can never fire early, twice, or a deleted trigger.
 */
export class CronPoller extends DuePoller {
  constructor(
    private readonly db: DataSource,
    private readonly firing: CronTriggerFiring,
    clock: Clock,
    options: CronPollerOptions,
  ) {
    super(clock, options, 'cron trigger firing');
  }

  protected async pass(): Promise<Date | null> {
    await this.firing.fireDue();
    return earliestCronTriggerTime(this.db);
  }
}
