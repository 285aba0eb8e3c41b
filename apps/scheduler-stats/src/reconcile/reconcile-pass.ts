import type { Logger } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  backendOfPool,
  decideStuck,
  isMigrationInFlight,
  transitionalStatuses,
  type MessageResourceType,
  type ReconciledResource,
  type RecoveryJob,
  type StuckDecision,
  type StuckWork,
  type WorkerState,
} from '@osc/block-storage-domain';
import { MessageRepository, type ReconcileRepository } from '@osc/block-storage-persistence';
import type { OutboxWriter } from '@osc/messaging';

export interface ReconcileConfig {
  /** Seconds between passes; 0 turns the reconciler off. */
  readonly intervalSeconds: number;
  /** A transitional row idle this long has lost its work. */
  readonly stuckAfterSeconds: number;
  /** A back end whose cinder-volume heartbeat is older than this is down. */
  readonly serviceDownSeconds: number;
  /** Resumes of one row in one status before it is ended instead. */
  readonly maxResumes: number;
  /** Rows per resource looked at in one pass. */
  readonly batchSize: number;
}

/** One pass's clock reading, back-end liveness and tallies. */
export class Pass {
  resumed = 0;
  ended = 0;
  failed = 0;
  constructor(
    readonly now: Date,
    readonly workers: ReadonlyMap<string, boolean>,
  ) {}
}

/** One scan of a pass: finds its resource's stuck rows and resolves each (see {@link StuckRows}). */
export interface Scan {
  run(pass: Pass): Promise<void>;
}

/** The key a row's resumes are counted under: a migration in flight counts apart from its status. */
export const statusKey = (status: string, migrationStatus: string | null): string =>
  isMigrationInFlight(migrationStatus) ? `migration:${status}` : status;

/**
 * What every scan does with a stuck row: claim it, let the domain decide (`decideStuck`), and either
 * queue its job again through the outbox or record that it was ended, with a user message and a
 * warn log line naming the resource and why.
 */
export class StuckRows {
  private readonly messages = new MessageRepository();

  constructor(
    private readonly db: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly config: ReconcileConfig,
    private readonly reconcile: ReconcileRepository,
    private readonly log: Logger,
  ) {}

  /** The scan of `resource`'s transitional rows idle since before the bound, a batch at most. */
  query(
    pass: Pass,
    resource: ReconciledResource,
  ): { statuses: readonly string[]; before: Date; limit: number } {
    return {
      statuses: transitionalStatuses(resource),
      before: new Date(pass.now.getTime() - this.config.stuckAfterSeconds * 1000),
      limit: this.config.batchSize,
    };
  }

  /** Claims one row (gone, changed, fresh again or held elsewhere: nothing to do) and acts on it in one transaction. */
  async claim<T>(
    pass: Pass,
    resource: ReconciledResource,
    id: string,
    load: (em: EntityManager) => Promise<T[]>,
    act: (em: EntityManager, row: T) => Promise<void>,
  ): Promise<void> {
    try {
      await this.db.transaction(async (em) => {
        const [row] = await load(em);
        if (row !== undefined) await act(em, row);
      });
    } catch (e) {
      pass.failed++;
      this.log.warn(`reconciling ${resource} ${id} failed (next pass tries again): ${String(e)}`);
    }
  }

  decide(
    pass: Pass,
    resource: ReconciledResource,
    row: { status: string; since: Date; mark: { status: string; resumes: number } | null },
    more: Partial<StuckWork>,
  ): StuckDecision {
    const key = statusKey(row.status, more.migrationStatus ?? null);
    const work: StuckWork = {
      resource,
      status: row.status,
      idleMs: pass.now.getTime() - row.since.getTime(),
      worker: 'unplaced',
      jobInputs: false,
      resumes: row.mark !== null && row.mark.status === key ? row.mark.resumes : 0,
      ...more,
    };
    return decideStuck(work, {
      stuckAfterMs: this.config.stuckAfterSeconds * 1000,
      maxResumes: this.config.maxResumes,
    });
  }

  workerOf(pass: Pass, host: string | null): WorkerState {
    if (host === null) return 'unplaced';
    return pass.workers.get(backendOfPool(host)) === true ? 'alive' : 'down';
  }

  async resume(
    pass: Pass,
    em: EntityManager,
    resource: ReconciledResource,
    id: string,
    key: string,
    job: RecoveryJob,
    reason: string,
  ): Promise<void> {
    await this.outbox.add(em, {
      destination: 'jobs',
      queue: job.queue,
      job: { id: job.id, name: job.name, data: job.data, attempts: job.attempts, backoff: job.backoff },
      partitionKey: id,
    });
    await this.reconcile.markResumed(em, resource, id, key, pass.now);
    pass.resumed++;
    this.report('resumed', resource, id, key, reason, null);
  }

  async ended(
    pass: Pass,
    em: EntityManager,
    m: {
      resource: ReconciledResource;
      id: string;
      projectId: string;
      from: string;
      to: string;
      messageType: MessageResourceType | null;
    },
    d: Extract<StuckDecision, { action: 'end' }>,
  ): Promise<void> {
    if (d.message !== null && m.messageType !== null) {
      await this.messages.record(em, {
        projectId: m.projectId,
        requestId: null,
        resourceType: m.messageType,
        resourceUuid: m.id,
        action: d.message.action,
        detail: d.message.detail,
        now: pass.now,
      });
    }
    await this.reconcile.forgetMark(em, m.resource, m.id);
    pass.ended++;
    this.report('ended', m.resource, m.id, m.from, d.reason, m.to);
  }

  /** The JSON warn line of every resolution: resource, id, what was done and why. */
  report(
    outcome: 'resumed' | 'ended',
    resource: string,
    id: string,
    status: string,
    reason: string,
    to: string | null,
  ): void {
    this.log.warn(
      JSON.stringify({
        event: 'block-storage.reconcile',
        outcome,
        resource,
        id,
        status,
        ...(to === null ? {} : { to }),
        reason,
      }),
    );
  }
}
