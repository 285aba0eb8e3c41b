import type { DataSource } from 'typeorm';
import type { Clock } from '@osc/platform';
import { earliestCronTriggerTime } from '@osc/workflow-persistence';
import type { CronTriggerFiring } from './cron-trigger-firing';

export interface CronPollerOptions {
  /** Longest sleep between two looks at the table (new triggers created elsewhere are seen within it). */
  readonly maxSleepMs: number;
  /** Sleep while due rows are held by another replica, or after an error. */
  readonly busySleepMs: number;
  readonly log?: (level: 'warn' | 'error', message: string) => void;
}

/**
 * The scheduler loop: fire what is due, then sleep until the earliest next_execution_time in the
 * table, never longer than maxSleepMs. The timer only decides when to look again; what fires is
 * decided by the database at that moment, so timers can never fire early, twice, or a deleted trigger.
 */
export class CronPoller {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: DataSource,
    private readonly firing: CronTriggerFiring,
    private readonly clock: Clock,
    private readonly options: CronPollerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.poke();
    await this.loop;
  }

  /** Look again now (e.g. a trigger was just created in this process). */
  poke(): void {
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let delay = this.options.maxSleepMs;
      try {
        await this.firing.fireDue();
        const earliest = await earliestCronTriggerTime(this.db);
        if (earliest) {
          const until = earliest.getTime() - this.clock.now().getTime();
          delay = until <= 0 ? this.options.busySleepMs : Math.min(until + 1, this.options.maxSleepMs);
        }
      } catch (err) {
        this.options.log?.('error', `cron trigger firing failed: ${(err as Error).message}`);
        delay = Math.max(this.options.busySleepMs, 100);
      }
      if (!this.running) break;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, delay);
      });
      this.wake = undefined;
    }
  }
}
