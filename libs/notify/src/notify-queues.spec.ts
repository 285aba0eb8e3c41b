import { randomUUID } from 'node:crypto';
import { NOTIFY_QUEUES, NOTIFY_QUEUE_PARTITIONS, notifyQueueOf } from './notify-queues';

describe('notify queues', () => {
  it('names one queue per partition under workflow.notify', () => {
    expect(NOTIFY_QUEUES).toHaveLength(NOTIFY_QUEUE_PARTITIONS);
    expect(NOTIFY_QUEUES[0]).toBe('workflow.notify.0');
    expect(new Set(NOTIFY_QUEUES).size).toBe(NOTIFY_QUEUE_PARTITIONS);
  });

  it('maps an execution tree to the same queue every time, and spreads trees over every queue', () => {
    const id = '5f0c2a4e-8c1e-4a43-9d0e-0c3f5a7b9e11';
    expect(notifyQueueOf(id)).toBe(notifyQueueOf(id));
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      const q = notifyQueueOf(randomUUID());
      counts.set(q, (counts.get(q) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual([...NOTIFY_QUEUES].sort());
    for (const n of counts.values()) expect(n).toBeGreaterThan(300);
  });
});
