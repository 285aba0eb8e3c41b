import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * The product's own Prometheus metrics (docs/metrics.md), one registry per process. Every app's
 * `/metrics` serves them after its HTTP and process metrics. In distributed mode a process is one
 * app; in embedded mode the two APIs' `/metrics` both show the one process's figures.
 *
 * Domain code records through `productMetrics`; nothing here reaches a broker or a database.
 * Queue depths and ages are read at scrape time from the sources registered with
 * {@link registerQueueDepthSource} (the runtime registers its bus, job queue and outbox).
 */
export const productRegistry = new Registry();

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** Depth and age of one queue, as a source reports it at scrape time. */
export interface QueueDepth {
  /** `command` (RabbitMQ or in-process bus), `job` (BullMQ or in-process queue), `outbox`. */
  kind: 'command' | 'job' | 'outbox';
  queue: string;
  /** Messages or jobs waiting to be taken (delayed jobs not counted). */
  depth: number;
  /** Age of the oldest waiting one, when the source can tell (RabbitMQ cannot over AMQP). */
  oldestAgeSeconds?: number;
}

export type QueueDepthSource = () => Promise<readonly QueueDepth[]>;

const depthSources = new Set<QueueDepthSource>();

/** Adds a source read at every scrape; returns its removal (call it when the source closes). */
export function registerQueueDepthSource(source: QueueDepthSource): () => void {
  depthSources.add(source);
  return () => depthSources.delete(source);
}

/** A scrape waits at most this long for a source; one that does not answer is left out. */
const SOURCE_TIMEOUT_MS = 2000;

async function readDepths(): Promise<QueueDepth[]> {
  const results = await Promise.all(
    [...depthSources].map(async (source) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        return await Promise.race([
          source(),
          new Promise<readonly QueueDepth[]>((resolve) => {
            timer = setTimeout(() => resolve([]), SOURCE_TIMEOUT_MS);
          }),
        ]);
      } catch {
        return [];
      } finally {
        if (timer) clearTimeout(timer);
      }
    }),
  );
  return results.flat();
}

// One read serves both queue gauges of a scrape.
let pendingRead: Promise<QueueDepth[]> | undefined;
function depthsOnce(): Promise<QueueDepth[]> {
  pendingRead ??= readDepths().finally(() => {
    setImmediate(() => {
      pendingRead = undefined;
    });
  });
  return pendingRead;
}

const queueDepth = new Gauge({
  name: 'osc_queue_depth',
  help: 'Messages, jobs or outbox rows waiting to be taken, per queue (read at scrape time)',
  labelNames: ['kind', 'queue'],
  registers: [productRegistry],
  async collect() {
    this.reset();
    for (const d of await depthsOnce()) this.labels(d.kind, d.queue).set(d.depth);
  },
});

const queueOldestAge = new Gauge({
  name: 'osc_queue_oldest_age_seconds',
  help: 'Age of the oldest waiting job or outbox row, per queue (0 when none waits)',
  labelNames: ['kind', 'queue'],
  registers: [productRegistry],
  async collect() {
    this.reset();
    for (const d of await depthsOnce())
      if (d.oldestAgeSeconds !== undefined) this.labels(d.kind, d.queue).set(d.oldestAgeSeconds);
  },
});

export const productMetrics = {
  queueDepth,
  queueOldestAge,
  /** Workflow, task and action execution state changes the engine committed. */
  transitions: new Counter({
    name: 'osc_engine_transitions_total',
    help: 'State changes committed by the workflow engine, by subject (execution, task, action) and states',
    labelNames: ['subject', 'from', 'to'],
    registers: [productRegistry],
  }),
  /** Bus commands being handled in this process right now. */
  commandsInFlight: new Gauge({
    name: 'osc_commands_in_flight',
    help: 'Commands taken from the bus whose handler has not finished, per queue',
    labelNames: ['queue'],
    registers: [productRegistry],
  }),
  commandsHandled: new Counter({
    name: 'osc_commands_handled_total',
    help: 'Command deliveries handled, per queue and outcome (ok: acked; error: given back or dead-lettered)',
    labelNames: ['queue', 'outcome'],
    registers: [productRegistry],
  }),
  commandDuration: new Histogram({
    name: 'osc_command_duration_seconds',
    help: 'Time a command handler took, per queue',
    labelNames: ['queue'],
    buckets: SECONDS,
    registers: [productRegistry],
  }),
  jobsInFlight: new Gauge({
    name: 'osc_jobs_in_flight',
    help: 'Jobs taken from the job queue whose handler has not finished, per queue',
    labelNames: ['queue'],
    registers: [productRegistry],
  }),
  jobsHandled: new Counter({
    name: 'osc_jobs_handled_total',
    help: 'Job runs handled, per queue, job name and outcome (ok or error)',
    labelNames: ['queue', 'job', 'outcome'],
    registers: [productRegistry],
  }),
  jobDuration: new Histogram({
    name: 'osc_job_duration_seconds',
    help: 'Time a job handler took, per queue and job name',
    labelNames: ['queue', 'job'],
    buckets: SECONDS,
    registers: [productRegistry],
  }),
  /** One action run by an executor (std.http, std.echo, an ad-hoc action's base, ...). */
  actionDuration: new Histogram({
    name: 'osc_action_duration_seconds',
    help: 'Time an action run took in the executor, per action name and outcome (SUCCESS, ERROR)',
    labelNames: ['action', 'outcome'],
    buckets: SECONDS,
    registers: [productRegistry],
  }),
  /** How late a cron trigger fired: firing time minus the due time. */
  cronLateness: new Histogram({
    name: 'osc_cron_lateness_seconds',
    help: 'Delay between a cron trigger being due and the scheduler firing it',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 3600],
    registers: [productRegistry],
  }),
  cronFirings: new Counter({
    name: 'osc_cron_firings_total',
    help: 'Cron trigger firings, per outcome (started: an execution was created; failed)',
    labelNames: ['outcome'],
    registers: [productRegistry],
  }),
  /** Back-end volume operations (create, delete, extend, ...) run by backup-worker. */
  volumeOperations: new Counter({
    name: 'osc_volume_operations_total',
    help: 'Volume back-end operations finished, per operation and outcome (ok, error)',
    labelNames: ['operation', 'outcome'],
    registers: [productRegistry],
  }),
  volumeOperationDuration: new Histogram({
    name: 'osc_volume_operation_duration_seconds',
    help: 'Time a volume back-end operation took, per operation',
    labelNames: ['operation'],
    buckets: SECONDS,
    registers: [productRegistry],
  }),
  /** Volume bytes a backup read or a restore wrote: rate() of it is bytes/s. */
  backupBytes: new Counter({
    name: 'osc_backup_bytes_total',
    help: 'Volume bytes processed by backups (create: read from the volume; restore: written to it)',
    labelNames: ['operation'],
    registers: [productRegistry],
  }),
  backupThroughput: new Histogram({
    name: 'osc_backup_throughput_bytes_per_second',
    help: 'Throughput of each finished backup create or restore (volume bytes / seconds)',
    labelNames: ['operation'],
    buckets: [
      1 << 20,
      4 << 20,
      16 << 20,
      32 << 20,
      64 << 20,
      128 << 20,
      256 << 20,
      512 << 20,
      1 << 30,
      4 << 30,
    ],
    registers: [productRegistry],
  }),
} as const;

/** Runs `fn` and records its duration in seconds with `observe` (also when it throws). */
export async function timed<T>(
  fn: () => Promise<T>,
  observe: (seconds: number, ok: boolean) => void,
): Promise<T> {
  const start = process.hrtime.bigint();
  let ok = false;
  try {
    const out = await fn();
    ok = true;
    return out;
  } finally {
    observe(Number(process.hrtime.bigint() - start) / 1e9, ok);
  }
}
