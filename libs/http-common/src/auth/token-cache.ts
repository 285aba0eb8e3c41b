/**
 * A bounded cache whose entries expire at their own time. Least recently used entries are dropped
 * when full. Reads are synchronous and do no I/O: the hot path of a cached token.
 */
export class ExpiringCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    readonly maxEntries: number,
    private readonly now: () => number,
  ) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1)
      throw new RangeError('maxEntries must be a positive integer');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The live value for `key`, refreshing its recency; expired entries are removed and missed. */
  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.value;
  }

  /** Store `value` until `expiresAt` (epoch ms); a time already past stores nothing. */
  set(key: string, value: V, expiresAt: number): void {
    this.entries.delete(key);
    if (expiresAt <= this.now()) return;
    this.entries.set(key, { value, expiresAt });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
