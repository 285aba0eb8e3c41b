import fc from 'fast-check';
import { DueTimeHeap, FifoQueue } from './fifo-queue';

describe('FifoQueue', () => {
  it('behaves like an array used as a queue', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ op: fc.constant('push' as const), v: fc.integer() }),
            fc.record({ op: fc.constant('shift' as const) }),
            fc.record({ op: fc.constant('unshift' as const), vs: fc.array(fc.integer(), { maxLength: 5 }) }),
          ),
          { maxLength: 3000 },
        ),
        (ops) => {
          const q = new FifoQueue<number>();
          const model: number[] = [];
          for (const o of ops) {
            if (o.op === 'push') {
              q.push(o.v);
              model.push(o.v);
            } else if (o.op === 'shift') {
              expect(q.shift()).toBe(model.shift());
            } else {
              q.unshiftAll(o.vs);
              model.unshift(...o.vs);
            }
            expect(q.length).toBe(model.length);
          }
          const rest: number[] = [];
          for (let v = q.shift(); v !== undefined; v = q.shift()) rest.push(v);
          expect(rest).toEqual(model);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('stays fast on long queues', () => {
    const q = new FifoQueue<number>();
    for (let i = 0; i < 200_000; i++) q.push(i);
    let sum = 0;
    for (let v = q.shift(); v !== undefined; v = q.shift()) sum += v;
    expect(sum).toBe((199_999 * 200_000) / 2);
  });
});

describe('DueTimeHeap', () => {
  it('pops in (readyAt, seq) order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 50 }), { maxLength: 500 }), (times) => {
        const heap = new DueTimeHeap<{ readyAt: number; seq: number }>();
        const items = times.map((readyAt, seq) => ({ readyAt, seq }));
        for (const it of items) heap.push(it);
        const out: Array<{ readyAt: number; seq: number }> = [];
        for (let v = heap.pop(); v !== undefined; v = heap.pop()) out.push(v);
        expect(out).toEqual([...items].sort((a, b) => a.readyAt - b.readyAt || a.seq - b.seq));
      }),
      { numRuns: 100 },
    );
  });
});
