import { randomUUID } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import {
  BACKUP_DRIVER_IDS,
  VOLUME_OPERATIONS,
  advanceBackupPolicy,
  chooseBackupKind,
  chooseRetention,
  parseBackupSchedule,
} from '@osc/block-storage-domain';
import { BACKUP_REBASE_JOB, backupRebaseQueue, type BackupRebaseJob } from '@osc/contracts';
import {
  BackupPolicyRepository,
  BackupRepository,
  PoolRepository,
  VolumeRepository,
  startBackup,
  startBackupDelete,
  type StoredBackup,
  type StoredBackupPolicy,
} from '@osc/block-storage-persistence';
import { AppError } from '@osc/errors';
import type { OutboxItem, OutboxWriter } from '@osc/messaging';
import type { Clock } from '@osc/platform';
import { fireUntilDrained } from '../due-poller';

/** What one committed firing of a policy did. */
export interface FiredBackupPolicy {
  readonly policyId: string;
  readonly scheduledAt: Date;
  /** Backups started (one per target volume that could be backed up). */
  readonly backupIds: readonly string[];
  /** Target volumes not backed up this time, with why. */
  readonly skipped: readonly { readonly volumeId: string; readonly reason: string }[];
}

/** What one committed retention pass of a policy did. */
export interface RetentionPass {
  readonly policyId: string;
  readonly rebased: readonly string[];
  readonly deleted: readonly string[];
}

export interface BackupPolicyFiringOptions {
  /** Policies claimed and fired per transaction. */
  readonly batchSize: number;
  /** A back end whose pool stats are older than this has no live worker: its volumes are skipped (POST /backups answers 503). */
  readonly serviceDownSeconds: number;
  readonly log?: (level: 'warn' | 'error', message: string) => void;
  readonly onFired?: (fired: readonly FiredBackupPolicy[]) => void;
  readonly onRetention?: (pass: RetentionPass) => void;
  /** Runs inside a firing's transaction just before it commits (crash tests kill the session here). */
  readonly beforeCommit?: (tx: { query(sql: string, params?: unknown[]): Promise<unknown> }) => Promise<void>;
}

/** The service a backup row carries until its worker records its own driver, as POST /backups writes it. */
const DRIVER = BACKUP_DRIVER_IDS.posix;
const backendOf = (host: string): string => host.split('#', 1)[0] ?? host;

/**
 * Fires due backup policies (ours, issue 21 item 3) exactly once across any number of replicas, the
 * way workflow cron triggers fire: each batch is one transaction that claims due rows with
 * `FOR UPDATE SKIP LOCKED`, starts each target volume's backup through the same path as POST
 * /backups (source compare-and-set, quota reservation, row, worker job in the outbox) and advances
 * `next_run_at`; all of it commits together or not at all. A replica dying mid-batch leaves the
 * rows due for another one, and no backup or job behind.
 *
 * Retention runs in passes of its own (a backup counts once its worker made it `available`): one
 * transaction per policy, holding the same row lock, asks the pure `chooseRetention` what goes;
 * kept incrementals whose parent goes get a rebase job (the worker merges the chain into a full in
 * the store), and backups nothing depends on any more are deleted through DELETE /backups' path.
 * Everything it does is a compare-and-set or a deduplicated job, so passes repeat safely.
 */
export class BackupPolicyFiring {
  private readonly policies = new BackupPolicyRepository();
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly pools = new PoolRepository();

  constructor(
    private readonly db: DataSource,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    private readonly options: BackupPolicyFiringOptions,
  ) {}

  /** Fires every policy due now; returns how many fired. */
  fireDue(): Promise<number> {
    return fireUntilDrained(() => this.fireBatch(), this.options.batchSize);
  }

  /** The earliest next run of an enabled policy (the poller sleeps until then). */
  earliestDue(): Promise<Date | null> {
    return this.policies.earliestDue(this.db);
  }

  async fireBatch(): Promise<number> {
    const fired: FiredBackupPolicy[] = [];
    await this.db.transaction(async (em) => {
      fired.length = 0;
      const now = this.clock.now();
      const due = await this.policies.claimDue(em, now, this.options.batchSize);
      if (due.length === 0) return;
      const since = new Date(now.getTime() - this.options.serviceDownSeconds * 1000);
      const live = new Set((await this.pools.listFresh(em, since)).map((p) => p.backend));
      const items: OutboxItem[] = [];
      for (const p of due) {
        const backupIds: string[] = [];
        const skipped: { volumeId: string; reason: string }[] = [];
        for (const volumeId of await this.policies.targetVolumeIds(em, p)) {
          // A volume that cannot be backed up now (state, quota...) must not undo the others: savepoint.
          await em.query('SAVEPOINT backup_policy_volume');
          try {
            const started = await this.startOne(em, p, volumeId, live, now);
            if (typeof started === 'string') skipped.push({ volumeId, reason: started });
            else {
              items.push(started.job);
              backupIds.push(started.backupId);
            }
            await em.query('RELEASE SAVEPOINT backup_policy_volume');
          } catch (err) {
            if (!(err instanceof AppError)) throw err;
            await em.query('ROLLBACK TO SAVEPOINT backup_policy_volume');
            skipped.push({ volumeId, reason: err.message });
          }
        }
        await this.policies.advance(
          em,
          p.id,
          advanceBackupPolicy(parseBackupSchedule(p.schedule), p.nextRunAt, now),
          now,
          {
            at: now.toISOString(),
            backups: backupIds,
            skipped: skipped.map((s) => ({ volume_id: s.volumeId, reason: s.reason })),
          },
        );
        fired.push({ policyId: p.id, scheduledAt: p.nextRunAt, backupIds, skipped });
        for (const s of skipped)
          this.options.log?.(
            'warn',
            `backup policy ${p.id}: volume ${s.volumeId} not backed up: ${s.reason}`,
          );
      }
      await this.outbox.add(em, items);
      await this.options.beforeCommit?.(em);
    });
    if (fired.length) this.options.onFired?.(fired);
    return fired.length;
  }

  /** Starts one volume's backup, or says why not. */
  private async startOne(
    em: EntityManager,
    p: StoredBackupPolicy,
    volumeId: string,
    live: ReadonlySet<string>,
    now: Date,
  ): Promise<{ backupId: string; job: OutboxItem } | string> {
    const v = await this.volumes.findById(em, volumeId, null);
    if (!v) return 'the volume is gone';
    if (v.status !== 'available' && v.status !== 'in-use') return `the volume is ${v.status}`;
    if (v.host === null) return 'the volume is not placed on a back end';
    const backend = backendOf(v.host);
    if (!live.has(backend)) return `back end ${backend} has no live backup service`;
    const kind = chooseBackupKind(await this.policies.backupsOfVolume(em, volumeId, p.id), p.fullEvery);
    const id = randomUUID();
    const backup: StoredBackup & { host: string } = {
      id,
      projectId: v.projectId,
      userId: p.userId,
      volumeId: v.id,
      snapshotId: null,
      parentId: kind.kind === 'incremental' ? kind.parentId : null,
      name: p.name,
      description: `Made by backup policy ${p.id}.`,
      status: 'creating',
      failReason: null,
      size: v.size,
      objectCount: 0,
      availabilityZone: v.availabilityZone,
      container: null,
      host: backend,
      service: DRIVER,
      serviceMetadata: null,
      numDependentBackups: 0,
      metadata: {},
      encryptionKeyId: v.encrypted ? v.encryptionKeyId : null,
      restoreVolumeId: null,
      progress: null,
      dataTimestamp: now,
      createdAt: now,
      updatedAt: null,
      volumePreviousStatus: v.status,
      importRecord: null,
      deleted: false,
    };
    // Scheduled backups of attached volumes are what operators ask for: the force flag's path.
    const operation = v.status === 'in-use' ? VOLUME_OPERATIONS.forceBackup : VOLUME_OPERATIONS.backup;
    const job = await startBackup(em, backup, { operation, status: v.status }, now);
    await this.policies.markPolicyBackup(em, id, p.id);
    return { backupId: id, job };
  }

  /** One retention pass over every policy with more available backups of a volume than it keeps. */
  async applyRetention(limit = 100): Promise<RetentionPass[]> {
    const passes: RetentionPass[] = [];
    for (const policyId of await this.policies.overRetention(this.db, limit)) {
      const pass = await this.retainOne(policyId);
      if (pass && (pass.rebased.length || pass.deleted.length)) {
        passes.push(pass);
        this.options.onRetention?.(pass);
      }
    }
    return passes;
  }

  private async retainOne(policyId: string): Promise<RetentionPass | null> {
    return this.db.transaction(async (em) => {
      const p = await this.policies.claim(em, policyId);
      if (!p) return null;
      const now = this.clock.now();
      const rebased: string[] = [];
      const deleted: string[] = [];
      const items: OutboxItem[] = [];
      for (const volumeId of await this.policies.volumesOverRetention(em, p)) {
        // A restore reading this volume's chain must not lose objects under it: a later pass goes on.
        if (await this.policies.restoreReadsVolume(em, volumeId)) continue;
        const plan = chooseRetention(await this.policies.backupsOfVolume(em, volumeId, p.id), p.retention);
        for (const r of plan.rebase) {
          const b = await this.backups.findById(em, r.id, null);
          if (!b || b.parentId === null || b.host === null || b.status !== 'available') continue;
          const data: BackupRebaseJob = { backupId: b.id, parentId: b.parentId };
          items.push({
            destination: 'jobs',
            queue: backupRebaseQueue(b.host),
            job: {
              id: `backup-rebase-${b.id}-${b.parentId}`,
              name: BACKUP_REBASE_JOB,
              data,
              // Waits for restores reading the chain back off exponentially: about an hour in all.
              attempts: 12,
              backoff: { type: 'exponential', delayMs: 1000 },
            },
            partitionKey: b.id,
          });
          rebased.push(b.id);
        }
        // Newest first: an incremental goes before its parent, which goes on a later pass once
        // nothing depends on it (DELETE /backups' rule); a rebased backup stops depending at once.
        for (const id of plan.delete) {
          const b = await this.backups.findById(em, id, null);
          if (!b) continue;
          const job = await startBackupDelete(em, b, now);
          if (job) {
            items.push(job);
            deleted.push(id);
          }
        }
      }
      await this.outbox.add(em, items);
      return { policyId: p.id, rebased, deleted };
    });
  }
}
