import { type NotifyJob, type NotifyPublisher } from '@osc/contracts';
import { isKnownPublisherType } from './events';
import { type NotificationPublisher, type NotifyLogger, NoopPublisher } from './publishers';

/** What happened to each publisher of one job, in the job's publisher order. */
export interface DeliveryReport {
  executionId: string;
  seq: number;
  event: string;
  results: { type: string; ok: boolean; error?: string }[];
}

/** Default: one JSON line on stderr, so delivery trouble is never silent. */
export const stderrNotifyLogger: NotifyLogger = {
  warn: (message, context) => writeLine('warn', message, context),
  error: (message, context) => writeLine('error', message, context),
};

function writeLine(level: string, message: string, context?: Record<string, unknown>): void {
  process.stderr.write(
    `${JSON.stringify({ level, time: new Date().toISOString(), lib: 'notify', msg: message, ...context })}\n`,
  );
}

/**
 * Delivers `notify.deliver` jobs to the publishers they name, one after the other in the job's order
 * (the reference's DefaultNotifier loop). A publisher's failure is logged and does not stop the others,
 * and `deliver` never rejects (DSL-16.2: failures are only logged), so a worker can ack the job after
 * it. Publishers of an unknown `type`, or of a type this process was not given (e.g. `amqp` without a
 * broker), are logged and skipped.
 */
export class NotificationDispatcher {
  private readonly publishers = new Map<string, NotificationPublisher>();

  constructor(
    publishers: readonly NotificationPublisher[],
    private readonly logger: NotifyLogger = stderrNotifyLogger,
  ) {
    for (const p of [new NoopPublisher(), ...publishers]) this.publishers.set(p.type, p);
  }

  async deliver(job: NotifyJob): Promise<DeliveryReport> {
    const report: DeliveryReport = {
      executionId: job.executionId,
      seq: job.seq,
      event: job.event.event,
      results: [],
    };
    for (const entry of job.publishers) {
      const type = (entry as Partial<NotifyPublisher>).type;
      const publisher = typeof type === 'string' ? this.publishers.get(type) : undefined;
      if (!publisher) {
        const error = isKnownPublisherType(type)
          ? `notification publisher ${type} is not configured`
          : `Notification publisher type is not specified or unknown: ${JSON.stringify(type ?? null)}`;
        this.logger.error(error, { executionId: job.executionId, event: job.event.event });
        report.results.push({ type: String(type), ok: false, error });
        continue;
      }
      try {
        await publisher.publish(job.event, entry);
        report.results.push({ type: publisher.type, ok: true });
      } catch (e) {
        const error = e instanceof Error ? e.message : String(e);
        this.logger.error(`Unable to process event for publisher "${publisher.type}".`, {
          executionId: job.executionId,
          event: job.event.event,
          error,
        });
        report.results.push({ type: publisher.type, ok: false, error });
      }
    }
    return report;
  }

  async close(): Promise<void> {
    for (const p of this.publishers.values()) await p.close?.();
  }
}
