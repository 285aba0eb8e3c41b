import { type QueueDepth, productMetrics, registerQueueDepthSource, timed } from '@osc/telemetry';
import type { CommandBus } from './command-bus';
import type { JobQueue } from './job-queue';

/**
 * Prometheus metrics around the bus and the job queue (docs/metrics.md): handlers in flight,
 * handled counts and durations per queue. Each queue this process consumes or processes is also
 * reported by {@link meterQueueDepths} with its depth at scrape time.
 */
export interface Metered {
  bus: CommandBus;
  jobs: JobQueue;
  /** Stops reporting queue depths (on close). */
  close(): void;
}

/**
 * `bus` and `jobs` as apps use them (plain queue names), and `raw`, the adapters underneath,
 * whose queue names carry `prefix`, to read depths from.
 */
export function meterMessaging(
  bus: CommandBus,
  jobs: JobQueue,
  raw: { bus: CommandBus; jobs: JobQueue; prefix: string },
): Metered {
  const commandQueues = new Set<string>();
  const jobQueues = new Set<string>();
  const m = productMetrics;
  const meteredBus: CommandBus = {
    ...bindAll(bus),
    consume: (queue, handler, opts) => {
      commandQueues.add(queue);
      return bus.consume(
        queue,
        async (msg, info) => {
          m.commandsInFlight.labels(queue).inc();
          try {
            await timed(
              () => handler(msg, info),
              (seconds, ok) => {
                m.commandDuration.labels(queue).observe(seconds);
                m.commandsHandled.labels(queue, ok ? 'ok' : 'error').inc();
              },
            );
          } finally {
            m.commandsInFlight.labels(queue).dec();
          }
        },
        opts,
      );
    },
  };
  const meteredJobs: JobQueue = {
    ...bindAll(jobs),
    process: (queue, handler, opts) => {
      jobQueues.add(queue);
      return jobs.process(
        queue,
        async (job) => {
          m.jobsInFlight.labels(queue).inc();
          try {
            return await timed(
              () => handler(job),
              (seconds, ok) => {
                m.jobDuration.labels(queue, job.name).observe(seconds);
                m.jobsHandled.labels(queue, job.name, ok ? 'ok' : 'error').inc();
              },
            );
          } finally {
            m.jobsInFlight.labels(queue).dec();
          }
        },
        opts,
      );
    },
  };
  const unregister = registerQueueDepthSource(async () => {
    const out: QueueDepth[] = [];
    const messageCount = raw.bus.messageCount?.bind(raw.bus);
    const waitingJobs = raw.jobs.waitingJobs?.bind(raw.jobs);
    await Promise.all([
      ...(messageCount
        ? [...commandQueues].map(async (queue) => {
            out.push({ kind: 'command', queue, depth: await messageCount(raw.prefix + queue) });
          })
        : []),
      ...(waitingJobs
        ? [...jobQueues].map(async (queue) => {
            const w = await waitingJobs(raw.prefix + queue);
            out.push({ kind: 'job', queue, depth: w.depth, oldestAgeSeconds: w.oldestAgeSeconds });
          })
        : []),
    ]);
    return out;
  });
  return { bus: meteredBus, jobs: meteredJobs, close: unregister };
}

/** The adapter's methods bound to it, optional ones only when it has them. */
function bindAll<T extends object>(target: T): T {
  const out: Record<string, unknown> = {};
  for (const key of [
    'publish',
    'publishInTransaction',
    'consume',
    'ping',
    'messageCount',
    'add',
    'addInTransaction',
    'process',
    'waitingJobs',
    'close',
  ]) {
    const fn = (target as Record<string, unknown>)[key];
    if (typeof fn === 'function') out[key] = fn.bind(target);
  }
  return out as T;
}
