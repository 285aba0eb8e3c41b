import type { Clock } from '@osc/platform';
import { DuePoller, type DuePollerOptions } from '../due-poller';
import type { BackupPolicyFiring } from './backup-policy-firing';

export interface BackupPolicyPollerOptions extends DuePollerOptions {
  /** Time between two retention passes. */
  readonly retentionIntervalMs: number;
}

/**
 * The backup policies' loop in the cron-scheduler, beside the cron triggers' one: fire what is due,
 * run a retention pass when its interval has passed, then sleep until the earliest next run (never
 * longer than maxSleepMs). What fires is decided by the database at that moment (see
 * {@link BackupPolicyFiring}), so timers never fire early or twice.
 */
export class BackupPolicyPoller extends DuePoller {
  private lastRetention = 0;

  constructor(
    private readonly firing: BackupPolicyFiring,
    clock: Clock,
    private readonly retention: BackupPolicyPollerOptions,
  ) {
    super(clock, retention, 'backup policy firing');
  }

  protected async pass(): Promise<Date | null> {
    await this.firing.fireDue();
    const now = this.clock.now().getTime();
    if (now - this.lastRetention >= this.retention.retentionIntervalMs) {
      this.lastRetention = now;
      await this.firing.applyRetention();
    }
    return this.firing.earliestDue();
  }
}
