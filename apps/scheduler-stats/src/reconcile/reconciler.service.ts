import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { ReconcileRepository, ServiceRepository } from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';
import { BackupScan } from './backup-scan';
import { GroupScan } from './group-scan';
import { QuotaRecount } from './quota-recount';
import { Pass, type ReconcileConfig, type Scan, StuckRows } from './reconcile-pass';
import { SnapshotScan } from './snapshot-scan';
import { VolumeScan } from './volume-scan';

export type { ReconcileConfig } from './reconcile-pass';
export const RECONCILE_CONFIG = Symbol('RECONCILE_CONFIG');

/** What one pass did (tests and logs). */
export interface PassReport {
  readonly resumed: number;
  readonly ended: number;
  readonly quotaCorrections: number;
  /** Rows whose resolution failed (tried again next pass). */
  readonly failed: number;
}

/**
 * The block-storage reconciler (issue #15, ARCHITECTURE "Reconcilers"): every interval, one pass
 * (any number of scheduler-stats replicas: each row is claimed `FOR UPDATE SKIP LOCKED` and
 * decided again under the lock, and every change is a compare-and-set). It finds volumes, snapshots, backups, groups and
 * group snapshots in a transitional status idle for longer than the bound, lets the domain decide
 * (`decideStuck`) and applies the decision: the job queued again through the outbox (the same
 * recovery jobs a restarted back end queues), or the row ended in Cinder's error status by
 * compare-and-set with a user message (`/v3/{project}/messages`) and a warn log line naming the
 * resource and why. Then quota usage is recounted from the rows and corrected where it drifted.
 */
@Injectable()
export class ReconcilerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('reconciler');
  private readonly services = new ServiceRepository();
  /** The scans of a pass, in order: volumes, snapshots, backups, groups and group snapshots. */
  private readonly scans: readonly Scan[];
  private readonly quotas: QuotaRecount;
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;
  private stopped = false;
  /** Passes this replica finished (acted or skipped). */
  passes = 0;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RECONCILE_CONFIG) private readonly config: ReconcileConfig,
  ) {
    const reconcile = new ReconcileRepository();
    const rows = new StuckRows(db, outbox, config, reconcile, this.log);
    this.scans = [
      new VolumeScan(db, reconcile, rows),
      new SnapshotScan(db, reconcile, rows),
      new BackupScan(db, reconcile, rows),
      new GroupScan(db, reconcile, rows),
    ];
    this.quotas = new QuotaRecount(db, reconcile, this.log);
  }

  onApplicationBootstrap(): void {
    if (this.config.intervalSeconds > 0) this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.runPass()
        .then(() => undefined)
        .catch((e: unknown) => this.log.warn(`reconcile pass failed: ${String(e)}`))
        .finally(() => {
          this.passes++;
          this.current = null;
          this.schedule();
        });
    }, this.config.intervalSeconds * 1000);
    this.timer.unref();
  }

  /**
   * One pass. Rows are scanned without locks; each row to act on is claimed in its own
   * transaction (`FOR UPDATE SKIP LOCKED`, re-read and decided again under the lock), so replicas
   * scanning at once never both act on a row, and no lock is held while other rows are handled.
   */
  async runPass(): Promise<PassReport> {
    const now = this.clock.now();
    const pass = new Pass(now, await this.workers(this.db, now));
    for (const scan of this.scans) await scan.run(pass);
    const quotaCorrections = await this.quotas.run();
    return { resumed: pass.resumed, ended: pass.ended, quotaCorrections, failed: pass.failed };
  }

  /** `host@backend` → its cinder-volume heartbeat is fresh (the backup worker of a back end is the same process). */
  private async workers(db: DataSource, now: Date): Promise<Map<string, boolean>> {
    const since = now.getTime() - this.config.serviceDownSeconds * 1000;
    return new Map(
      (await this.services.list(db, { binary: 'cinder-volume' })).map((s) => [
        s.host,
        s.updatedAt !== null && s.updatedAt.getTime() >= since,
      ]),
    );
  }
}
