import { SpanKind, context } from '@opentelemetry/api';
import {
  contextFromHeaders,
  currentService,
  inSpan,
  injectHeaders,
  unwrapJobData,
  withService,
  wrapJobData,
} from '@osc/telemetry';
import type { CommandBus, CommandMessage } from './command-bus';
import type { Job, JobQueue, NewJob } from './job-queue';

/**
 * Trace context across the bus: a published message carries the publisher's W3C `traceparent`
 * in its headers (kept when it already has one, as outbox rows do), and each delivery runs in a
 * CONSUMER span `process <queue>` continuing it, as part of the app that registered the consumer.
 * With no SDK registered, spans are no-ops and no header is added.
 */
export function tracedBus(bus: CommandBus): CommandBus {
  const inTx = bus.publishInTransaction?.bind(bus);
  const withTrace = (msg: CommandMessage | CommandMessage[]) =>
    Array.isArray(msg) ? msg.map(withTraceHeaders) : withTraceHeaders(msg);
  return {
    publish: (queue, msg) => bus.publish(queue, withTrace(msg)),
    ...(inTx && { publishInTransaction: (em, queue, msg) => inTx(em, queue, withTrace(msg)) }),
    consume: (queue, handler, opts) => {
      const service = currentService();
      return bus.consume(
        queue,
        (msg, info) =>
          context.with(contextFromHeaders(msg.headers), () =>
            inServiceOf(service, () =>
              inSpan(
                `process ${queue}`,
                {
                  kind: SpanKind.CONSUMER,
                  attributes: {
                    'messaging.system': 'osc',
                    'messaging.operation.type': 'process',
                    'messaging.destination.name': queue,
                    'messaging.message.id': msg.id,
                    'osc.message.type': msg.type,
                    'messaging.delivery_count': info.deliveryCount,
                  },
                },
                () => handler(msg, info),
              ),
            ),
          ),
        opts,
      );
    },
    ping: () => bus.ping(),
    close: () => bus.close(),
  };
}

/**
 * Trace context across the job queue: job data is wrapped with the adder's `traceparent`
 * (`wrapJobData`), and each run is a CONSUMER span `job <name>` continuing it; handlers and
 * `onFailed` observers get the data unwrapped.
 */
export function tracedJobs(jobs: JobQueue): JobQueue {
  const inTx = jobs.addInTransaction?.bind(jobs);
  const withTrace = (job: NewJob | NewJob[]) =>
    Array.isArray(job) ? job.map(withTraceData) : withTraceData(job);
  return {
    add: (queue, job) => jobs.add(queue, withTrace(job)),
    ...(inTx && { addInTransaction: (em, queue, job) => inTx(em, queue, withTrace(job)) }),
    process: (queue, handler, opts) => {
      const service = currentService();
      const onFailed = opts?.onFailed;
      return jobs.process(
        queue,
        (job) => {
          const { data, trace } = unwrapJobData(job.data);
          const unwrapped: Job = { ...job, data };
          return context.with(contextFromHeaders(trace), () =>
            inServiceOf(service, () =>
              inSpan(
                `job ${job.name}`,
                {
                  kind: SpanKind.CONSUMER,
                  attributes: {
                    'messaging.system': 'osc.jobs',
                    'messaging.operation.type': 'process',
                    'messaging.destination.name': queue,
                    'messaging.message.id': job.id,
                    'osc.job.attempt': job.attempt,
                  },
                },
                () => handler(unwrapped),
              ),
            ),
          );
        },
        onFailed
          ? {
              ...opts,
              onFailed: (job, error) => onFailed({ ...job, data: unwrapJobData(job.data).data }, error),
            }
          : opts,
      );
    },
    ping: () => jobs.ping(),
    close: () => jobs.close(),
  };
}

/** The message with the active trace context in its headers (an existing `traceparent` is kept). */
export function withTraceHeaders(msg: CommandMessage): CommandMessage {
  const headers = injectHeaders(msg.headers);
  return headers === msg.headers ? msg : { ...msg, headers };
}

/** The job with the active trace context wrapped around its data (an existing one is kept). */
export function withTraceData(job: NewJob): NewJob {
  const data = wrapJobData(job.data);
  return data === job.data ? job : { ...job, data };
}

function inServiceOf<T>(service: string | undefined, fn: () => T): T {
  return service === undefined ? fn() : withService(service, fn);
}
