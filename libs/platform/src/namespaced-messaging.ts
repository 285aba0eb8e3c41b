import type { CommandBus, JobQueue } from '@osc/messaging';

/**
 * Give every queue name a prefix, so several installations (or concurrent test runs) can share one
 * RabbitMQ and one Redis without taking each other's messages. Apps keep using plain names. The
 * optional transactional publish and add pass through when the adapter has them (the outbox relay
 * relies on them in embedded mode).
 */
export function namespacedBus(bus: CommandBus, prefix: string): CommandBus {
  if (!prefix) return bus;
  const inTx = bus.publishInTransaction?.bind(bus);
  return {
    publish: (queue, msg) => bus.publish(prefix + queue, msg),
    ...(inTx && { publishInTransaction: (em, queue, msg) => inTx(em, prefix + queue, msg) }),
    consume: (queue, handler, opts) => bus.consume(prefix + queue, handler, opts),
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}

export function namespacedJobs(jobs: JobQueue, prefix: string): JobQueue {
  if (!prefix) return jobs;
  const inTx = jobs.addInTransaction?.bind(jobs);
  return {
    add: (queue, job) => jobs.add(prefix + queue, job),
    ...(inTx && { addInTransaction: (em, queue, job) => inTx(em, prefix + queue, job) }),
    process: (queue, handler, opts) => jobs.process(prefix + queue, handler, opts),
    ping: () => jobs.ping(),
    close: () => jobs.close(),
  };
}
