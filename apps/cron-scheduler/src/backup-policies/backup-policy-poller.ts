import type { Clock } from '@osc/platform';
import type { BackupPolicyFiring } from './backup-policy-firing';

export interface BackupPolicyPollerOptions {
  /** Longest sleep between two looks at the table (policies created elsewhere are seen within it). */
  readonly maxSleepMs: number;
  /** Sleep while due rows are held by another replica, or after an error. */
  readonly busySleepMs: number;
  /** Time between two retention passes. */
  readonly retentionIntervalMs: number;
  readonly log?: (level: 'warn' | 'error', message: string) => void;
}

/**
 * The backup policies' loop in the cron-scheduler, beside the cron triggers' one: fire what is due,
 * run a retention pass when its interval has passed, then sleep until the earliest next run (never
 * longer than maxSleepMs). What fires is decided by the database at that moment (see
 * {@link BackupPolicyFiring}), so timers never fire early or twice.
 */
export class BackupPolicyPoller {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private timer?: NodeJS.Timeout;
  private lastRetention = 0;

  constructor(
    private readonly firing: BackupPolicyFiring,
    private readonly clock: Clock,
    private readonly options: BackupPolicyPollerOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      let delay = this.options.maxSleepMs;
      try {
        await this.firing.fireDue();
        const now = this.clock.now().getTime();
        if (now - this.lastRetention >= this.options.retentionIntervalMs) {
          this.lastRetention = now;
          await this.firing.applyRetention();
        }
        const earliest = await this.firing.earliestDue();
        if (earliest) {
          const until = earliest.getTime() - this.clock.now().getTime();
          delay = until <= 0 ? this.options.busySleepMs : Math.min(until + 1, this.options.maxSleepMs);
        }
      } catch (err) {
        this.options.log?.('error', `backup policy firing failed: ${(err as Error).message}`);
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
