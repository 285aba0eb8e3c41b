/**
 * First in, first out with O(1) push and shift (an array with a moving head, compacted now and
 * then); `Array.prototype.shift` is O(n) and made the in-process adapters quadratic on long queues.
 */
export class FifoQueue<T> {
  private items: Array<T | undefined> = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** Puts items back at the front, in their order (a connection loss returns unacked messages first). */
  unshiftAll(items: readonly T[]): void {
    if (items.length === 0) return;
    if (this.head >= items.length) {
      this.head -= items.length;
      for (let i = 0; i < items.length; i++) this.items[this.head + i] = items[i];
    } else {
      this.items = [...items, ...this.items.slice(this.head)];
      this.head = 0;
    }
  }
}

/** A binary min-heap ordered by `(dueAt, seq)`: the next delayed job in O(log n). */
export class DueTimeHeap<T extends { readyAt: number; seq: number }> {
  private readonly heap: T[] = [];

  get length(): number {
    return this.heap.length;
  }

  peek(): T | undefined {
    return this.heap[0];
  }

  push(item: T): void {
    const h = this.heap;
    h.push(item);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i] as T, h[parent] as T)) break;
      [h[i], h[parent]] = [h[parent] as T, h[i] as T];
      i = parent;
    }
  }

  pop(): T | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l] as T, h[m] as T)) m = l;
        if (r < h.length && before(h[r] as T, h[m] as T)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as T, h[i] as T];
        i = m;
      }
    }
    return top;
  }
}

function before(a: { readyAt: number; seq: number }, b: { readyAt: number; seq: number }): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}
