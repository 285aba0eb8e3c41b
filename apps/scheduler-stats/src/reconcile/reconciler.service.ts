import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  backendOfPool,
  backupRecoveryJob,
  decideStuck,
  migrationJobOf,
  migrationRecoveryJob,
  previousVolumeStatus,
  quotaCorrections,
  settledGroupSnapshotStatus,
  settledGroupStatus,
  snapshotRecoveryJob,
  transitionalStatuses,
  volumeRecoveryJob,
  type GroupSnapshotStatus,
  type GroupStatus,
  type MessageResourceType,
  type ReconciledResource,
  type RecoveryJob,
  type SnapshotStatus,
  type StuckDecision,
  type StuckWork,
  type VolumeStatus,
  type WorkerState,
  BACKUP_OPERATIONS,
  GROUP_SETTLEMENTS,
  GROUP_SNAPSHOT_SETTLEMENTS,
  isMigrationInFlight,
  MIGRATION_OPERATIONS,
} from '@osc/block-storage-domain';
import {
  BackupRepository,
  GroupRepository,
  GroupSnapshotRepository,
  MessageRepository,
  QuotaRepository,
  ReconcileRepository,
  ServiceRepository,
  Settlements,
  SnapshotRepository,
  VolumeRepository,
  type StuckBackupRow,
  type StuckGroupRow,
  type StuckSnapshotRow,
  type StuckVolumeRow,
} from '@osc/block-storage-persistence';
import { OutboxWriter } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, OUTBOX_WRITER, type Clock } from '@osc/platform';

export const RECONCILE_CONFIG = Symbol('RECONCILE_CONFIG');
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

/** What one pass did (tests and logs). */
export interface PassReport {
  readonly resumed: number;
  readonly ended: number;
  readonly quotaCorrections: number;
  /** Rows whose resolution failed (tried again next pass). */
  readonly failed: number;
}

const GROUP_RELEASE = [{ resource: 'groups', delta: -1 }];

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
  private readonly reconcile = new ReconcileRepository();
  private readonly settlements = new Settlements();
  private readonly volumes = new VolumeRepository();
  private readonly snapshots = new SnapshotRepository();
  private readonly backups = new BackupRepository();
  private readonly groups = new GroupRepository();
  private readonly groupSnapshots = new GroupSnapshotRepository();
  private readonly services = new ServiceRepository();
  private readonly messages = new MessageRepository();
  private readonly quotas = new QuotaRepository();
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;
  private stopped = false;
  /** Passes this replica finished (acted or skipped). */
  passes = 0;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(OUTBOX_WRITER) private readonly outbox: OutboxWriter,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(RECONCILE_CONFIG) private readonly config: ReconcileConfig,
  ) {}

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
    const query = (resource: ReconciledResource) => ({
      statuses: transitionalStatuses(resource),
      before: this.cutoff(now),
      limit: this.config.batchSize,
    });
    for (const { id } of await this.reconcile.stuckVolumes(this.db, query('volume'))) {
      await this.claim(
        pass,
        'volume',
        id,
        (em) => this.reconcile.stuckVolumes(em, { ...query('volume'), claim: id }),
        (em, v) => this.volume(pass, em, v),
      );
    }
    for (const { id } of await this.reconcile.stuckSnapshots(this.db, query('snapshot'))) {
      await this.claim(
        pass,
        'snapshot',
        id,
        (em) => this.reconcile.stuckSnapshots(em, { ...query('snapshot'), claim: id }),
        (em, sn) => this.snapshot(pass, em, sn),
      );
    }
    for (const { backup } of await this.reconcile.stuckBackups(this.db, query('backup'))) {
      await this.claim(
        pass,
        'backup',
        backup.id,
        (em) => this.reconcile.stuckBackups(em, { ...query('backup'), claim: backup.id }),
        (em, b) => this.backup(pass, em, b),
      );
    }
    for (const resource of ['group', 'group_snapshot'] as const) {
      for (const { id } of await this.reconcile.stuckGroups(this.db, resource, query(resource))) {
        await this.claim(
          pass,
          resource,
          id,
          (em) => this.reconcile.stuckGroups(em, resource, { ...query(resource), claim: id }),
          (em, g) => this.group(pass, em, resource, g),
        );
      }
    }
    const quotaCorrections = await this.recountQuotas();
    return { resumed: pass.resumed, ended: pass.ended, quotaCorrections, failed: pass.failed };
  }

  /** Claims one row (gone, changed, fresh again or held elsewhere: nothing to do) and acts on it in one transaction. */
  private async claim<T>(
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

  private cutoff(now: Date): Date {
    return new Date(now.getTime() - this.config.stuckAfterSeconds * 1000);
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

  private decide(
    pass: Pass,
    resource: ReconciledResource,
    row: { status: string; since: Date; mark: { status: string; resumes: number } | null },
    more: Partial<StuckWork>,
  ): StuckDecision {
    const statusKey = this.statusKey(row.status, more.migrationStatus ?? null);
    const work: StuckWork = {
      resource,
      status: row.status,
      idleMs: pass.now.getTime() - row.since.getTime(),
      worker: 'unplaced',
      jobInputs: false,
      resumes: row.mark !== null && row.mark.status === statusKey ? row.mark.resumes : 0,
      ...more,
    };
    return decideStuck(work, {
      stuckAfterMs: this.config.stuckAfterSeconds * 1000,
      maxResumes: this.config.maxResumes,
    });
  }

  private statusKey(status: string, migrationStatus: string | null): string {
    return isMigrationInFlight(migrationStatus) ? `migration:${status}` : status;
  }

  private async resume(
    pass: Pass,
    em: EntityManager,
    resource: ReconciledResource,
    id: string,
    statusKey: string,
    job: RecoveryJob,
    reason: string,
  ): Promise<void> {
    await this.outbox.add(em, {
      destination: 'jobs',
      queue: job.queue,
      job: { id: job.id, name: job.name, data: job.data, attempts: job.attempts, backoff: job.backoff },
      partitionKey: id,
    });
    await this.reconcile.markResumed(em, resource, id, statusKey, pass.now);
    pass.resumed++;
    this.report('resumed', resource, id, statusKey, reason, null);
  }

  private async ended(
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
  private report(
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

  private workerOf(pass: Pass, host: string | null): WorkerState {
    if (host === null) return 'unplaced';
    return pass.workers.get(backendOfPool(host)) === true ? 'alive' : 'down';
  }

  private async volume(pass: Pass, em: EntityManager, v: StuckVolumeRow): Promise<void> {
    const migration = migrationJobOf(v.adminMetadata);
    const migrating = isMigrationInFlight(v.migrationStatus);
    const job = migrating
      ? migrationRecoveryJob(v, `-reconcile-${pass.now.getTime()}`)
      : volumeRecoveryJob(v, v, `-reconcile-${pass.now.getTime()}`);
    const holderLive =
      v.status === 'backing-up' ? v.backupLive : v.status === 'restoring-backup' ? v.restoreLive : undefined;
    const d = this.decide(pass, 'volume', v, {
      migrationStatus: v.migrationStatus,
      worker: this.workerOf(pass, migrating ? (migration?.destination ?? null) : v.host),
      jobInputs: job !== null,
      holderLive,
    });
    const statusKey = this.statusKey(v.status, v.migrationStatus);
    if (d.action === 'leave') return;
    if (d.action === 'resume' && job !== null)
      return this.resume(pass, em, 'volume', v.id, statusKey, job, d.reason);
    if (d.action !== 'end') return;
    const reason = `Ended by the reconciler: ${d.reason}.`;
    let to: string;
    let done: boolean;
    if (migrating) {
      to =
        migration?.previousStatus ??
        (v.status === 'retyping' || v.status === 'maintenance' ? previousVolumeStatus(v.attached) : v.status);
      done = migration
        ? await this.settlements.failMigration(em, v.id, migration, pass.now)
        : await this.volumes.transitionMigration(
            em,
            v.id,
            MIGRATION_OPERATIONS.fail,
            { from: v.status as VolumeStatus, to: to as VolumeStatus },
            pass.now,
          );
    } else if (v.status === 'extending') {
      to = 'error_extending';
      done = await this.settlements.failVolumeExtend(em, v.id, reason, pass.now);
    } else {
      to = d.to === 'previous' ? previousVolumeStatus(v.attached) : d.to;
      const errored = to.startsWith('error');
      done = await this.volumes.compareAndSetStatus(
        em,
        v.id,
        [v.status as VolumeStatus],
        to as VolumeStatus,
        pass.now,
        errored ? { error_reason: reason.slice(0, 1000) } : {},
      );
    }
    if (done)
      await this.ended(
        pass,
        em,
        { resource: 'volume', id: v.id, projectId: v.projectId, from: statusKey, to, messageType: 'VOLUME' },
        d,
      );
  }

  private async snapshot(pass: Pass, em: EntityManager, s: StuckSnapshotRow): Promise<void> {
    const job = snapshotRecoveryJob(s, `-reconcile-${pass.now.getTime()}`);
    const holderLive =
      s.status === 'backing-up' ? s.backupLive : s.status === 'restoring' ? s.revertLive : undefined;
    const d = this.decide(pass, 'snapshot', s, {
      worker: this.workerOf(pass, s.host),
      jobInputs: job !== null,
      holderLive,
    });
    if (d.action === 'leave') return;
    if (d.action === 'resume' && job !== null)
      return this.resume(pass, em, 'snapshot', s.id, s.status, job, d.reason);
    if (d.action !== 'end') return;
    const reason = `Ended by the reconciler: ${d.reason}.`;
    const to = d.to as SnapshotStatus;
    const set = to.startsWith('error') ? { error_reason: reason.slice(0, 1000), manage_source: null } : {};
    if (await this.snapshots.compareAndSetStatus(em, s.id, [s.status as SnapshotStatus], to, pass.now, set)) {
      await this.ended(
        pass,
        em,
        {
          resource: 'snapshot',
          id: s.id,
          projectId: s.projectId,
          from: s.status,
          to,
          messageType: 'VOLUME_SNAPSHOT',
        },
        d,
      );
    }
  }

  private async backup(pass: Pass, em: EntityManager, row: StuckBackupRow): Promise<void> {
    const b = row.backup;
    const job = backupRecoveryJob(b, `-reconcile-${pass.now.getTime()}`);
    // An import is resumable; a plain create is not (BS-8.3.6), whatever the worker's state.
    const d = this.decide(
      pass,
      'backup',
      { status: b.status, since: row.since, mark: row.mark },
      { worker: this.workerOf(pass, b.host), jobInputs: job !== null },
    );
    if (d.action === 'leave') return;
    if (d.action === 'resume' && job !== null)
      return this.resume(pass, em, 'backup', b.id, b.status, job, d.reason);
    if (d.action !== 'end') return;
    const reason = `Ended by the reconciler: ${d.reason}.`;
    const done =
      b.status === 'creating'
        ? await this.settlements.failBackupCreate(em, b, reason, pass.now)
        : b.status === 'restoring'
          ? await this.settlements.endBackupRestore(em, b, reason, pass.now)
          : await this.backups.transition(em, b.id, BACKUP_OPERATIONS.deleteFailed, pass.now, {
              fail_reason: reason.slice(0, 1000),
            });
    if (done)
      await this.ended(
        pass,
        em,
        {
          resource: 'backup',
          id: b.id,
          projectId: b.projectId,
          from: b.status,
          to: d.to,
          messageType: 'VOLUME_BACKUP',
        },
        d,
      );
  }

  private async group(
    pass: Pass,
    em: EntityManager,
    resource: 'group' | 'group_snapshot',
    g: StuckGroupRow,
  ): Promise<void> {
    if (g.pending) {
      // The members' work decides (as a read of the group would settle it); members still
      // transitional are reconciled on their own, and the group follows on a later pass.
      const outcome =
        resource === 'group'
          ? settledGroupStatus(g.status as GroupStatus, g.members)
          : settledGroupSnapshotStatus(g.status as GroupSnapshotStatus, g.members);
      if (outcome === null) return;
      let done: boolean;
      if (outcome === 'deleted') {
        done =
          resource === 'group'
            ? await this.groups.softDelete(em, g.id, ['deleting'], pass.now)
            : await this.groupSnapshots.softDelete(em, g.id, pass.now);
        if (done && resource === 'group')
          await this.quotas.apply(em, g.projectId, GROUP_RELEASE, 'in_use', false);
      } else {
        done =
          resource === 'group'
            ? await this.groups.transition(em, g.id, GROUP_SETTLEMENTS[outcome], pass.now, { pending: false })
            : await this.groupSnapshots.transition(em, g.id, GROUP_SNAPSHOT_SETTLEMENTS[outcome], pass.now, {
                pending: false,
              });
      }
      if (done) {
        pass.ended++;
        this.report('ended', resource, g.id, g.status, 'its members settled it', outcome);
      }
      return;
    }
    const d = this.decide(pass, resource, g, {});
    if (d.action !== 'end') return;
    const done =
      resource === 'group'
        ? await this.groups.compareAndSetStatus(
            em,
            g.id,
            [g.status as GroupStatus],
            d.to as GroupStatus,
            pass.now,
          )
        : await this.groupSnapshots.compareAndSetStatus(
            em,
            g.id,
            [g.status as GroupSnapshotStatus],
            d.to as GroupSnapshotStatus,
            pass.now,
          );
    // Cinder has no user-message resource type for groups: the log line is the record.
    if (done)
      await this.ended(
        pass,
        em,
        { resource, id: g.id, projectId: g.projectId, from: g.status, to: d.to, messageType: null },
        d,
      );
  }

  /** Recounts every project's usage from the rows and corrects drifted columns (a warn line each). */
  private async recountQuotas(): Promise<number> {
    let n = 0;
    for (const projectId of await this.reconcile.quotaProjects(this.db)) {
      n += await this.db.transaction((em) => this.recountProject(em, projectId));
    }
    return n;
  }

  /** One project's recount under its usage row locks; returns the number of corrected columns. */
  private async recountProject(em: EntityManager, projectId: string): Promise<number> {
    const counted = await this.reconcile.recount(em, projectId);
    const stored = await this.reconcile.lockUsages(em, projectId, Object.keys(counted));
    // Counted again under the usage locks: a change committed between the two reads is in it.
    const corrections = quotaCorrections(stored, await this.reconcile.recount(em, projectId));
    for (const c of corrections) {
      await this.reconcile.setUsage(em, projectId, c.resource, c.column, c.counted);
      this.log.warn(
        JSON.stringify({
          event: 'block-storage.quota-corrected',
          project: projectId,
          resource: c.resource,
          column: c.column,
          old: c.stored,
          new: c.counted,
        }),
      );
    }
    return corrections.length;
  }
}

/** One pass's clock reading, back-end liveness and tallies. */
class Pass {
  resumed = 0;
  ended = 0;
  failed = 0;
  constructor(
    readonly now: Date,
    readonly workers: ReadonlyMap<string, boolean>,
  ) {}
}
