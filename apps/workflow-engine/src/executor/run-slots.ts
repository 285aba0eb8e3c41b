/**
 * At most `size` holders at once: the executor's run slots (`size` runs at once, whatever their
 * jobs: the runs of a batch job take a slot each before they are claimed and leave it once their
 * report was confirmed). An executor that dies so cuts off at most its slots; the other runs of its
 * jobs were never claimed and run normally when the jobs are delivered again.
 */
export class RunSlots {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(size: number) {
    this.free = Math.max(1, size);
  }

  async use<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}
