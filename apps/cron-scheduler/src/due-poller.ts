import type { Clock } from '@osc/platform';

export interface DuePollerOptions {
  /** Longest sleep between two looks at the table (rows created elsewhere are seen within it). */
  readonly maxSleepMs: number;
  /** Sleep while due rows are held by another replica, or after an error. */
  readonly busySleepMs: number;
  readonly log?: (level: 'warn' | 'error', message: string) => void;
}

/**
 * The loop of a table of timed rows: run a pass (fire what is due), then sleep until the earliest
 * due time the pass reports, never longer than maxSleepMs; busySleepMs while rows are already due
 * (another replica holds them) or after a failed pass. The timer only decides when to look again:
 * what fires is decided by the database at that moment, so nothing fires early or twice.
 */
export abstract class DuePoller {
  private running = false;
  private loop?: Promise<void>;
  private wake?: () => void;
  private timer?: NodeJS.Timeout;

  protected constructor(
    protected readonly clock: Clock,
    private readonly options: DuePollerOptions,
    /** What the log says a failed pass was, e.g. `cron trigger firing`. */
    private readonly what: string,
  ) {}

  /** One pass; returns the earliest time something is due next, or null when nothing is. */
  protected abstract pass(): Promise<Date | null>;

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

  /** Look again now (e.g. a row was just created in this process). */
  poke(): void {
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let delay = this.options.maxSleepMs;
      try {
        const earliest = await this.pass();
        if (earliest) {
          const until = earliest.getTime() - this.clock.now().getTime();
          delay = until <= 0 ? this.options.busySleepMs : Math.min(until + 1, this.options.maxSleepMs);
        }
      } catch (err) {
        this.options.log?.('error', `${this.what} failed: ${(err as Error).message}`);
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

/** Runs `fireBatch` until one comes back short of `batchSize` (nothing more is due); returns how many fired. */
export async function fireUntilDrained(fireBatch: () => Promise<number>, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const fired = await fireBatch();
    total += fired;
    if (fired < batchSize) return total;
  }
}
