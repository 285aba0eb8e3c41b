import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import {
  IMPORT_REQUIRED_FIELDS,
  backupObjectPrefix,
  decodeVolumeMeta,
  encodeVolumeMeta,
  backupQuotaDeltas,
  parseBackupCodec,
  progressPercent,
  progressStepReached,
  VOLUME_OPERATIONS,
  BACKUP_OPERATIONS,
} from '@osc/block-storage-domain';
import {
  BackupPolicyRepository,
  BackupRepository,
  QuotaRepository,
  recordProgress,
  Settlements,
  VolumeRepository,
  type StoredBackup,
} from '@osc/block-storage-persistence';
import {
  BACKUP_DELETE_JOB,
  BACKUP_IMPORT_JOB,
  BACKUP_JOB_NAMES,
  backupJobQueue,
  type BackupJob,
  type BackupJobPayloads,
  type BackupRestoreJob,
} from '@osc/contracts';
import { InvalidInputError } from '@osc/errors';
import { type JobQueue, type Worker } from '@osc/messaging';
import { CLOCK, DATA_SOURCE, JOB_QUEUE, type Clock } from '@osc/platform';
import { ensureDir, GIB } from '../volume-backend/sparse-file';
import { VOLUME_BACKEND_CONFIG, type VolumeBackendConfig } from '../volume-backend/volume-backend.config';
import { VOLUME_PATHS, type VolumePaths } from '../volume-backend/volume-paths';
import { JobTable } from '../jobs/job-table';
import {
  BackupCancelledError,
  readManifest,
  sameBlocksAs,
  writeBackup,
  type BackupLocation,
  type ProgressReport,
} from './backup-engine';
import { BackupRestorer } from './backup-restorer';
import { BACKUP_CONFIG, type BackupConfig } from './backup.config';
import type { BackupStore } from './stores';
import { productMetrics } from '@osc/telemetry';

/** Stored wire timestamps (`YYYY-MM-DDTHH:MM:SS.ffffff`, UTC) back to dates. */
const toDate = (t: Date | string): Date => (t instanceof Date ? t : new Date(`${t}Z`));

const reasonOf = (err: unknown): string => (err instanceof Error ? err.message : String(err)).slice(0, 1000);

/**
 * Backup jobs of one back end (spec 7.9, 8.3, 11): create, restore, delete and import, on the
 * backup queue of the back end whose volume files this worker holds. Every handler first checks
 * the row is still in the status the job expects, so a redelivered job does nothing; outcomes are
 * written in one transaction (status, quota settlement, source status) before the job is acked.
 * On start, work interrupted by a restart is failed or resumed (BS-8.3.6).
 */
@Injectable()
export class BackupService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly log = new Logger('backup');
  private readonly backups = new BackupRepository();
  private readonly volumes = new VolumeRepository();
  private readonly settlements = new Settlements();
  private readonly quotas = new QuotaRepository();
  private readonly policies = new BackupPolicyRepository();
  private readonly store: BackupStore;
  private worker: Worker | null = null;

  constructor(
    @Inject(DATA_SOURCE) private readonly db: DataSource,
    @Inject(JOB_QUEUE) private readonly jobs: JobQueue,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(BACKUP_CONFIG) private readonly config: BackupConfig,
    @Inject(VOLUME_BACKEND_CONFIG) private readonly volumeBackend: VolumeBackendConfig,
    @Inject(VOLUME_PATHS) private readonly paths: VolumePaths,
    private readonly restorer: BackupRestorer,
  ) {
    this.store = restorer.store;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.store.driver === 'posix') await ensureDir(this.config.store.directory);
    const table = this.jobTable();
    await this.recover();
    this.worker = await this.jobs.process(backupJobQueue(this.paths.backend), (job) => table.run(job), {
      concurrency: this.config.concurrency,
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.close();
  }

  /**
   * BS-8.3.6: a backup left `creating` by a restart fails (its source returns to its previous
   * status, its quota stays counted until it is deleted); an import or a delete is driven again; a
   * restore ends with the backup `available` and the target volume `error_restoring`.
   */
  async recover(): Promise<void> {
    const queue = backupJobQueue(this.paths.backend);
    for (const b of await this.backups.listOnHost(this.db, this.paths.backend, [
      'creating',
      'restoring',
      'deleting',
    ])) {
      if (b.status === 'creating' && b.importRecord !== null) {
        await this.jobs.add(queue, {
          id: `backup-import-recover-${b.id}`,
          name: BACKUP_IMPORT_JOB,
          data: { backupId: b.id },
        });
      } else if (b.status === 'creating') {
        await this.failCreate(b, 'The backup was interrupted by a restart of the backup service.');
      } else if (b.status === 'deleting') {
        await this.jobs.add(queue, {
          id: `backup-delete-${b.id}`,
          name: BACKUP_DELETE_JOB,
          data: { backupId: b.id },
        });
      } else {
        await this.db.transaction((em) =>
          this.settlements.endBackupRestore(
            em,
            b,
            'The restore was interrupted by a restart of the backup service.',
            this.clock.now(),
          ),
        );
      }
    }
  }

  /** One handler per backup job name (`BackupJobPayloads`); a missing one stops the start. */
  private jobTable(): JobTable<BackupJobPayloads> {
    return new JobTable<BackupJobPayloads>('backup service', BACKUP_JOB_NAMES, {
      'backup.create': (data) => this.create(data),
      'backup.restore': (data) => this.restore(data),
      'backup.delete': (data) => this.remove(data),
      'backup.import': (data) => this.import(data),
    });
  }

  private valid(container: string): boolean {
    try {
      this.store.checkContainer(container);
      return true;
    } catch {
      return false;
    }
  }

  private location(b: StoredBackup): BackupLocation | null {
    return this.restorer.location(b);
  }

  /** The volume (or snapshot) goes back to the status it had before the backup (BS-8.1.5). */
  private releaseSource(em: EntityManager, b: StoredBackup): Promise<void> {
    return this.settlements.releaseBackupSource(em, b, this.clock.now());
  }

  /**
   * The progress report of a running create or restore: stores the percent (and bumps updated_at,
   * which the reconciler watches) while the backup is still in `status`, tells the story at each
   * 10% step, and answers false once the backup left that status (the job must stop).
   */
  private progressOf(
    b: StoredBackup,
    status: 'creating' | 'restoring',
    restoreVolumeId: string | null,
  ): ProgressReport {
    let last = 0;
    return async (done, total) => {
      const percent = progressPercent(done, total);
      if (!(await this.backups.reportProgress(this.db, b.id, status, this.clock.now(), percent)))
        return false;
      const step = progressStepReached(last, percent);
      last = percent;
      if (step !== null)
        recordProgress({
          operation: status === 'creating' ? 'create' : 'restore',
          backupId: b.id,
          volumeId: b.volumeId,
          snapshotId: b.snapshotId,
          projectId: b.projectId,
          restoreVolumeId,
          progress: step,
        });
      return true;
    };
  }

  private async failCreate(b: StoredBackup, reason: string): Promise<void> {
    this.log.warn(`backup ${b.id} failed: ${reason}`);
    await this.db.transaction((em) => this.settlements.failBackupCreate(em, b, reason, this.clock.now()));
  }

  private async create(data: BackupJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'creating' || b.importRecord !== null) return;
    const container = b.container ?? this.store.defaultContainer(b.id);
    const prefix = backupObjectPrefix(this.store.kind, {
      volumeId: b.volumeId,
      backupId: b.id,
      availabilityZone: b.availabilityZone,
      at: toDate(b.createdAt),
    });
    let objectCount: number;
    // A policy's backup that would change nothing is dropped when the policy says so (skip_unchanged):
    // the backup the volume still equals.
    let unchangedSince: string | null = null;
    let droppingPolicy: string | null = null;
    const started = process.hrtime.bigint();
    try {
      this.store.checkContainer(container);
      // The driver and container are the backup's from the start, as Cinder records them, so a
      // failed backup shows where it was going.
      await this.backups.update(this.db, b.id, { service: this.store.driverId, container }, this.clock.now());
      const v = await this.volumes.findById(this.db, b.volumeId, null);
      if (!v) throw new InvalidInputError(`Volume ${b.volumeId} no longer exists.`);
      const parent = b.parentId === null ? null : await this.backups.findById(this.db, b.parentId, null);
      const parentLocation = parent ? this.location(parent) : null;
      if (b.parentId !== null && parentLocation === null)
        throw new InvalidInputError('The parent backup is gone or incomplete. Do a full backup.');
      const volumeMeta = encodeVolumeMeta(v);
      droppingPolicy = b.snapshotId === null ? await this.policies.skippingPolicyOf(this.db, b.id) : null;
      // The job starts at 0% (a re-run job starts over).
      if (!(await this.backups.reportProgress(this.db, b.id, 'creating', this.clock.now(), 0)))
        throw new BackupCancelledError('The backup was cancelled.');
      const source =
        b.snapshotId !== null ? this.paths.snapshotFile(b.snapshotId) : this.paths.volumeFile(b.volumeId);
      const params = { chunkSize: this.config.chunkSize, blockSize: this.config.blockSize };
      if (droppingPolicy !== null && b.parentId === null) {
        // A full: compare with the volume's newest backup first (read only, stops at a difference).
        const last = await this.backups.latestAvailable(this.db, b.projectId, b.volumeId, null);
        const base = last && this.location(last);
        if (
          last &&
          base &&
          (await sameBlocksAs({
            store: this.store,
            workers: this.restorer.workers,
            params,
            source,
            bytes: b.size * GIB,
            base,
          }))
        ) {
          await this.dropUnchanged(b, droppingPolicy, last.id);
          return;
        }
      }
      const written = await writeBackup({
        store: this.store,
        workers: this.restorer.workers,
        depth: this.config.pipelineDepth,
        params,
        codec: parseBackupCodec(this.config.compression),
        source,
        bytes: b.size * GIB,
        location: { container, prefix },
        description: {
          backupId: b.id,
          volumeId: b.volumeId,
          name: b.name,
          description: b.description,
          createdAt: String(b.createdAt),
          parentId: b.parentId,
        },
        volumeMeta,
        parent: parentLocation,
        // Each chunk reports progress (the reconciler leaves a moving backup alone); a backup no
        // longer `creating` was cancelled (force-deleted or ended by the reconciler).
        progress: this.progressOf(b, 'creating', null),
        dropUnchanged: droppingPolicy !== null,
      });
      objectCount = written.objectCount;
      if (written.unchanged === true) unchangedSince = b.parentId;
    } catch (err) {
      if (err instanceof BackupCancelledError) {
        await this.db.transaction((em) => this.releaseSource(em, b));
        return;
      }
      await this.store.deletePrefix(container, prefix).catch(() => undefined);
      await this.failCreate(b, `Backup failed: ${reasonOf(err)}`);
      return;
    }
    if (unchangedSince !== null && droppingPolicy !== null) {
      await this.dropUnchanged(b, droppingPolicy, unchangedSince);
      return;
    }
    observeBackup('create', b.size * GIB, started);
    let done = false;
    await this.db.transaction(async (em) => {
      done = await this.backups.transition(em, b.id, BACKUP_OPERATIONS.created, this.clock.now(), {
        object_count: objectCount,
        service_metadata: prefix,
        container,
        service: this.store.driverId,
      });
      if (done) {
        await this.quotas.settleReservation(em, b.id, true);
        if (b.parentId !== null) await this.backups.addDependent(em, b.parentId, 1);
      }
      await this.releaseSource(em, b);
    });
    // Deleted (forced) while the last objects were written: nothing refers to them any more.
    if (!done && (await this.backups.findById(this.db, b.id, null)) === null)
      await this.store.deletePrefix(container, prefix);
  }

  /**
   * A policy's incremental in which nothing changed since its parent: nothing was stored, so the row
   * goes (no empty backup in the owner's list), its quota reservation is given back, the volume returns
   * to its status, and the policy's last run says why this volume has no new backup.
   */
  private async dropUnchanged(b: StoredBackup, policyId: string, since: string): Promise<void> {
    const reason = `unchanged since backup ${since}: no backup kept (skip_unchanged)`;
    await this.db.transaction(async (em) => {
      if (await this.backups.softDelete(em, b.id, ['creating'], this.clock.now())) {
        await this.quotas.settleReservation(em, b.id, false);
        await this.policies.recordDropped(em, policyId, b.id, b.volumeId, reason);
      }
      await this.releaseSource(em, b);
    });
    this.log.log(`backup ${b.id} of volume ${b.volumeId} by policy ${policyId}: volume ${reason}`);
  }

  private async restore(data: BackupRestoreJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'restoring' || b.restoreVolumeId !== data.volumeId) return;
    const v = await this.volumes.findById(this.db, data.volumeId, null);
    if (!v || v.status !== 'restoring-backup') {
      await this.backups.transition(this.db, b.id, BACKUP_OPERATIONS.restored, this.clock.now());
      return;
    }
    let volumeMeta: string | null = null;
    try {
      if (!(await this.backups.reportProgress(this.db, b.id, 'restoring', this.clock.now(), 0)))
        throw new BackupCancelledError('The restore was cancelled.');
      const started = process.hrtime.bigint();
      volumeMeta = await this.restorer.restore(
        b,
        this.paths.volumeFile(v.id),
        data.newVolume,
        this.progressOf(b, 'restoring', v.id),
      );
      observeBackup('restore', b.size * GIB, started);
    } catch (err) {
      this.log.warn(`restoring backup ${b.id} into volume ${v.id} failed: ${reasonOf(err)}`);
      await this.db.transaction(async (em) => {
        await this.volumes.transition(
          em,
          v.id,
          data.newVolume ? VOLUME_OPERATIONS.restoreIntoNewFailed : VOLUME_OPERATIONS.restoreFailed,
          this.clock.now(),
          {
            error_reason: `Restoring backup ${b.id} failed: ${reasonOf(err)}`.slice(0, 1000),
          },
        );
        await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restored, this.clock.now());
      });
      return;
    }
    const set: Record<string, unknown> = {};
    // BS-11.7: the backed-up volume's user metadata and bootable flag come back with its bytes; an
    // auto-created target also takes its name and description. Unreadable volume_meta: bytes only.
    const meta = volumeMeta === null ? null : decodeVolumeMeta(volumeMeta);
    if (meta !== null) {
      if (Object.keys(meta.metadata).length > 0)
        set['metadata'] = JSON.stringify({ ...v.metadata, ...meta.metadata });
      if (meta.bootable) set['bootable'] = true;
      if (data.newVolume && v.name === `restore_backup_${b.id}`) {
        if (meta.name !== null) set['display_name'] = meta.name;
        if (meta.description !== null) set['display_description'] = meta.description;
      }
    }
    await this.db.transaction(async (em) => {
      await this.volumes.transition(em, v.id, VOLUME_OPERATIONS.restored, this.clock.now(), set);
      await this.backups.transition(em, b.id, BACKUP_OPERATIONS.restored, this.clock.now());
    });
  }

  private async remove(data: BackupJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'deleting') return;
    const loc = this.location(b);
    try {
      if (loc !== null) await this.store.deletePrefix(loc.container, loc.prefix);
      else if (b.importRecord === null) {
        // Never finished: remove whatever a cancelled create left.
        const prefix = backupObjectPrefix(this.store.kind, {
          volumeId: b.volumeId,
          backupId: b.id,
          availabilityZone: b.availabilityZone,
          at: toDate(b.createdAt),
        });
        const container = b.container ?? this.store.defaultContainer(b.id);
        // A container this store refuses held nothing: the create failed before writing.
        if (this.valid(container)) await this.store.deletePrefix(container, prefix);
      }
    } catch (err) {
      this.log.warn(`deleting backup ${b.id} failed: ${reasonOf(err)}`);
      await this.backups.transition(this.db, b.id, BACKUP_OPERATIONS.deleteFailed, this.clock.now(), {
        fail_reason: reasonOf(err),
      });
      return;
    }
    await this.db.transaction(async (em) => {
      const removed = await this.backups.softDelete(em, b.id, ['deleting'], this.clock.now());
      if (!removed) return;
      // A reservation still open (force-deleted while creating or importing) is counted first,
      // so the release below gives back exactly what the backup took.
      await this.quotas.settleReservation(em, b.id, true);
      await this.quotas.apply(em, b.projectId, backupQuotaDeltas(b.size, -1), 'in_use', false);
      if (b.parentId !== null) await this.backups.addDependent(em, b.parentId, -1);
      if (loc === null && b.importRecord === null) await this.releaseSource(em, b);
    });
  }

  private async import(data: BackupJob): Promise<void> {
    const b = await this.backups.findById(this.db, data.backupId, null);
    if (!b || b.status !== 'creating' || b.importRecord === null) return;
    const r = b.importRecord;
    const str = (k: string): string | null => (typeof r[k] === 'string' ? (r[k] as string) : null);
    let set: Record<string, unknown>;
    try {
      const missing = IMPORT_REQUIRED_FIELDS.filter((k) => !(k in r));
      if (missing.length > 0)
        throw new InvalidInputError(`The backup record is missing ${missing.join(', ')}.`);
      const container = str('container') ?? this.store.defaultContainer(String(r['id']));
      this.store.checkContainer(container);
      const prefix = str('service_metadata');
      if (prefix === null) throw new InvalidInputError('The backup record has no service_metadata.');
      const { objects } = await readManifest(this.store, { container, prefix });
      const uuidOrNull = (k: string): string | null => {
        const v = str(k);
        return v !== null && /^[0-9a-f-]{36}$/i.test(v) ? v : null;
      };
      const ts = str('data_timestamp');
      set = {
        volume_id: uuidOrNull('volume_id') ?? b.volumeId,
        display_name: str('display_name'),
        display_description: str('display_description'),
        container,
        service_metadata: prefix,
        object_count: objects.length,
        parent_id: uuidOrNull('parent_id'),
        snapshot_id: uuidOrNull('snapshot_id'),
        encryption_key_id: uuidOrNull('encryption_key_id'),
        metadata: typeof r['metadata'] === 'object' && r['metadata'] !== null ? r['metadata'] : {},
        service: this.store.driverId,
        availability_zone: this.volumeBackend.availabilityZone,
        host: this.paths.backend,
        import_record: null,
      };
      if (ts !== null && !Number.isNaN(toDate(ts).getTime())) set['data_timestamp'] = toDate(ts);
    } catch (err) {
      await this.db.transaction(async (em) => {
        if (
          await this.backups.transition(em, b.id, BACKUP_OPERATIONS.createFailed, this.clock.now(), {
            fail_reason: `Import failed: ${reasonOf(err)}`.slice(0, 1000),
            import_record: null,
          })
        ) {
          await this.quotas.settleReservation(em, b.id, true);
        }
      });
      return;
    }
    await this.db.transaction(async (em) => {
      if (await this.backups.transition(em, b.id, BACKUP_OPERATIONS.created, this.clock.now(), set))
        await this.quotas.settleReservation(em, b.id, true);
    });
  }
}

/** A finished backup create or restore: its volume bytes and throughput (docs/metrics.md). */
function observeBackup(operation: 'create' | 'restore', bytes: number, started: bigint): void {
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  productMetrics.backupBytes.labels(operation).inc(bytes);
  if (seconds > 0) productMetrics.backupThroughput.labels(operation).observe(bytes / seconds);
}
